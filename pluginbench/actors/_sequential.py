"""The sequential stop: a rules-only actor extension (no I/O, no actor loop).

After each ``attempt.completed`` of a sequential run (``run.created.stopping``), the run's
sequence is folded again (:func:`pluginbench.projections.sequential_of`); the first time
every gate is decided it records the decision (``extension.recorded``, extension
``sequential``) and ``run.stopping``, so the run stops as ``pluginbench stop`` stops it:
nothing new starts, running attempts finish and are kept. A resume (``run.started``)
records a decision the killed worker had reached but not recorded, and stops again a run
already decided. A decision on the run's last task records the decision and lets the run
finish as usual. Being a fold of the log, it is the same on every backend.
"""

from __future__ import annotations

from typing import Any

from ..events import AttemptCompleted, Event, ExtensionRecorded, RunStarted, RunStopping
from ..projections import SEQUENTIAL, RunState, decision_record, sequential_of
from ._actor_ext import ActorExtension, CoreRules, Emit


def decide_sequential(state: RunState, event: Event, core: CoreRules) -> list[Any]:
    """The decision and the stop that follow from ``event`` (module docstring)."""
    if not isinstance(event, (AttemptCompleted, RunStarted)) or state.failed is not None:
        return []
    if state.created is None or state.created.stopping is None or not state.coding:
        return []
    recorded = state.extension_record(SEQUENTIAL)
    out: list[Any] = []
    if recorded is None:
        seq = sequential_of(state)
        if seq is None or not seq.decided:
            return []
        recorded = decision_record(seq)
        out.append(Emit(ExtensionRecorded(extension=SEQUENTIAL, data=recorded)))
    if state.stopping is None and not state.all_complete and not state.finished:
        out.append(Emit(RunStopping(reason=str(recorded["reason"]))))
    return out


SEQUENTIAL_STOP = ActorExtension(name=SEQUENTIAL, decide=decide_sequential)
