"""The typed schema of ``report/results.json`` (schema version 2).

:class:`ResultsJson` describes every field the report writes, with its meaning; the
reference table in ``docs/results.md`` is generated from it (``tools/gen_docs.py``), and a
test converts every report the test suite builds through it with unknown fields forbidden,
so a field added to the report without its description here fails that test.
"""

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import Meta

from ..events import AttemptState, MeasureStatus, Outcome, UsageStatus
from ..measures import Column, all_columns
from ._results_schema_activation import Activation, Checks
from ._results_schema_code import CodeMeasureGroup
from ._results_schema_cost import Costs
from ._results_schema_reviews import Reviews


def doc(t: Any, text: str) -> Any:
    """``t`` with a description for the generated docs."""
    return Annotated[t, msgspec.Meta(description=text)]


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


OUTCOME = Outcome
STATE = AttemptState
TOKEN_STATUS = UsageStatus
Num = float | int | None


class TaskSource(_Strict, frozen=True):
    task_id: Annotated[str, Meta(description="The task id (the link's last folder; for a dataset task the last `/` part of its name).")]
    url: Annotated[str, Meta(description="The `tasks.urls` link as written; for a dataset task `<dataset>@<version>:<task name>`.")]
    pinned_url: Annotated[str, Meta(description="The same link at the commit its ref named when the run was created.")]
    commit: Annotated[str, Meta(description="That commit.")]
    tree: Annotated[str, Meta(description="Git's tree id of the task folder at that commit.")]
    fingerprint: Annotated[str, Meta(description="SHA-256 over every file's path, mode and content.")]


class TaskDataset(_Strict, frozen=True):
    name: Annotated[str, Meta(description="The Harbor registry dataset.")]
    version: Annotated[str, Meta(description="Its version.")]
    registry_sha256: Annotated[str, Meta(description="SHA-256 of the registry index as read when the run was created.")]
    content_hash: Annotated[str, Meta(description="`sha256:` over every run task's name, repository, commit, folder, git tree and fingerprint.")]
    tasks: Annotated[list[str], Meta(description="The registry task names run, in config order.")]


class RunInfo(_Strict, frozen=True):
    name: Annotated[str, Meta(description="The evaluation's name.")]
    harness: Annotated[str | None, Meta(description="claude, codex, or a control (simulated, nop, oracle).")]
    model: Annotated[str | None, Meta(description="The exact model the run used.")]
    reasoning: Annotated[str | None, Meta(description="Requested reasoning effort.")]
    cli_version: Annotated[str | None, Meta(description="The agent CLI version the run resolved (pinned or read from the host); null for controls.")]
    cli_version_source: Annotated[str | None, Meta(description="`runner.cli_version`, `host`, or null.")]
    backend: Annotated[str | None, Meta(description="The execution backend's registered name (local, docker, ...).")]
    isolation: Annotated[str | None, Meta(description="The effective isolation (none, bubblewrap, docker).")]
    isolated: Annotated[bool, Meta(description="Whether attempts ran sandboxed.")]
    simulated: Annotated[bool, Meta(description="The simulated stand-in agent coded the attempts: the numbers are not a real agent's.")]
    probe: Annotated[bool, Meta(description="The agent talked to PluginBench's loopback model server, not a real model.")]
    seed: Annotated[int | None, Meta(description="The run's seed (attempt order).")]
    repeats: Annotated[int | None, Meta(description="Attempts per task and arm.")]
    jobs: Annotated[int | None, Meta(description="Concurrent coding attempts.")]
    timeout_seconds: Annotated[int | None, Meta(description="The agent timeout per attempt.")]
    capabilities: Annotated[dict[str, Any], Meta(description="The capability record: per setting (subagents, max_threads, max_depth) its "
                                             "`value`, `enforcement` (enforced, not_enforced, not_applicable) and `how`; `not_enforced` "
                                             "lists the settings the harness cannot enforce.")]
    measurements: Annotated[list[str], Meta(description="Selected measurements (tokens, time, lines).")]
    evaluation_sha256: Annotated[str | None, Meta(description="SHA-256 of the frozen evaluation.json.")]
    pluginbench_version: Annotated[str | None, Meta(description="The PluginBench version that made the run.")]
    attempts_total: Annotated[int, Meta(description="Live attempts (discarded ones excluded).")]
    attempts_complete: Annotated[int, Meta(description="Live attempts that are complete.")]
    task_sources: Annotated[list[TaskSource] | None, Meta(description="A `tasks.urls` or `tasks.dataset` run only: each task's pinned link, from the run's frozen evidence/remote/pins.json (never resolved again).")] = None
    task_dataset: Annotated[TaskDataset | None, Meta(description="A `tasks.dataset` run only: the Harbor registry dataset pinned when the run was created, from evidence/remote/dataset.json (the registry is never read again).")] = None


class Runner(_Strict, frozen=True):
    harness: Annotated[str | None, Meta(description="The harness.")]
    model: Annotated[str | None, Meta(description="The model.")]
    reasoning: Annotated[str | None, Meta(description="Requested reasoning effort.")]


class EffectiveLimits(_Strict, frozen=True):
    agent_timeout_seconds: Annotated[int | float | None, Meta(description="The agent timeout the task's attempts ran with.")]


class TaskLimits(_Strict, frozen=True):
    effective: Annotated[EffectiveLimits, Meta(description="Limits in effect for the task.")]


class MeasurementSettings(_Strict, frozen=True):
    measurements: Annotated[list[str], Meta(description="Selected measurements.")]


class ComparisonReviewer(_Strict, frozen=True):
    revision: Annotated[str, Meta(description="The selected review revision (`initial` is the run's own review phase).")]
    harness: Annotated[str, Meta(description="The reviewer's harness (claude, codex, or the labelled `simulated` stand-in).")]
    model: Annotated[str, Meta(description="The reviewer's exact model.")]
    reasoning: Annotated[str | None, Meta(description="The reviewer's effort.")]


class MeasurementCapability(_Strict, frozen=True):
    state: Annotated[str, Meta(description="ready, not_configured or broken.")]
    reason: Annotated[str | None, Meta(description="Why it is not ready.")]
    tool_version: Annotated[str | None, Meta(description="The analyzer or tool version the readiness check found.")]


class ComparisonIdentity(_Strict, frozen=True):
    runner: Annotated[Runner, Meta(description="Harness, model and requested reasoning.")]
    harness_version: Annotated[str | None, Meta(description="The resolved agent CLI version.")]
    capabilities: Annotated[dict[str, Any], Meta(description="The capability record, as `run.capabilities` (with `not_enforced`).")]
    tasks: Annotated[dict[str, str], Meta(description="Task → the frozen task's fingerprint.")]
    task_limits: Annotated[dict[str, TaskLimits], Meta(description="Task → its effective limits.")]
    measurement_settings: Annotated[MeasurementSettings, Meta(description="The measurement scope.")]
    measurement_capabilities: Annotated[dict[str, dict[str, MeasurementCapability]], Meta(description="Task → measure → its readiness (preparation's rows, with the selected measurement revision's over them).")] = {}
    effective_observer_scripts: Annotated[dict[str, dict[str, str]], Meta(description="Task → measure → the observer version bound to the run, for the measures ready on the task.")] = {}
    network: Annotated[dict[str, dict[str, str]], Meta(description="Task → sandbox kind (`coding`, `verifier`) → the network policy it ran under, e.g. `loopback + probe`, `loopback + proxy to api.anthropic.com + public internet`, `loopback only`.")] = {}
    verifier_env: Annotated[dict[str, dict[str, dict[str, str]]] | None, Meta(description="Task → variable → where `tests/test.sh` got it from the task's `[verifier.env]`: `{from: task, value}` for a literal, `{from: host, variable}` for a host variable allowed by `grading.verifier_env_from_host` (its value is never recorded), `{from: default, variable, value}` when that host variable was unset and the task's default was used. Required to agree; absent when no task declares one.")] = None
    environment_env: Annotated[dict[str, dict[str, dict[str, str]]] | None, Meta(description="Task → variable → the literal every command of the task's coding sandbox and its `tests/test.sh` got from the task's `[environment.env]`: `{from: task, value}` (host references are refused there). Required to agree; absent when no task declares one.")] = None
    task_owned: Annotated[dict[str, str], Meta(description="Arm → `remove` for each arm whose coding sandboxes started without the repository's own instruction files and skills (`task_owned: remove`); vanilla and other arms keep them. Recorded, not required to agree (like guidance).")] = {}
    allow_host_root: Annotated[bool | None, Meta(description="`true` when `environment.allow_host_root` let docker sandboxes run on an engine whose container root is the host's root (no user-namespace remapping); absent otherwise. Recorded, not required to agree.")] = None
    generated: Annotated[dict[str, dict[str, Any]] | None, Meta(description="Generated-guidance arm → its `generate` settings (harness, model, reasoning, kind, instruction `built-in` or `custom`) and `files` (task → the generated file's SHA-256, null when its generation failed). Recorded, not required to agree (like guidance); absent when no arm generates.")] = None
    reviewer: Annotated[ComparisonReviewer | None, Meta(description="The reviewer of the selected review revision; absent without a reviewer.")] = None
    review_criteria_sha256: Annotated[str | None, Meta(description="SHA-256 of the fixed review criteria; absent without a reviewer.")] = None


class TokenProvenance(_Strict, frozen=True):
    harness: Annotated[str | None, Meta(description="The harness whose receipts the counts come from.")]
    cli_version: Annotated[str | None, Meta(description="Its CLI version.")]
    statuses: Annotated[dict[str, int], Meta(description="Token status → number of attempts.")]
    lower_bound_attempts: Annotated[list[str], Meta(description="Attempts whose counts are only a lower bound.")]
    unknown_attempts: Annotated[list[str], Meta(description="Attempts whose usage is unknown.")]


class NativeSessionTokens(_Strict, frozen=True):
    input: Annotated[int | None, Meta(description="The native session's input tokens, cached included.")]
    cached_input: Annotated[int | None, Meta(description="Its cached part.")]
    uncached_input: Annotated[int | None, Meta(description="input − cached_input.")]
    output: Annotated[int | None, Meta(description="Its output tokens.")]
    reasoning_output: Annotated[int | None, Meta(description="Its reasoning output tokens.")]
    total: Annotated[int | None, Meta(description="input + output of the native session only.")]
    status: Annotated[TOKEN_STATUS, Meta(description="The native session's own status (exact when validated).")]
    reason: Annotated[str | None, Meta(description="Starts `native CLI session only (hook subprocesses excluded)`.")]
    native_session: Annotated[None, Meta(description="Always null here.")]
    label: Annotated[str, Meta(description="Says these are the native CLI session's tokens only, without the unmetered hook subprocesses.")]


class Tokens(_Strict, frozen=True):
    input: Annotated[int | None, Meta(description="All input tokens, cached included.")]
    cached_input: Annotated[int | None, Meta(description="The part of input read from the prompt cache.")]
    uncached_input: Annotated[int | None, Meta(description="input − cached_input.")]
    output: Annotated[int | None, Meta(description="Output tokens.")]
    reasoning_output: Annotated[int | None, Meta(description="Reasoning output tokens (a subset of output); null when the harness records none.")]
    total: Annotated[int | None, Meta(description="input + output.")]
    status: Annotated[TOKEN_STATUS, Meta(description="exact, lower_bound, unvalidated or unknown (then every counter is null).")]
    reason: Annotated[str | None, Meta(description="Why a counter is unknown or only a bound.")]
    native_session: Annotated[NativeSessionTokens | None, Meta(description="Only for an arm whose plugins run command hooks (then the total is unknown: hook subprocesses are "
                               "unmetered): the native CLI session's own usage, kept apart and labelled; null otherwise.")]


class MeasureValue(_Strict, frozen=True):
    value: Annotated[Num, Meta(description="The value, or null when unknown.")]
    unit: Annotated[str, Meta(description="lines, files, ratio, tests, …")]
    status: Annotated[MeasureStatus, Meta(description="measured, unknown (not measured: `reason` says why) or not_applicable (the measure has no meaning for this language; not missing).")]
    reason: Annotated[str | None, Meta(description="Why it is unknown.")]
    language: Annotated[str | None, Meta(description="Code measures only: the language it was measured in (reports group by it, never pool).")] = None
    analyzer: Annotated[str | None, Meta(description="Code measures only: the analyzer or coverage format and its version.")] = None


class MeasurementRevisionStatus(_Strict, frozen=True):
    revision: Annotated[str, Meta(description="The measurement revision's name.")]
    status: Annotated[Literal["selected", "not_selected", "collecting"], Meta(description="selected, not_selected or collecting.")]
    selected: Annotated[bool, Meta(description="Whether the report reads it.")]


class ReferenceRatioCell(_Strict, frozen=True):
    median: Annotated[Num, Meta(description="The task × arm median (per_task), or null when no attempt has a value.")]
    reference: Annotated[Num, Meta(description="The task's reference value, or null when unavailable.")]
    ratio: Annotated[Num, Meta(description="median / reference, or null (see reason).")]
    reason: Annotated[str | None, Meta(description="Why there is no ratio: the reference is unavailable, zero or negative, or the median is unknown.")]


class ReferenceRatioArm(_Strict, frozen=True):
    median_of_task_ratios: Annotated[Num, Meta(description="The median of the arm's task ratios; null when no task has one.")]
    tasks: Annotated[int, Meta(description="Tasks with a ratio.")]


class ReferenceRatios(_Strict, frozen=True):
    unit: Annotated[str, Meta(description="The metric's unit (the ratio itself has none).")]
    per_task: Annotated[dict[str, dict[str, ReferenceRatioCell]], Meta(description="Task → arm → median, reference and ratio.")]
    per_arm: Annotated[dict[str, ReferenceRatioArm], Meta(description="Arm → the median of its task ratios.")]


class MeasurementRevisionRow(_Strict, frozen=True):
    revision: Annotated[str, Meta(description="The measurement revision's name (`pluginbench measure --revision`).")]
    status: Annotated[Literal["selected", "not_selected", "collecting"], Meta(description="selected (the report uses it), not_selected, or "
                                       "collecting (left unfinished).")]
    selected: Annotated[bool, Meta(description="Whether the report reads it.")]
    measurements: Annotated[list[str], Meta(description="Every collector measure it collected.")]
    added: Annotated[list[str], Meta(description="The measures it added to the run.")]
    reason: Annotated[str | None, Meta(description="Why it was not selected (e.g. it lost an observation).")]
    attempts: Annotated[int, Meta(description="Submissions it measured.")]


class NotMeasuredRow(_Strict, frozen=True):
    task: Annotated[str, Meta(description="The task.")]
    measure: Annotated[str, Meta(description="The measure (e.g. coverage).")]
    reason: Annotated[str, Meta(description="Its readiness state and why (not_configured or broken).")]


class ReferenceValue(_Strict, frozen=True):
    status: Annotated[Literal["measured", "unavailable"], Meta(description="measured, or unavailable (no solution/solution.patch, a pair the run does not measure, a reference the collector could not measure).")]
    value: Annotated[Num, Meta(description="The reference solution's value, or null when unavailable.")]
    reason: Annotated[str | None, Meta(description="Why it is unavailable.")]


class SourceOnlyGrading(_Strict, frozen=True):
    status: Annotated[Literal["graded", "unavailable", "pending"], Meta(description="graded, unavailable (final for this filter revision) or pending (retried by the next `pluginbench run <run-dir>`).")]
    source_only_filter: Annotated[str, Meta(description="The filter revision the grade was made under.")]
    reward: Annotated[Num, Meta(description="The replay's raw verifier reward (the native one when nothing was removed).")]
    grading: Annotated[dict[str, Num] | None, Meta(description="The replay's reward.json keys beyond reward.")]
    removed_test_files: Annotated[list[str], Meta(description="The agent's test files left out of the graded patch.")]
    kept_reference_solution_files: Annotated[list[str], Meta(description="Test-looking files kept because the reference solution changes them.")]
    kept_test_setup_files: Annotated[list[str], Meta(description="Test data, fixtures, examples and shared config outside test dirs that stayed.")]
    filtered_patch_sha256: Annotated[str | None, Meta(description="SHA-256 of the patch that was graded.")]
    nothing_removed: Annotated[bool, Meta(description="No test file was removed.")]
    native_result_reused: Annotated[bool, Meta(description="The native result was reused instead of replayed.")]
    trusted_test_overlap: Annotated[list[str], Meta(description="Kept paths the hidden tests still overwrite.")]
    unavailable: Annotated[str | None, Meta(description="Why no source-only grade can exist under this filter revision.")]
    pending: Annotated[str | None, Meta(description="Why the grade is pending (the grader image or starting source is gone).")]
    reason: Annotated[str | None, Meta(description="The unavailable or pending reason, or why the replay gave no reward.")]
    seconds: Annotated[Num, Meta(description="Wall-clock seconds the grade added (about 0 when reused).")]
    evidence: Annotated[str | None, Meta(description="The grade's evidence folder, relative to the run directory.")]


class AttemptRow(_Strict, frozen=True):
    attempt_id: Annotated[str, Meta(description="`<task>__<arm>__r<repeat>` (a replacement adds `~N`).")]
    slot: Annotated[int, Meta(description="The planned slot.")]
    task: Annotated[str, Meta(description="Task id.")]
    arm: Annotated[str, Meta(description="vanilla or a treatment.")]
    repeat: Annotated[int, Meta(description="Repeat number.")]
    state: Annotated[STATE, Meta(description="pending, running, complete or interrupted.")]
    outcome: Annotated[OUTCOME | None, Meta(description="pass, overlap_pass, fail, empty or unknown; null when not complete.")]
    outcome_reason: Annotated[str | None, Meta(description="Why the outcome is empty or unknown, or why the attempt is not complete.")]
    reward: Annotated[Num, Meta(description="The hidden verifier's reward, or null.")]
    tokens: Annotated[Tokens, Meta(description="Coding-session token usage.")]
    coding_seconds: Annotated[Num, Meta(description="Wall time of the agent process; `null` when not measured (the harness failed before it measured it), never 0 for unknown.")]
    measures: Annotated[dict[str, MeasureValue], Meta(description="Column → value, one per column of each selected collector measure (the registry in `pluginbench/measures/`; see docs/metrics.md).")]
    evidence: Annotated[str, Meta(description="The attempt's evidence folder, relative to the run directory.")]
    reused: Annotated[bool, Meta(description="Imported from the vanilla cache instead of coded in this run.")]
    origin_cohort: Annotated[str | None, Meta(description="For a reused attempt: the cache cohort it came from.")]
    model_record: Annotated[dict[str, Any] | None, Meta(description="Codex: the model and effort its sessions ran on (`status` single, mixed "
                                             "or unknown, `model` null unless single, `mismatched` children); null where not read.")]
    ineligible: Annotated[str | None, Meta(description="Why the attempt is left out of every comparison (a Codex child ran on another "
                                           "model or effort), or null.")]
    native_grading: Annotated[dict[str, Num] | None, Meta(description="Every numeric key of the verifier's reward.json beyond reward (partial credit: f2p/p2p totals and passes, partial); null for reward.txt.")]
    overlap_paths: Annotated[list[str], Meta(description="Paths the patch changes that the hidden test.patch replaces (non-empty makes a pass an overlap_pass).")]
    source_only_reward: Annotated[Num, Meta(description="The source-only grade's raw verifier reward; compare with the native reward, not the outcome.")]
    source_only_grading: Annotated[SourceOnlyGrading | None, Meta(description="The source-only grade, or null when the attempt has none.")]


class _ArmSummaryBase(_Strict, frozen=True):
    attempts: Annotated[int, Meta(description="Assigned attempts.")]
    complete: Annotated[int, Meta(description="Complete attempts.")]
    passes: Annotated[int, Meta(description="Attempts that passed (confirmed passes).")]
    overlap_passes: Annotated[int, Meta(description="Overlap passes: reward 1 and every listed test passed, but the patch changed paths the hidden tests replace.")]
    fails: Annotated[int, Meta(description="Attempts that failed.")]
    empties: Annotated[int, Meta(description="Attempts with an empty patch (counted as failures in the rate).")]
    unknowns: Annotated[int, Meta(description="Attempts with unknown correctness (left out of the rate).")]
    pass_rate: Annotated[Num, Meta(description="passes / (passes + overlap_passes + fails + empties), or null.")]
    pass_rate_with_overlap: Annotated[Num, Meta(description="(passes + overlap_passes) / the same denominator, or null.")]
    wilson_95: Annotated[list[float] | None, Meta(description="Wilson 95% interval of the pass rate, or null.")]
    mean_input_output_tokens: Annotated[Num, Meta(description="Mean input + output tokens (null when any attempt lacks them).")]
    median_total_tokens: Annotated[Num, Meta(description="Median total tokens.")]
    median_coding_seconds: Annotated[Num, Meta(description="Median coding seconds.")]


def summary_columns() -> tuple[Column, ...]:
    """Registered collector columns a task × arm summary carries a median of."""
    return tuple(c for c in all_columns() if c.summary)


def arm_summary_type(columns: tuple[Column, ...]) -> type:
    """The task × arm summary with ``median_<metric>`` for each registered summary column
    (present when its measure is selected)."""
    fields = [(f"median_{c.metric}", doc(Num, f"Median {c.metric} ({c.unit}): {c.description}"), None)
              for c in columns]
    return msgspec.defstruct("ArmSummary", fields, bases=(_ArmSummaryBase,), frozen=True, kw_only=True,
                             forbid_unknown_fields=True)


if TYPE_CHECKING:  # built from the measure registry at import: statically, a strict Struct
    ArmSummary = _Strict
else:
    ArmSummary = arm_summary_type(summary_columns())


class SignTest(_Strict, frozen=True):
    positives: Annotated[int, Meta(description="Tasks where the treatment's pass rate is higher.")]
    negatives: Annotated[int, Meta(description="Tasks where it is lower.")]
    ties: Annotated[int, Meta(description="Tasks with equal rates (excluded from the test).")]
    p: Annotated[Num, Meta(description="Exact two-sided p-value; 1 when all tie; null without usable tasks.")]


class Summary(_Strict, frozen=True):
    statistic: Annotated[str, Meta(description="mean_pass_rate_difference or geometric_mean_token_ratio.")]
    estimate: Annotated[Num, Meta(description="The mean difference or geometric-mean ratio over usable tasks.")]
    low: Annotated[Num, Meta(description="Lower end of the interval at `level` (a one-sided (1 + level) / 2 bound), the test of `method` inverted: pass_rate the betting test for a bounded mean (no symmetry assumed), tokens the sign-flip permutation test.")]
    high: Annotated[Num, Meta(description="Upper end of the interval.")]
    tasks: Annotated[int, Meta(description="Usable task pairs.")]
    status: Annotated[str, Meta(description="ok, too_few_tasks (fewer than min_tasks) or no_tasks.")]
    level: Annotated[float, Meta(description="The run's statistics.confidence_level (0.9 by default).")]
    draws: Annotated[int | None, Meta(description="Monte Carlo sign patterns (10,000) above 20 tasks; null when exact.")]
    seed: Annotated[int, Meta(description="Seed of the Monte Carlo sign patterns (0).")]
    min_tasks: Annotated[int, Meta(description="Fewest tasks that can reach the level (5 at 90%).")]
    method: Annotated[str, Meta(description="The interval's method: pass_rate the betting test for a bounded mean (runs reported before it: sign-flip permutation test), tokens the sign-flip permutation test (before it: percentile bootstrap).")] = "percentile bootstrap"
    exact: Annotated[bool | None, Meta(description="Every sign pattern enumerated (up to 20 tasks).")] = None
    sign_test: Annotated[SignTest | None, Meta(description="pass_rate only: the exact sign test.")] = None
    p_greater: Annotated[Num | None, Meta(description="pass_rate only: the one-sided sign-flip p at 0 against \"the treatment is better\" (the verdict's test; exact, draws and seed describe it); null unless status ok.")] = None
    p_less: Annotated[Num | None, Meta(description="pass_rate only: the same against \"the treatment is worse\".")] = None
    basis: Annotated[str | None, Meta(description="tokens only: input_plus_output.")] = None


class Exclusion(_Strict, frozen=True):
    task: Annotated[str, Meta(description="The task.")]
    reason: Annotated[str, Meta(description="Why it is excluded.")]


class DollarsSummary(_Strict, frozen=True):
    statistic: Annotated[str, Meta(description="ratio_of_mean_dollars_per_attempt.")]
    definition: Annotated[str, Meta(description="The one definition of the dollars ratio, in words (the verdict, the tables and compare use it).")]
    estimate: Annotated[Num, Meta(description="Σ over tasks of the treatment's mean dollars per attempt / the same of vanilla; null without prices or usable tasks.")]
    low: Annotated[Num, Meta(description="Lower end of its sign-flip interval at `level` (the test of the per-task t − r·c inverted); null with too few tasks.")]
    high: Annotated[Num, Meta(description="Upper end of that interval.")]
    tasks: Annotated[int, Meta(description="Tasks where every attempt of both arms has exact dollars.")]
    status: Annotated[str, Meta(description="ok, too_few_tasks, no_tasks or no_prices.")]
    level: Annotated[float, Meta(description="The run's statistics.confidence_level.")]
    method: Annotated[str, Meta(description="sign-flip permutation test.")]
    excluded: Annotated[list[Exclusion], Meta(description="Tasks left out (an attempt without exact dollars, $0 for vanilla).")]
    min_tasks: Annotated[int | None, Meta(description="Fewest tasks that can reach the level.")] = None


class DeltaSummary(_Strict, frozen=True):
    pass_rate: Annotated[Summary, Meta(description="Mean pass-rate difference (treatment − vanilla).")]
    tokens: Annotated[Summary, Meta(description="Geometric-mean token ratio (treatment / vanilla).")]
    dollars: Annotated[DollarsSummary | None, Meta(description="Ratio of mean dollars per attempt (treatment / vanilla) with its interval; null in reports made before it existed.")] = None


class TaskDelta(_Strict, frozen=True):
    pass_rate_difference: Annotated[Num, Meta(description="Treatment pass rate − vanilla's on the task.")]
    pass_rate_excluded: Annotated[str | None, Meta(description="Why the task is left out of pass-rate statistics.")]
    token_ratio: Annotated[Num, Meta(description="Treatment mean input+output tokens / vanilla's.")]
    tokens_excluded: Annotated[str | None, Meta(description="Why the task is left out of token statistics.")]


class Exclusions(_Strict, frozen=True):
    pass_rate: Annotated[list[Exclusion], Meta(description="Tasks left out of pass-rate statistics.")]
    tokens: Annotated[list[Exclusion], Meta(description="Tasks left out of token statistics.")]


class Delta(_Strict, frozen=True):
    against: Annotated[str, Meta(description="The comparator arm (vanilla).")]
    per_task: Annotated[dict[str, TaskDelta], Meta(description="Task → its paired values.")]
    summary: Annotated[DeltaSummary, Meta(description="Summaries over usable tasks.")]
    excluded: Annotated[Exclusions, Meta(description="Excluded tasks with reasons.")]


class MissingValue(_Strict, frozen=True):
    scope: Annotated[Literal["attempt", "task_arm"], Meta(description="An attempt's value or a task × arm summary.")]
    attempt_id: Annotated[str | None, Meta(description="The attempt (attempt scope).")]
    attempt_ids: Annotated[list[str], Meta(description="Attempts lacking the value.")]
    task: Annotated[str, Meta(description="The task.")]
    arm: Annotated[str, Meta(description="The arm.")]
    field: Annotated[str, Meta(description="The unknown field (tokens.input, measures.x, per_task.pass_rate, …).")]
    reason: Annotated[str, Meta(description="Why it is unknown.")]


class DiscardedAttempt(_Strict, frozen=True):
    attempt_id: Annotated[str, Meta(description="The discarded attempt.")]
    slot: Annotated[int, Meta(description="Its slot.")]
    task: Annotated[str, Meta(description="Task.")]
    arm: Annotated[str, Meta(description="Arm.")]
    repeat: Annotated[int, Meta(description="Repeat.")]
    replaced_by: Annotated[str | None, Meta(description="The attempt that replaced it.")]
    reason: Annotated[str | None, Meta(description="Why it was discarded.")]
    tokens: Annotated[Tokens, Meta(description="Its token use (counted nowhere else).")]


class ActualCalls(_Strict, frozen=True):
    coding_sessions: Annotated[int, Meta(description="Agent sessions this run launched (`agent.launched`), each one paid-for model use: "
                                         "live and discarded attempts alike; reused vanilla attempts made none here.")]
    by_arm: Annotated[dict[str, int], Meta(description="Arm → its launched coding sessions.")]
    discarded: Annotated[int, Meta(description="Of those, sessions of attempts a resume discarded and replaced (see `discarded_attempts`).")]
    planned: Annotated[int, Meta(description="Coding slots the run planned (tasks × arms × repeats).")]


class ReusedAttempt(_Strict, frozen=True):
    attempt_id: Annotated[str, Meta(description="The reused attempt.")]
    task: Annotated[str, Meta(description="Task.")]
    arm: Annotated[str, Meta(description="Arm (vanilla).")]
    repeat: Annotated[int, Meta(description="Repeat.")]
    origin_cohort: Annotated[str | None, Meta(description="The cache cohort, relative to the cache root.")]
    origin_entry: Annotated[str | None, Meta(description="The cache entry.")]
    origin_run: Annotated[str | None, Meta(description="The run that coded it.")]
    origin_attempt: Annotated[str | None, Meta(description="Its attempt id there.")]


class GeneratedSession(_Strict, frozen=True):
    arm: Annotated[str, Meta(description="The generated-guidance arm.")]
    task: Annotated[str, Meta(description="The task whose starting repository the session studied.")]
    generation_id: Annotated[str, Meta(description="`<task>__<arm>__gen<n>`; its evidence is `evidence/generated/<generation_id>/`.")]
    harness: Annotated[str, Meta(description="The harness that generated.")]
    model: Annotated[str | None, Meta(description="Its model (`generate.model`).")]
    file: Annotated[str, Meta(description="The instruction file it was asked to write (CLAUDE.md, AGENTS.md...).")]
    outcome: Annotated[Literal["generated", "failed", "unfinished", "killed"], Meta(description="generated (the file is the arm's guidance on this task), failed (the arm did not run on this task; `reason` says why), unfinished (the run stopped during it), killed (its worker was killed mid-generation; a resume generated it again).")]
    path: Annotated[str | None, Meta(description="The frozen file, relative to the run directory (generated only).")]
    sha256: Annotated[str | None, Meta(description="Its SHA-256, bound into the arm's fingerprint on this task and every attempt's delivery.json.")]
    bytes: Annotated[int | None, Meta(description="Its size.")]
    fingerprint: Annotated[str | None, Meta(description="The arm's fingerprint on this task: its settings, the generating harness, model and prompt, and the file's SHA-256.")]
    tokens: Annotated[Tokens, Meta(description="The generating session's usage (unknown for a killed one, never zero).")]
    seconds: Annotated[float | None, Meta(description="The generating session's agent time; null when unknown.")]
    discarded_changes: Annotated[list[str], Meta(description="Other paths the session changed, left behind (only the file is carried over).")]
    reason: Annotated[str | None, Meta(description="Why it failed or did not end.")]


class GeneratedArm(_Strict, frozen=True):
    sessions: Annotated[int, Meta(description="Generating sessions, killed ones included.")]
    generated: Annotated[int, Meta(description="Tasks with a generated file.")]
    failed: Annotated[int, Meta(description="Tasks whose generation failed.")]
    killed: Annotated[int, Meta(description="Sessions killed mid-generation and generated again.")]
    tokens: Annotated[int | None, Meta(description="Total tokens of its sessions; null when any session's are unknown.")]
    tokens_status: Annotated[TOKEN_STATUS, Meta(description="exact, lower_bound (some session's counts are a floor) or unknown.")]
    tokens_reason: Annotated[str | None, Meta(description="Which sessions' usage is unknown.")]
    seconds: Annotated[float | None, Meta(description="Total agent seconds of its sessions; null when any is unknown.")]
    seconds_reason: Annotated[str | None, Meta(description="Which sessions' time is unknown.")]


class Generated(_Strict, frozen=True):
    sessions: Annotated[list[GeneratedSession], Meta(description="One row per arm × task (and per killed session), by arm, task, id.")]
    arms: Annotated[dict[str, GeneratedArm], Meta(description="Arm → its generation totals.")]


class SourceOnlyIndex(_Strict, frozen=True):
    filter: Annotated[str, Meta(description="The filter revision whose index is selected.")]
    index: Annotated[str, Meta(description="The selected index.json, relative to the run directory (earlier revisions' indexes stay on disk, unread).")]
    sha256: Annotated[str, Meta(description="The SHA-256 bound by the latest `source_only.selected` event in events.jsonl.")]
    status: Annotated[Literal["verified", "changed", "missing"], Meta(description="verified (the file's bytes match the bound SHA-256), changed or missing (its grades are then left out of the rows).")]
    reason: Annotated[str | None, Meta(description="Why the index is not verified.")]


class ResultsJson(_Strict, frozen=True):
    """``report/results.json``."""

    schema_version: Annotated[Literal[2], Meta(description="The schema version.")]
    run: Annotated[RunInfo, Meta(description="The run's identity and settings.")]
    comparison_identity: Annotated[ComparisonIdentity, Meta(description="What `compare` checks before comparing this run with another.")]
    token_provenance: Annotated[TokenProvenance, Meta(description="Where the token counts come from and how many are exact, bounds or unknown.")]
    arms: Annotated[list[str], Meta(description="vanilla first, then treatments in config order.")]
    tasks: Annotated[list[str], Meta(description="Task ids, sorted.")]
    attempts: Annotated[list[AttemptRow], Meta(description="One row per live attempt, by task, arm, repeat.")]
    per_task: Annotated[dict[str, dict[str, ArmSummary]], Meta(description="Task → arm → summary.")]
    deltas: Annotated[dict[str, Delta], Meta(description="Treatment → its paired comparison against vanilla.")]
    missing_values: Annotated[list[MissingValue], Meta(description="Every unknown value with its reason.")]
    discarded_attempts: Annotated[list[DiscardedAttempt], Meta(description="Attempts a resume replaced, with their token use.")]
    reused_attempts: Annotated[list[ReusedAttempt], Meta(description="Vanilla attempts imported from the cache, with their origin.")]
    costs: Annotated[Costs, Meta(description="Dollars per attempt, task × arm and arm from the run's dated prices.json.")]
    notes: Annotated[list[str], Meta(description="Plain-language notes: banners, incomplete runs, bounds, methods.")]
    reviews: Annotated[Reviews | None, Meta(description="Independent review findings of the selected revision; absent without a reviewer.")] = None
    actual_calls: Annotated[ActualCalls | None, Meta(description="Coding sessions actually launched, discarded attempts included (null in results written before it was recorded).")] = None
    references: Annotated[dict[str, dict[str, ReferenceValue]], Meta(description="Task → metric → the task's solution/solution.patch applied to the starting source and measured with the "
                               "attempts' line, complexity and unused-code collectors, once per task and measurement revision "
                               "(code measures are shown as a ratio to it; ratio gates divide by it). Empty in reports made before it existed.")] = {}
    reference_ratios: Annotated[dict[str, ReferenceRatios], Meta(description="Metric → each task × arm median as a ratio to the task's reference value, and "
                                "each arm's median of its task ratios. Empty in reports made before it existed.")] = {}
    code_measures: Annotated[dict[str, dict[str, CodeMeasureGroup]], Meta(description="Metric → `language|analyzer` → per task × arm medians and per-arm medians of task medians; grouped by "
                               "language and analyzer, never pooled across them (see docs/metrics.md).")] = {}
    verdicts: Annotated[list[dict[str, Any]], Meta(description="One verdict per treatment (stats.Verdict: kind better|worse|equivalent|undetermined|partial|not_exercised, "
                          "the headline sentence, effect and interval at the run's level, tokens and dollars against vanilla, more tasks needed). "
                          "Empty in reports made before it existed.")] = []
    treatments: Annotated[dict[str, dict[str, Any]], Meta(description="What was tested: arm → fingerprint, guidance bytes, skills, plugins and its frozen files (path, bytes, sha256).")] = {}
    power: Annotated[dict[str, Any] | None, Meta(description="Power before spending (stats.PowerPlan): MDE at 80% power for these tasks × repeats and tasks needed for +10/+5 pp, with its assumption.")] = None
    measurement_history: Annotated[list[MeasurementRevisionRow], Meta(description="Every measurement revision, in order.")] = []
    measurement_revisions: Annotated[list[MeasurementRevisionStatus], Meta(description="Every measurement revision as revision, status, selected (as `status --json` lists them).")] = []
    not_measured: Annotated[list[NotMeasuredRow], Meta(description="(task, measure) pairs the run does not measure, with the reason; "
                                             "empty for a run saved before the list existed.")] = []
    source_only_index: Annotated[SourceOnlyIndex | None, Meta(description="The selected source-only index.json the rows' source-only grades come from, or null when none is selected.")] = None
    sequential: Annotated[dict[str, Any] | None, Meta(description="A sequential run only (`comparison.stopping`; absent otherwise): the frozen rule, "
                          "each treatment × gate's (pass_rate, tokens, cost) anytime-valid confidence sequence after every complete task (points: task, tasks, estimate, low, high), "
                          "its own level (the run's error split over `family` sequences, Bonferroni) and `left_out` (complete tasks of unknown value, never counted as 0), "
                          "its decision (success, failure, futility) and when, whether the run was decided (decided_after complete tasks) and stopped by it, "
                          "the cost gate's frozen `price` row, the recorded decision event's data, and the sentence the report shows "
                          "(stats.SequentialState; docs/configuration.md#stopping).")] = None
    activation: Annotated[Activation | None, Meta(description="Per arm: was the package exercised (the `activation` measure folded; docs/metrics.md); absent when the run did not select that measure.")] = None
    checks: Annotated[Checks | None, Meta(description="Per arm and check: share of attempts that passed each grader beside the verifier (the `checks` measure folded; docs/metrics.md); absent when the run did not select that measure.")] = None
    generated: Annotated[Generated | None, Meta(description="Generated-guidance arms only (`treatments.<arm>.generate`; absent otherwise): each arm × task's generating session, its frozen file, SHA-256, usage and outcome, and per-arm totals (docs/configuration.md#generated-guidance-generate).")] = None


@cache
def _results_type(columns: tuple[Column, ...]) -> type:
    summary = arm_summary_type(columns)
    return msgspec.defstruct(
        "ResultsJson", [("per_task", doc(dict[str, dict[str, summary]], "Task → arm → summary."))],  # type: ignore[valid-type]  # summary is built at import from the measure registry
        bases=(ResultsJson,), frozen=True, kw_only=True, forbid_unknown_fields=True,
    )


def validate(document: Any) -> ResultsJson:
    """``document`` as a :class:`ResultsJson` of the measures registered now;
    ``msgspec.ValidationError`` names a field that does not fit."""
    return msgspec.convert(document, _results_type(summary_columns()), strict=False)
