"""Shared helpers for the code-quality measure tests: a CollectorInput over a fixture."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harness_registry import harness_class
from pluginbench.measures import CollectorInput

QUALITY = Path(__file__).resolve().parents[1] / "data" / "quality"


def task_sandbox(start: Path) -> Callable[..., AbstractAsyncContextManager[Any]]:
    """The measure port's ``open_task_sandbox`` for a starting source: a fresh bubblewrap
    sandbox of the local backend holding a copy of ``start`` (as a run's readiness sandbox)."""
    environment = LocalEnvironment(isolation="bubblewrap")

    def open_task_sandbox(**overrides: Any) -> AbstractAsyncContextManager[Any]:
        spec = SandboxSpec(run_id="measure-test", attempt_id="t", role="readiness", task="t", workspace=start)
        # network="none" is the port's word for the spec's default egress (nothing beyond loopback)
        assert overrides.pop("network", "none") == "none"
        return environment.sandbox(spec._replace(**overrides))

    return open_task_sandbox


def fixture_input(tmp: Path, name: str, *, patch: str | None = None, harness: str = "simulated",
                  start: Path | None = None) -> CollectorInput:
    """The collector input of the ``name`` fixture's submission (or ``patch``)."""
    d = QUALITY / name
    attempt = tmp / "attempt"
    return CollectorInput(
        attempt_id="t__vanilla__r1", task="t", arm="vanilla",
        patch=(d / "submission.patch").read_text() if patch is None else patch,
        attempt_dir=attempt, traces_dir=attempt / "agent", harness=harness, task_dir=d,
        starting_source=start or d / "start", reference_patch=None, task_image=None,
        open_task_sandbox=task_sandbox(start or d / "start"),
        settings={}, work_dir=attempt / "measure" / "x", agent_traces=bool(harness_class(harness).agent_traces),
    )
