"""Shared helpers for the code-quality measure tests: a CollectorInput over a fixture."""

from __future__ import annotations

from pathlib import Path

from pluginbench.harness_registry import harness_class
from pluginbench.measures import CollectorInput

QUALITY = Path(__file__).resolve().parents[1] / "data" / "quality"


def fixture_input(tmp: Path, name: str, *, patch: str | None = None, harness: str = "simulated",
                  start: Path | None = None) -> CollectorInput:
    """The collector input of the ``name`` fixture's submission (or ``patch``)."""
    d = QUALITY / name
    attempt = tmp / "attempt"
    return CollectorInput(
        attempt_id="t__vanilla__r1", task="t", arm="vanilla",
        patch=(d / "submission.patch").read_text() if patch is None else patch,
        attempt_dir=attempt, traces_dir=attempt / "agent", harness=harness, task_dir=d,
        starting_source=start or d / "start", reference_patch=None, task_image=None, open_task_sandbox=None,
        settings={}, work_dir=attempt / "measure" / "x", agent_traces=bool(harness_class(harness).agent_traces),
    )
