"""Actors: the Supervisor and the preparation, coding, grader and collector actors.

Public surface: :func:`run_worker` (own a run until it ends), :func:`create_run`,
:func:`check_inputs`, :func:`load_saved`, and the pure :func:`decide`/:func:`schedule`.
The actor extension point: :class:`ActorExtension` (with :class:`Requirement`,
:class:`CoreRules`), :func:`register_extension` / :func:`registered_extension`, and
:func:`requirements` (when an attempt is complete, now).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy

if TYPE_CHECKING:
    from ._actor_ext import ActorExtension, CoreRules, Emit, Requirement, SetupContext
    from ._context import Engine, Outbox, cache_root
    from ._decide import (
        Archive,
        BuildReport,
        Grade,
        Measure,
        Prepare,
        Start,
        decide,
        derive_attempt_id,
        requirements,
        schedule,
        source_only_todo,
    )
    from ._doctor import Check, cluster_checks, end_to_end, static_checks
    from ._extensions import register_extension, registered_extension, unregister_extension
    from ._frozen_versions import frozen_cli, host_cli_update, version_mismatch
    from ._group import Group, GroupRun, check_group_inputs, create_group, is_group, load_group
    from ._measure_again import plan_measure, run_measure
    from ._measure_readiness import measurement_readiness, readiness_document
    from ._mine import MinedCandidate, MineOptions, MiningReport, mine_history
    from ._preparation import (
        check_capacity,
        freeze_task,
        prepare_task_images,
        record_contract,
        run_control,
    )
    from ._remote_tasks import task_cache
    from ._review_again import plan_review, run_review
    from ._runfiles import (
        SavedRun,
        check_created_binding,
        check_inputs,
        create_run,
        effective_isolation,
        load_config,
        load_saved,
        output_exists,
        read_prices,
        resolve_paths,
    )
    from ._runtime import check_runtime, current_runtime, prefetch_launcher_source, runtime_drift
    from ._supervisor import Supervisor
    from ._vanilla import plan_decisions
    from ._worker import build_engine, run_worker

__all__ = [  # noqa: RUF022 - the history miner's names are kept together at the end
    "ActorExtension",
    "Group",
    "GroupRun",
    "check_group_inputs",
    "create_group",
    "is_group",
    "load_group",
    "Archive",
    "BuildReport",
    "Check",
    "CoreRules",
    "Emit",
    "Engine",
    "Grade",
    "Measure",
    "Outbox",
    "Prepare",
    "Requirement",
    "SavedRun",
    "SetupContext",
    "Start",
    "Supervisor",
    "build_engine",
    "cache_root",
    "check_capacity",
    "check_created_binding",
    "check_inputs",
    "create_run",
    "decide",
    "derive_attempt_id",
    "effective_isolation",
    "cluster_checks",
    "end_to_end",
    "freeze_task",
    "frozen_cli",
    "host_cli_update",
    "check_runtime",
    "current_runtime",
    "prefetch_launcher_source",
    "runtime_drift",
    "load_config",
    "load_saved",
    "output_exists",
    "measurement_readiness",
    "plan_decisions",
    "plan_measure",
    "plan_review",
    "prepare_task_images",
    "read_prices",
    "readiness_document",
    "record_contract",
    "register_extension",
    "registered_extension",
    "requirements",
    "resolve_paths",
    "run_control",
    "run_measure",
    "run_review",
    "run_worker",
    "schedule",
    "source_only_todo",
    "static_checks",
    "task_cache",
    "unregister_extension",
    "version_mismatch",
    # tasks mine
    "MineOptions",
    "MinedCandidate",
    "MiningReport",
    "mine_history",
]

__getattr__ = lazy(__name__, __file__)
