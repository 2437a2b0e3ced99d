"""The foreground terminal's lines: progress and the answer by default, per-task and per-attempt bookkeeping behind --verbose."""

from __future__ import annotations

import pytest

from pluginbench.cli._progress import describe
from pluginbench.events import AttemptCached, ReadinessChecked, RunStopped, VanillaCacheChecked
from pluginbench.projections import RunState

STATE = RunState()

CASES = [
    # event, shown by default, shown with --verbose
    (ReadinessChecked(task="t1", control="oracle", ok=True, reward=1.0, cached=False), False, True),
    (ReadinessChecked(task="t1", control="nop", ok=False, reward=1.0, cached=False, reason="nop passed"), True, True),
    (VanillaCacheChecked(task="t1", key="k", cohort="vanilla/k", inputs={}, decisions=[]), False, True),
    (AttemptCached(attempt_id="t1__vanilla__r1", entry="vanilla/k/1"), False, True),
    (RunStopped(reason="Ctrl-C"), True, True),
]


@pytest.mark.parametrize(("event", "default", "verbose"), CASES, ids=lambda x: getattr(x, "type", None) or str(x))
def test_bookkeeping_lines_only_with_verbose(event: object, default: bool, verbose: bool) -> None:
    """Readiness passes, cache lookups and per-attempt cache lines print only with --verbose; a failed readiness
    control and a stop always print."""
    assert (describe(STATE, event, verbose=False) is not None) is default  # type: ignore[arg-type]
    assert (describe(STATE, event, verbose=True) is not None) is verbose  # type: ignore[arg-type]
