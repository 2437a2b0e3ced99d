"""Actors: the Supervisor and the preparation, coding, grader and collector actors.

Public surface: :func:`run_worker` (own a run until it ends), :func:`create_run`,
:func:`check_inputs`, :func:`load_saved`, and the pure :func:`decide`/:func:`schedule`.
"""

from ._decide import (
    Archive,
    BuildReport,
    Emit,
    Grade,
    Measure,
    Prepare,
    Start,
    decide,
    derive_attempt_id,
    schedule,
)
from ._frozen_versions import frozen_cli, version_mismatch
from ._runfiles import (
    SavedRun,
    check_created_binding,
    check_inputs,
    create_run,
    effective_isolation,
    load_config,
    load_saved,
    resolve_paths,
)
from ._supervisor import Supervisor
from ._worker import build_engine, run_worker

__all__ = [
    "Archive",
    "BuildReport",
    "Emit",
    "Grade",
    "Measure",
    "Prepare",
    "SavedRun",
    "Start",
    "Supervisor",
    "build_engine",
    "check_created_binding",
    "check_inputs",
    "create_run",
    "decide",
    "derive_attempt_id",
    "effective_isolation",
    "frozen_cli",
    "load_config",
    "load_saved",
    "resolve_paths",
    "run_worker",
    "schedule",
    "version_mismatch",
]
