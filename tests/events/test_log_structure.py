"""The log's own structure is checked before any fold: versions, one run.created, known attempts."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pluginbench.errors import CorruptLogError
from pluginbench.events import (
    AttemptDiscarded,
    AttemptStarted,
    RevisionMeasured,
    Usage,
    check_structure,
    stamp,
)
from tests.actors.test_decide import created

AID = "t0__vanilla__r1"


def _log(*events: object) -> list:
    return [stamp(e, seq=i, at="x") for i, e in enumerate(events, 1)]  # type: ignore[arg-type]


def test_a_sound_log_passes_with_derived_attempts_and_reference_measures() -> None:
    """A replacement named by attempt.discarded is known from then on; a reference measure names its task, not an attempt."""
    check_structure(_log(
        created(),
        AttemptStarted(attempt_id=AID, slot=0, task="t0", arm="vanilla", repeat=1),
        AttemptDiscarded(attempt_id=AID, slot=0, replaced_by=AID + "~2", reason="x",
                         usage=Usage(status="unknown", reason="x")),
        AttemptStarted(attempt_id=AID + "~2", slot=0, task="t0", arm="vanilla", repeat=1),
        RevisionMeasured(revision="m", attempt_id="t0", measures={}, stage="reference"),
    ), Path("events.jsonl"))


@pytest.mark.parametrize("bad, needle", [
    (AttemptStarted(attempt_id="ghost", slot=0, task="t0", arm="vanilla", repeat=1), "line 2 (attempt.started) names attempt 'ghost'"),
    (msgspec.structs.replace(AttemptStarted(attempt_id=AID, slot=0, task="t0", arm="vanilla", repeat=1), v=99),
     "line 2 (attempt.started) has event version v=99"),
    (created(), "line 2 is a second run.created"),
    (RevisionMeasured(revision="m", attempt_id="ghost", measures={}), "names attempt 'ghost'"),
])
def test_a_structural_fault_is_refused_naming_its_line(bad: object, needle: str) -> None:
    """An unknown attempt, an unknown version or a second run.created raises CorruptLogError naming the line."""
    with pytest.raises(CorruptLogError) as info:
        check_structure(_log(created(), bad), Path("events.jsonl"))
    assert needle in info.value.message and info.value.field is not None and info.value.field.startswith("line 2")
