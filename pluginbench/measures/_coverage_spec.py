"""The ``coverage`` measure, registered in the measure registry: its columns, settings,
collector (a fresh run's collector actor and ``pluginbench measure`` both use it) and its
readiness check (the command twice on the starting source).

A fresh run's collector runs the task's coverage command on the submission in a fresh
sandbox of the frozen task (``open_task_sandbox``), takes the starting source's report
computed once per task and run (:mod:`._coverage_starting`; per attempt when the caller
gives no ``shared_dir``), and computes :mod:`._coverage_changed`'s metrics. The raw reports stay in the attempt's
``measure/coverage/`` folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import MeasurementError, PluginBenchError
from ..events import Measure
from ._coverage_changed import COVERAGE_METRICS, METRIC_UNITS, CoverageContext, changed_coverage
from ._coverage_profile import CoverageProfile, resolve_profile, settings_of
from ._coverage_run import coverage_readiness, run_coverage
from ._coverage_starting import publish_starting, starting_key, starting_report
from ._port import Better, CollectorInput, Column, MeasureSpec, Readiness, ReadinessInput
from ._registry import register, register_general_setting

#: 2: Go line coverage (a profile version 1 froze has none); 3: Go blocks named after a line
#: directive's target are attributed to the file holding it, and a frozen file a directive
#: names has no line population either (version 2 refused such profiles); 4: the command's own
#: files (an argument naming a file of the starting source) and .coveragerc stay as the task has
#: them, whatever the patch changes, and a Go run's sources are read without following a symlink
COVERAGE_OBSERVER_VERSION = "4"

_DESCRIPTIONS = {
    "changed_line_coverage": ("cov lines", "Share of the submission's executable added source lines its tests ran.",
                              "Changed-line coverage"),
    "changed_branch_coverage": ("cov branches", "Share of the branches starting on added source lines its tests took.",
                                "Changed-branch coverage"),
    "changed_lines_executable": ("exec +", "Executable added source lines (the changed-line denominator).", None),
    "changed_lines_covered": ("covered +", "Executable added source lines the tests ran.", None),
    "redundant_added_tests": ("redundant tests", "Added tests whose added-line coverage other tests already give.",
                              "Redundant added tests"),
    "suite_line_rate": ("suite lines", "Whole-suite line rate on the submission (diagnostic).", None),
    "suite_branch_rate": ("suite branches", "Whole-suite branch rate on the submission (diagnostic).", None),
    "suite_function_rate": ("suite functions", "Whole-suite function rate on the submission (diagnostic).", None),
}
#: the better direction of each metric's paired delta (the rest are descriptive counts)
_BETTER: dict[str, Better] = {"changed_line_coverage": "higher", "changed_branch_coverage": "higher",
                              "redundant_added_tests": "lower", "suite_line_rate": "higher",
                              "suite_branch_rate": "higher", "suite_function_rate": "higher"}
_DIAGNOSTIC = {"suite_line_rate", "suite_branch_rate", "suite_function_rate", "changed_lines_executable",
               "changed_lines_covered"}


def task_language(metadata: Mapping[str, object]) -> str | None:
    language = metadata.get("language") or metadata.get("repo_language")
    return str(language).lower() if language else None


def _task_profile(task_dir: Path, task_id: str, settings: Mapping[str, object]) -> tuple[CoverageProfile | None, str]:
    from ..tasks import load_task

    metadata = load_task(task_dir, task_id).metadata
    url = metadata.get("repository_url")
    return resolve_profile(settings_of(settings), task_language(metadata), str(url) if url else None)


async def collect_coverage(inp: CollectorInput) -> Mapping[str, Measure]:
    """Coverage of one submission: the command on the starting source and on the submission."""
    try:
        profile, why = _task_profile(inp.task_dir, inp.task, inp.settings)
    except PluginBenchError as exc:
        return COVERAGE.unknown(f"the frozen task cannot be read: {exc}")
    if profile is None:
        return COVERAGE.unknown(f"not measured: not_configured: {why}")
    if inp.open_task_sandbox is None:
        return COVERAGE.unknown("not measured: no sandbox of the frozen task can be opened")
    shared = settings_of(inp.settings)
    ctx = CoverageContext(profile.format, profile.tool_version, profile.source_scope or shared.source_scope,
                          profile.test_scope or shared.test_scope)
    try:
        if inp.shared_dir is None:
            before = await run_coverage(inp.open_task_sandbox, inp.starting_source, profile, None,
                                        inp.work_dir / "starting")
        else:  # once per task and run, reused by every attempt (evidence in the run directory)
            key = starting_key(inp.task, inp.task_image or str(inp.starting_source), profile, COVERAGE_OBSERVER_VERSION)
            before, folder, _ = await starting_report(inp.open_task_sandbox, inp.starting_source, profile,
                                                      inp.shared_dir, key)
            inp.work_dir.mkdir(parents=True, exist_ok=True)
            (inp.work_dir / "starting.txt").write_text(f"{folder}\n")
        after = await run_coverage(inp.open_task_sandbox, inp.starting_source, profile, inp.patch,
                                   inp.work_dir / "submission")
    except MeasurementError as exc:
        return ctx.unknown_all(f"coverage unavailable: {exc}")
    return changed_coverage(inp.patch, before, after, ctx)


async def check_coverage(inp: ReadinessInput) -> Readiness:
    """ready / not_configured / broken from two runs of the command on the starting source."""
    try:
        profile, why = _task_profile(inp.task_dir, inp.task, inp.settings)
    except PluginBenchError as exc:
        return Readiness("broken", f"the frozen task cannot be read: {exc}")
    row, report = await coverage_readiness(inp.open_task_sandbox, inp.starting_source, inp.task, profile, why,
                                           inp.work_dir)
    if report is not None and profile is not None and inp.shared_dir is not None:
        # the collectors' starting report: readiness already ran the command on the starting source
        key = starting_key(inp.task, inp.task_image or str(inp.starting_source), profile, COVERAGE_OBSERVER_VERSION)
        publish_starting(inp.work_dir / "starting-1", report, inp.shared_dir, key)
    return Readiness(row.state, row.reason, profile.tool_version if profile is not None else None)  # type: ignore[arg-type]  # ReadinessRow.state is a plain str in the log; coverage_readiness writes only ReadinessState values


COVERAGE = register(MeasureSpec(
    name="coverage",
    description="Changed-line and changed-branch coverage of the submission's added source lines by its own tests, "
                "redundant added tests, whole-suite rates as diagnostics (LCOV, coverage.py JSON, Go coverprofiles).",
    columns=tuple(
        Column(m, METRIC_UNITS[m], _DESCRIPTIONS[m][0], _DESCRIPTIONS[m][1], _DESCRIPTIONS[m][2],
               summary=m not in _DIAGNOSTIC, table=m in ("changed_line_coverage", "redundant_added_tests"),
               better=_BETTER.get(m))
        for m in COVERAGE_METRICS
    ),
    observer_version=COVERAGE_OBSERVER_VERSION,
    languages=("python", "go", "javascript", "typescript"),
    collect=collect_coverage,
    settings={"coverage": CoverageProfile, "coverage_profiles": dict[str, CoverageProfile]},
    check=check_coverage,
    default=False,
    observer_modules=("pluginbench.measures._coverage_data", "pluginbench.measures._coverage_changed"),
    check_runs_twice=True,
))

# Settings every code measure reads (not owned by one measure).
register_general_setting("require_ready", bool)
register_general_setting("source_scope", list[str])
register_general_setting("test_scope", list[str])
