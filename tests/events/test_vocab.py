"""Typed vocabularies: outcome, usage/measure/model status, attempt state and phase are
``Literal`` types that msgspec checks when it decodes the log and ``results.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import msgspec
import pytest

from pluginbench.errors import CorruptLogError
from pluginbench.events import (
    VOCABULARIES,
    AttemptGraded,
    AttemptState,
    Measure,
    ModelRecord,
    Outcome,
    Phase,
    Usage,
    decode,
    encode,
    read_events,
)
from pluginbench.projections import RunState
from pluginbench.projections._results_schema import AttemptRow, MeasureValue, Tokens


def test_every_vocabulary_value_has_exactly_one_meaning() -> None:
    """Each vocabulary's meanings cover its Literal's values, no more and no fewer."""
    assert set(VOCABULARIES) == {"outcome", "usage-status", "measure-status", "attempt-state", "phase", "model-status"}
    for name, (values, meanings) in VOCABULARIES.items():
        assert values, name
        assert list(meanings) == list(values), f"{name}: meanings {list(meanings)} != values {list(values)}"
        assert all(m.strip() for m in meanings.values()), name


def _graded(outcome: str) -> bytes:
    return json.dumps({"type": "attempt.graded", "seq": 1, "at": "2026-01-01T00:00:00.000Z",
                       "attempt_id": "t__vanilla__r1", "outcome": outcome, "reward": 1.0,
                       "reason": None}).encode()


@pytest.mark.parametrize("outcome", list(get_args(Outcome)))
def test_every_outcome_decodes(outcome: str) -> None:
    """Each outcome of the vocabulary round-trips through the event codec."""
    event = decode(_graded(outcome))
    assert isinstance(event, AttemptGraded) and event.outcome == outcome
    assert decode(encode(event)) == event


@pytest.mark.parametrize("payload, field", [
    (_graded("passed"), "outcome"),
    (json.dumps({"type": "agent.exited", "seq": 1, "at": "x", "attempt_id": "a", "exit_code": 0,
                 "timed_out": False, "coding_seconds": 1.0, "usage": {"status": "approximately"}}).encode(), "status"),
])
def test_a_value_outside_the_vocabulary_is_refused_on_decode(payload: bytes, field: str) -> None:
    """An event whose outcome or usage status is not in its vocabulary does not decode."""
    with pytest.raises(msgspec.ValidationError, match=field):
        decode(payload)


def test_value_types_refuse_unknown_statuses() -> None:
    """Usage, Measure and ModelRecord statuses outside their vocabularies are refused by msgspec."""
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"status": "roughly"}, Usage)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"value": 3, "unit": "lines", "status": "guessed"}, Measure)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"status": "several", "model": None}, ModelRecord)
    assert msgspec.convert({"value": None, "unit": "lines", "status": "unknown", "reason": "r"}, Measure).status == "unknown"


def test_a_log_line_with_an_unknown_outcome_is_refused_as_corrupt(tmp_path: Path) -> None:
    """A complete log line whose outcome is outside the vocabulary is refused, naming the line."""
    log = tmp_path / "events.jsonl"
    good = json.dumps({"type": "run.failed", "seq": 2, "at": "x", "error": "e"}).encode()
    log.write_bytes(_graded("win") + b"\n" + good + b"\n")
    with pytest.raises(CorruptLogError, match="line 1"):
        read_events(log)


def _field_values(struct: type[Any], name: str) -> set[str]:
    info = msgspec.inspect.type_info(struct)
    field = next(f for f in info.fields if f.name == name)  # type: ignore[attr-defined]
    t = field.type
    while isinstance(t, msgspec.inspect.Metadata):
        t = t.type
    types = t.types if isinstance(t, msgspec.inspect.UnionType) else (t,)
    return {v for x in types if isinstance(x, msgspec.inspect.LiteralType) for v in x.values}


def test_results_json_uses_the_same_vocabularies() -> None:
    """results.json's outcome, state, token and measure statuses are the log's vocabularies, checked on decode."""
    assert _field_values(AttemptRow, "outcome") == set(get_args(Outcome))
    assert _field_values(AttemptRow, "state") == set(get_args(AttemptState))
    assert _field_values(Tokens, "status") == set(VOCABULARIES["usage-status"][0])
    assert _field_values(MeasureValue, "status") == set(VOCABULARIES["measure-status"][0])
    with pytest.raises(msgspec.ValidationError, match="status"):
        msgspec.convert({"value": 1, "unit": "lines", "status": "approx", "reason": None}, MeasureValue)


def test_the_run_phase_is_in_the_phase_vocabulary() -> None:
    """A fresh run state's phase is one of the Phase values."""
    assert RunState().phase in get_args(Phase)
