"""Frozen measurement profile: an observer's source hash must be declared by its observer
version (a different version or an undeclared hash is refused: broken readiness in a run,
exit 2 in ``measure``), and preparation runs each selected collector twice on the starting
source, so a collector whose two starting runs differ is broken for that task, with the reason."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pluginbench import measures
from pluginbench.actors import create_run
from pluginbench.config import load
from pluginbench.events import Measure
from pluginbench.measures import CollectorInput, Column, MeasureSpec, Readiness, ReadinessInput
from pluginbench.measures._observers import _strip, observer_refusal, observer_source
from pluginbench.measures._observers_declared import DECLARED
from tests.actors.test_supervisor import _drive
from tests.runs_helpers import events_of, write_config

ROOT = Path(__file__).parents[2]


def test_the_hash_ignores_comments_and_docstrings_but_not_code() -> None:
    """A comment or docstring edit keeps the stripped source (no new declaration needed); a code
    edit changes it."""
    base = 'def f(x):\n    """Doc."""\n    return x + 1  # one\n'
    assert _strip(base) == _strip('def f(x):\n    """Another doc,\n    two lines."""\n\n    return x + 1\n')
    assert _strip(base) != _strip('def f(x):\n    """Doc."""\n    return x + 2  # one\n')
    assert _strip('x = "kept"\n') == 'x = "kept"', "a string that is a value is code"


def test_every_registered_observer_source_is_declared_by_its_version() -> None:
    """Every registered observer's current source hash is declared by its observer version (else:
    bump observer_version, or run tools/declare_observers.py when no value can change)."""
    for spec in measures.measures():
        if spec.observer_modules:
            assert observer_refusal(spec) is None, observer_refusal(spec)
    done = subprocess.run([sys.executable, "tools/declare_observers.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "up to date" in done.stdout, done.stdout + done.stderr


def test_an_undeclared_or_differently_declared_source_and_another_version_are_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An observer whose hash no version declares is refused naming the fix; a hash another version
    declares is refused naming both versions; a run frozen at another version is refused."""
    spec = TOY_UNDECLARED
    digest = observer_source(spec)
    assert digest is not None
    refused = observer_refusal(spec)
    assert refused is not None and "declared by no observer version" in refused and "tools/declare_observers.py" in refused
    monkeypatch.setitem(DECLARED, spec.name, {"1": (digest,)})
    assert observer_refusal(spec) == (f"the 'toy_undeclared' observer source (sha256 {digest[:12]}) is declared by "
                                      "observer version 1, but this PluginBench says version 3")
    monkeypatch.setitem(DECLARED, spec.name, {"1": (digest,), "3": ("0" * 64, digest)})
    assert observer_refusal(spec) is None
    assert "froze the 'toy_undeclared' observer at version 2" in str(observer_refusal(spec, "2"))


def _ready(inp: ReadinessInput) -> Readiness:
    return Readiness("ready", None, "toy 1")


def _stable(inp: CollectorInput) -> dict[str, Measure]:
    return {"toy_stable_files": Measure(value=sum(1 for _ in inp.starting_source.iterdir()), unit="files")}


_CALLS = itertools.count(1)


def _drifting(inp: CollectorInput) -> dict[str, Measure]:
    """A collector whose value changes between two runs on the same source (a nondeterministic analyzer)."""
    return {"toy_drift": Measure(value=next(_CALLS), unit="points")}


TOY_UNDECLARED = MeasureSpec(
    name="toy_undeclared", description="A measure whose observer source no version declares.",
    columns=(Column("toy_undeclared_len", "chars", "toy len", "Length."),), observer_version="3",
    collect=_stable, check=_ready, observer_modules=("tests.measures._toy_observer",))
TOY_STABLE = MeasureSpec(
    name="toy_stable", description="Files at the starting source's root, the same on every run.",
    columns=(Column("toy_stable_files", "files", "toy files", "Files."),), observer_version="1",
    collect=_stable, check=_ready)
TOY_DRIFT = MeasureSpec(
    name="toy_drift", description="A value that changes on every run.",
    columns=(Column("toy_drift", "points", "toy drift", "Drift."),), observer_version="1",
    collect=_drifting, check=_ready)


@pytest.mark.anyio
async def test_preparation_refuses_an_undeclared_observer_and_a_collector_that_differs_on_two_starting_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Preparation marks a measure whose observer source no version declares broken on every task, and
    one whose collector gives two different values on two runs on the starting source broken with both
    values; each is then ready on no task, so the run stops before any coding, naming both reasons,
    while a deterministic collector on the same task is ready; the bound source hashes are recorded."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with measures.registered(TOY_UNDECLARED), measures.registered(TOY_STABLE), measures.registered(TOY_DRIFT):
        config = write_config(tmp_path, harness="oracle", tasks=["roman-numerals"], repeats=1, jobs=1,
                              environment={"isolation": "none"},
                              measurements=["tokens", "lines", "toy_undeclared", "toy_stable", "toy_drift"])
        rd = create_run(load(config), tmp_path / "run")
        state = await _drive(rd.root)
    events = events_of(rd.root)
    types = [e["type"] for e in events]
    assert "coding.started" not in types and "agent.launched" not in types
    assert state.failed  # type: ignore[attr-defined]
    doc = json.loads((rd.root / "measurement-readiness.json").read_text())
    rows = {r["measure"]: r for r in doc["readiness"]}
    assert rows["toy_stable"]["state"] == "ready"
    assert rows["toy_undeclared"]["state"] == "broken"
    assert "declared by no observer version" in rows["toy_undeclared"]["reason"]
    assert rows["toy_drift"]["state"] == "broken"
    assert rows["toy_drift"]["reason"].startswith("two runs of the toy_drift collector on the starting source differ "
                                                  "(toy_drift: ")
    stopping = [e for e in events if e["type"] == "run.stopping"][-1]
    assert "toy_undeclared is ready on no task" in stopping["reason"]
    assert "toy_drift is ready on no task" in stopping["reason"]
    checked = [e for e in events if e["type"] == "measurement_readiness.checked"][0]
    assert checked["observer_sources"] == {"toy_undeclared": observer_source(TOY_UNDECLARED)}
