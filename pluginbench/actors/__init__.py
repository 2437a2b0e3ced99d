"""Actors: the Supervisor and the preparation, coding, grader and collector actors.

Public surface: :func:`run_worker` (own a run until it ends), :func:`create_run`,
:func:`check_inputs`, :func:`load_saved`, and the pure :func:`decide`/:func:`schedule`.
The actor extension point: :class:`ActorExtension` (with :class:`Requirement`,
:class:`CoreRules`), :func:`register_extension` / :func:`registered_extension`, and
:func:`requirements` (when an attempt is complete, now).
"""

from ._actor_ext import ActorExtension, CoreRules, Requirement
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
    requirements,
    schedule,
)
from ._extensions import register_extension, registered_extension, unregister_extension
from ._frozen_versions import frozen_cli, version_mismatch
from ._runfiles import (
    SavedRun,
    check_created_binding,
    check_inputs,
    create_run,
    effective_isolation,
    load_saved,
    resolve_paths,
)
from ._supervisor import Supervisor
from ._worker import build_engine, run_worker

__all__ = [
    "ActorExtension",
    "Archive",
    "BuildReport",
    "CoreRules",
    "Emit",
    "Grade",
    "Measure",
    "Prepare",
    "Requirement",
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
    "load_saved",
    "register_extension",
    "registered_extension",
    "requirements",
    "resolve_paths",
    "run_worker",
    "schedule",
    "unregister_extension",
    "version_mismatch",
]
