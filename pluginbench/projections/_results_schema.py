"""The typed schema of ``report/results.json`` (schema version 2).

:class:`ResultsJson` describes every field the report writes, with its meaning; the
reference table in ``docs/results.md`` is generated from it (``tools/gen_docs.py``), and a
test converts every report the test suite builds through it with unknown fields forbidden,
so a field added to the report without its description here fails that test.
"""

# No ``from __future__ import annotations``: the ``doc(...)`` annotations are evaluated here.

from functools import cache
from typing import Annotated, Any, Literal

import msgspec

from ..events import AttemptState, MeasureStatus, Outcome, UsageStatus
from ..measures import Column, all_columns


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
    task_id: doc(str, "The task id (the link's last folder).")
    url: doc(str, "The `tasks.urls` link as written.")
    pinned_url: doc(str, "The same link at the commit its ref named when the run was created.")
    commit: doc(str, "That commit.")
    tree: doc(str, "Git's tree id of the task folder at that commit.")
    fingerprint: doc(str, "SHA-256 over every file's path, mode and content.")


class RunInfo(_Strict, frozen=True):
    name: doc(str, "The evaluation's name.")
    harness: doc(str | None, "claude, codex, or a control (simulated, nop, oracle).")
    model: doc(str | None, "The exact model the run used.")
    reasoning: doc(str | None, "Requested reasoning effort.")
    cli_version: doc(str | None, "The agent CLI version the run resolved (pinned or read from the host); null for controls.")
    cli_version_source: doc(str | None, "`runner.cli_version`, `host`, or null.")
    backend: doc(str | None, "The execution backend's registered name (local, docker, ...).")
    isolation: doc(str | None, "The effective isolation (none, bubblewrap, docker).")
    isolated: doc(bool, "Whether attempts ran sandboxed.")
    simulated: doc(bool, "The simulated stand-in agent coded the attempts: the numbers are not a real agent's.")
    probe: doc(bool, "The agent talked to PluginBench's loopback model server, not a real model.")
    seed: doc(int | None, "The run's seed (attempt order).")
    repeats: doc(int | None, "Attempts per task and arm.")
    jobs: doc(int | None, "Concurrent coding attempts.")
    timeout_seconds: doc(int | None, "The agent timeout per attempt.")
    capabilities: doc(dict[str, Any], "The capability record: per setting (subagents, max_threads, max_depth) its "
                      "`value`, `enforcement` (enforced, not_enforced, not_applicable) and `how`; `not_enforced` "
                      "lists the settings the harness cannot enforce.")
    measurements: doc(list[str], "Selected measurements (tokens, time, lines).")
    evaluation_sha256: doc(str | None, "SHA-256 of the frozen evaluation.json.")
    pluginbench_version: doc(str | None, "The PluginBench version that made the run.")
    attempts_total: doc(int, "Live attempts (discarded ones excluded).")
    attempts_complete: doc(int, "Live attempts that are complete.")
    task_sources: doc(
        list[TaskSource] | None,
        "A `tasks.urls` run only: each task's pinned link, from the run's frozen evidence/remote/pins.json (never resolved again).",
    ) = None


class Runner(_Strict, frozen=True):
    harness: doc(str | None, "The harness.")
    model: doc(str | None, "The model.")
    reasoning: doc(str | None, "Requested reasoning effort.")


class EffectiveLimits(_Strict, frozen=True):
    agent_timeout_seconds: doc(int | float | None, "The agent timeout the task's attempts ran with.")


class TaskLimits(_Strict, frozen=True):
    effective: doc(EffectiveLimits, "Limits in effect for the task.")


class MeasurementSettings(_Strict, frozen=True):
    measurements: doc(list[str], "Selected measurements.")


class ComparisonReviewer(_Strict, frozen=True):
    revision: doc(str, "The selected review revision (`initial` is the run's own review phase).")
    harness: doc(str, "The reviewer's harness (claude, codex, or the labelled `simulated` stand-in).")
    model: doc(str, "The reviewer's exact model.")
    reasoning: doc(str | None, "The reviewer's effort.")


class ComparisonIdentity(_Strict, frozen=True):
    runner: doc(Runner, "Harness, model and requested reasoning.")
    harness_version: doc(str | None, "The resolved agent CLI version.")
    capabilities: doc(dict[str, Any], "The capability record, as `run.capabilities` (with `not_enforced`).")
    tasks: doc(dict[str, str], "Task → the frozen task's fingerprint.")
    task_limits: doc(dict[str, TaskLimits], "Task → its effective limits.")
    measurement_settings: doc(MeasurementSettings, "The measurement scope.")
    reviewer: doc(ComparisonReviewer | None, "The reviewer of the selected review revision; absent without a reviewer.") = None
    review_criteria_sha256: doc(str | None, "SHA-256 of the fixed review criteria; absent without a reviewer.") = None


class TokenProvenance(_Strict, frozen=True):
    harness: doc(str | None, "The harness whose receipts the counts come from.")
    cli_version: doc(str | None, "Its CLI version.")
    statuses: doc(dict[str, int], "Token status → number of attempts.")
    lower_bound_attempts: doc(list[str], "Attempts whose counts are only a lower bound.")
    unknown_attempts: doc(list[str], "Attempts whose usage is unknown.")


class NativeSessionTokens(_Strict, frozen=True):
    input: doc(int | None, "The native session's input tokens, cached included.")
    cached_input: doc(int | None, "Its cached part.")
    uncached_input: doc(int | None, "input − cached_input.")
    output: doc(int | None, "Its output tokens.")
    reasoning_output: doc(int | None, "Its reasoning output tokens.")
    total: doc(int | None, "input + output of the native session only.")
    status: doc(TOKEN_STATUS, "The native session's own status (exact when validated).")
    reason: doc(str | None, "Starts `native CLI session only (hook subprocesses excluded)`.")
    native_session: doc(None, "Always null here.")
    label: doc(str, "Says these are the native CLI session's tokens only, without the unmetered hook subprocesses.")


class Tokens(_Strict, frozen=True):
    input: doc(int | None, "All input tokens, cached included.")
    cached_input: doc(int | None, "The part of input read from the prompt cache.")
    uncached_input: doc(int | None, "input − cached_input.")
    output: doc(int | None, "Output tokens.")
    reasoning_output: doc(int | None, "Reasoning output tokens (a subset of output); null when the harness records none.")
    total: doc(int | None, "input + output.")
    status: doc(TOKEN_STATUS, "exact, lower_bound, unvalidated or unknown (then every counter is null).")
    reason: doc(str | None, "Why a counter is unknown or only a bound.")
    native_session: doc(
        NativeSessionTokens | None,
        "Only for an arm whose plugins run command hooks (then the total is unknown: hook subprocesses are "
        "unmetered): the native CLI session's own usage, kept apart and labelled; null otherwise.",
    )


class MeasureValue(_Strict, frozen=True):
    value: doc(Num, "The value, or null when unknown.")
    unit: doc(str, "lines, files, ratio, tests, …")
    status: doc(MeasureStatus, "measured or unknown.")
    reason: doc(str | None, "Why it is unknown.")
    language: doc(str | None, "Code measures only: the language it was measured in (reports group by it, never pool).") = None
    analyzer: doc(str | None, "Code measures only: the analyzer or coverage format and its version.") = None


class CodeMeasureCell(_Strict, frozen=True):
    median: doc(Num, "Median over the attempts whose value is measured; null when none is.")
    n: doc(int, "Attempts with a measured value.")
    unknown: doc(int, "Attempts whose value is unknown (each listed in missing_values with its reason).")


class CodeMeasureArm(_Strict, frozen=True):
    median_of_task_medians: doc(Num, "Each task weighs the same: the median of the task medians.")
    tasks: doc(int, "Tasks with a median.")


class CodeMeasureGroup(_Strict, frozen=True):
    language: doc(str | None, "The language.")
    analyzer: doc(str | None, "The analyzer (or coverage format) and version.")
    unit: doc(str, "The unit.")
    per_task: doc(dict[str, dict[str, CodeMeasureCell]], "Task → arm → median.")
    per_arm: doc(dict[str, CodeMeasureArm], "Arm → the median of its task medians.")


class MeasurementRevisionRow(_Strict, frozen=True):
    revision: doc(str, "The measurement revision's name (`pluginbench measure --revision`).")
    status: doc(Literal["selected", "not_selected", "collecting"], "selected (the report uses it), not_selected, or "
                "collecting (left unfinished).")
    selected: doc(bool, "Whether the report reads it.")
    measurements: doc(list[str], "Every collector measure it collected.")
    added: doc(list[str], "The measures it added to the run.")
    reason: doc(str | None, "Why it was not selected (e.g. it lost an observation).")
    attempts: doc(int, "Submissions it measured.")


class NotMeasuredRow(_Strict, frozen=True):
    task: doc(str, "The task.")
    measure: doc(str, "The measure (e.g. coverage).")
    reason: doc(str, "Its readiness state and why (not_configured or broken).")


class ReferenceValue(_Strict, frozen=True):
    status: doc(Literal["measured", "unavailable"], "measured, or unavailable (no solution/solution.patch, lines not selected).")
    value: doc(Num, "The reference solution's value, or null when unavailable.")
    reason: doc(str | None, "Why it is unavailable.")


class SourceOnlyGrading(_Strict, frozen=True):
    status: doc(Literal["graded", "unavailable", "pending"], "graded, unavailable (final for this filter revision) or pending (retried by the next `pluginbench run <run-dir>`).")
    source_only_filter: doc(str, "The filter revision the grade was made under.")
    reward: doc(Num, "The replay's raw verifier reward (the native one when nothing was removed).")
    grading: doc(dict[str, Num] | None, "The replay's reward.json keys beyond reward.")
    removed_test_files: doc(list[str], "The agent's test files left out of the graded patch.")
    kept_reference_solution_files: doc(list[str], "Test-looking files kept because the reference solution changes them.")
    kept_test_setup_files: doc(list[str], "Test data, fixtures, examples and shared config outside test dirs that stayed.")
    filtered_patch_sha256: doc(str | None, "SHA-256 of the patch that was graded.")
    nothing_removed: doc(bool, "No test file was removed.")
    native_result_reused: doc(bool, "The native result was reused instead of replayed.")
    trusted_test_overlap: doc(list[str], "Kept paths the hidden tests still overwrite.")
    unavailable: doc(str | None, "Why no source-only grade can exist under this filter revision.")
    pending: doc(str | None, "Why the grade is pending (the grader image or starting source is gone).")
    reason: doc(str | None, "The unavailable or pending reason, or why the replay gave no reward.")
    seconds: doc(Num, "Wall-clock seconds the grade added (about 0 when reused).")
    evidence: doc(str | None, "The grade's evidence folder, relative to the run directory.")


class AttemptRow(_Strict, frozen=True):
    attempt_id: doc(str, "`<task>__<arm>__r<repeat>` (a replacement adds `~N`).")
    slot: doc(int, "The planned slot.")
    task: doc(str, "Task id.")
    arm: doc(str, "vanilla or a treatment.")
    repeat: doc(int, "Repeat number.")
    state: doc(STATE, "pending, running, complete or interrupted.")
    outcome: doc(OUTCOME | None, "pass, overlap_pass, fail, empty or unknown; null when not complete.")
    outcome_reason: doc(str | None, "Why the outcome is empty or unknown, or why the attempt is not complete.")
    reward: doc(Num, "The hidden verifier's reward, or null.")
    tokens: doc(Tokens, "Coding-session token usage.")
    coding_seconds: doc(Num, "Wall time of the agent process.")
    measures: doc(dict[str, MeasureValue], "Column → value, one per column of each selected collector measure (the registry in `pluginbench/measures/`; see docs/metrics.md).")
    evidence: doc(str, "The attempt's evidence folder, relative to the run directory.")
    reused: doc(bool, "Imported from the vanilla cache instead of coded in this run.")
    origin_cohort: doc(str | None, "For a reused attempt: the cache cohort it came from.")
    model_record: doc(dict[str, Any] | None, "Codex: the model and effort its sessions ran on (`status` single, mixed "
                      "or unknown, `model` null unless single, `mismatched` children); null where not read.")
    ineligible: doc(str | None, "Why the attempt is left out of every comparison (a Codex child ran on another "
                    "model or effort), or null.")
    native_grading: doc(dict[str, Num] | None, "Every numeric key of the verifier's reward.json beyond reward (partial credit: f2p/p2p totals and passes, partial); null for reward.txt.")
    overlap_paths: doc(list[str], "Paths the patch changes that the hidden test.patch replaces (non-empty makes a pass an overlap_pass).")
    source_only_reward: doc(Num, "The source-only grade's raw verifier reward; compare with the native reward, not the outcome.")
    source_only_grading: doc(SourceOnlyGrading | None, "The source-only grade, or null when the attempt has none.")


class _ArmSummaryBase(_Strict, frozen=True):
    attempts: doc(int, "Assigned attempts.")
    complete: doc(int, "Complete attempts.")
    passes: doc(int, "Attempts that passed (confirmed passes).")
    overlap_passes: doc(int, "Overlap passes: reward 1 and every listed test passed, but the patch changed paths the hidden tests replace.")
    fails: doc(int, "Attempts that failed.")
    empties: doc(int, "Attempts with an empty patch (counted as failures in the rate).")
    unknowns: doc(int, "Attempts with unknown correctness (left out of the rate).")
    pass_rate: doc(Num, "passes / (passes + overlap_passes + fails + empties), or null.")
    pass_rate_with_overlap: doc(Num, "(passes + overlap_passes) / the same denominator, or null.")
    wilson_95: doc(list[float] | None, "Wilson 95% interval of the pass rate, or null.")
    mean_input_output_tokens: doc(Num, "Mean input + output tokens (null when any attempt lacks them).")
    median_total_tokens: doc(Num, "Median total tokens.")
    median_coding_seconds: doc(Num, "Median coding seconds.")


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


ArmSummary = arm_summary_type(summary_columns())


class SignTest(_Strict, frozen=True):
    positives: doc(int, "Tasks where the treatment's pass rate is higher.")
    negatives: doc(int, "Tasks where it is lower.")
    ties: doc(int, "Tasks with equal rates (excluded from the test).")
    p: doc(Num, "Exact two-sided p-value; 1 when all tie; null without usable tasks.")


class Summary(_Strict, frozen=True):
    statistic: doc(str, "mean_pass_rate_difference or geometric_mean_token_ratio.")
    estimate: doc(Num, "The mean difference or geometric-mean ratio over usable tasks.")
    low: doc(Num, "Lower end of the 90% percentile-bootstrap interval (a one-sided 95% bound).")
    high: doc(Num, "Upper end of the interval.")
    tasks: doc(int, "Usable task pairs.")
    status: doc(str, "ok, too_few_tasks (fewer than min_tasks) or no_tasks.")
    level: doc(float, "0.9.")
    draws: doc(int, "10,000 bootstrap draws.")
    seed: doc(int, "Bootstrap seed 0.")
    min_tasks: doc(int, "6.")
    sign_test: doc(SignTest | None, "pass_rate only: the exact sign test.") = None
    basis: doc(str | None, "tokens only: input_plus_output.") = None


class DeltaSummary(_Strict, frozen=True):
    pass_rate: doc(Summary, "Mean pass-rate difference (treatment − vanilla).")
    tokens: doc(Summary, "Geometric-mean token ratio (treatment / vanilla).")


class TaskDelta(_Strict, frozen=True):
    pass_rate_difference: doc(Num, "Treatment pass rate − vanilla's on the task.")
    pass_rate_excluded: doc(str | None, "Why the task is left out of pass-rate statistics.")
    token_ratio: doc(Num, "Treatment mean input+output tokens / vanilla's.")
    tokens_excluded: doc(str | None, "Why the task is left out of token statistics.")


class Exclusion(_Strict, frozen=True):
    task: doc(str, "The task.")
    reason: doc(str, "Why it is excluded.")


class Exclusions(_Strict, frozen=True):
    pass_rate: doc(list[Exclusion], "Tasks left out of pass-rate statistics.")
    tokens: doc(list[Exclusion], "Tasks left out of token statistics.")


class Delta(_Strict, frozen=True):
    against: doc(str, "The comparator arm (vanilla).")
    per_task: doc(dict[str, TaskDelta], "Task → its paired values.")
    summary: doc(DeltaSummary, "Summaries over usable tasks.")
    excluded: doc(Exclusions, "Excluded tasks with reasons.")


class MissingValue(_Strict, frozen=True):
    scope: doc(Literal["attempt", "task_arm"], "An attempt's value or a task × arm summary.")
    attempt_id: doc(str | None, "The attempt (attempt scope).")
    attempt_ids: doc(list[str], "Attempts lacking the value.")
    task: doc(str, "The task.")
    arm: doc(str, "The arm.")
    field: doc(str, "The unknown field (tokens.input, measures.x, per_task.pass_rate, …).")
    reason: doc(str, "Why it is unknown.")


class DiscardedAttempt(_Strict, frozen=True):
    attempt_id: doc(str, "The discarded attempt.")
    slot: doc(int, "Its slot.")
    task: doc(str, "Task.")
    arm: doc(str, "Arm.")
    repeat: doc(int, "Repeat.")
    replaced_by: doc(str | None, "The attempt that replaced it.")
    reason: doc(str | None, "Why it was discarded.")
    tokens: doc(Tokens, "Its token use (counted nowhere else).")


class ReusedAttempt(_Strict, frozen=True):
    attempt_id: doc(str, "The reused attempt.")
    task: doc(str, "Task.")
    arm: doc(str, "Arm (vanilla).")
    repeat: doc(int, "Repeat.")
    origin_cohort: doc(str | None, "The cache cohort, relative to the cache root.")
    origin_entry: doc(str | None, "The cache entry.")
    origin_run: doc(str | None, "The run that coded it.")
    origin_attempt: doc(str | None, "Its attempt id there.")


class FindingItem(_Strict, frozen=True):
    severity: doc(Literal["high", "medium", "low"], "How much it matters.")
    category: doc(Literal["correctness", "tests", "design", "readability", "security", "performance"], "What it is about.")
    title: doc(str, "One line.")
    file: doc(str | None, "The file it points at.")
    line: doc(int | None, "The line it points at.")
    detail: doc(str, "The reviewer's explanation.")


class ReviewedAttempt(_Strict, frozen=True):
    task: doc(str, "Task.")
    arm: doc(str, "Arm.")
    status: doc(Literal["complete", "failed", "stopped", "started", "pending"],
                "complete (valid findings), failed (no valid findings: `reason`), stopped (a provider stop; "
                "a resume reviews it again), started or pending.")
    reason: doc(str | None, "Why the review failed.")
    seconds: doc(Num, "Wall time of the review call.")
    findings: doc(int | None, "Number of findings; null unless complete (a failed review is never zero findings).")
    by_severity: doc(dict[str, int] | None, "Severity → count.")
    by_category: doc(dict[str, int] | None, "Category → count.")
    items: doc(list[FindingItem], "The findings.")


class FindingCounts(_Strict, frozen=True):
    findings: doc(Num, "Findings (a median or a mean of medians; null without a valid review).")
    by_severity: doc(dict[str, Num], "Severity → the same statistic.")
    by_category: doc(dict[str, Num], "Category → the same statistic.")


class TaskArmReviews(_Strict, frozen=True):
    reviewed: doc(int, "Submissions with a valid review.")
    failed: doc(int, "Submissions whose review failed, stopped or is pending (left out of the median).")
    median: doc(FindingCounts, "Medians over the valid reviews.")


class ArmReviews(_Strict, frozen=True):
    tasks_reviewed: doc(int, "Tasks with at least one valid review.")
    mean_of_task_medians: doc(FindingCounts, "Each task weighs the same: the mean of its medians.")


class ReviewerInfo(_Strict, frozen=True):
    revision: doc(str, "The revision this reviewer wrote.")
    harness: doc(str, "claude, codex, or `simulated` (deterministic stand-in: no model call, not a real review).")
    model: doc(str, "Exact model.")
    reasoning: doc(str | None, "Effort.")
    cli_version: doc(str | None, "The host CLI version the reviews ran.")
    timeout_seconds: doc(int, "The review budget (reviewer.timeout_seconds, or timeout_seconds).")
    review_criteria_sha256: doc(str, "SHA-256 of the fixed criteria.")
    simulated: doc(bool, "The simulated stand-in wrote these findings.")


class ReviewRevisionRow(_Strict, frozen=True):
    revision: doc(str, "Its name.")
    reviewer: doc(ReviewerInfo, "Its reviewer.")
    finished: doc(bool, "Every assigned review ended.")
    selected: doc(bool, "The report uses it.")


class ReviewUsage(_Strict, frozen=True):
    calls: doc(int, "Review calls of the selected revision (retried ones included).")
    unknown_calls: doc(int, "Calls whose usage is unknown.")
    status: doc(TOKEN_STATUS, "exact when every call's usage is exact, else lower_bound (or unknown without calls).")
    input: doc(int | None, "Summed input tokens (cached included).")
    cached_input: doc(int | None, "Summed cached input.")
    uncached_input: doc(int | None, "Summed uncached input.")
    output: doc(int | None, "Summed output tokens.")
    total: doc(int | None, "Summed totals.")


class Reviews(_Strict, frozen=True):
    selected_revision: doc(str, "The revision the counts come from.")
    reviewer: doc(ReviewerInfo, "Its reviewer.")
    severities: doc(list[str], "high, medium, low.")
    categories: doc(list[str], "correctness, tests, design, readability, security, performance.")
    revisions: doc(list[ReviewRevisionRow], "Every review revision in evidence, `initial` first.")
    per_attempt: doc(dict[str, ReviewedAttempt], "Attempt → its review (attempts with a submission).")
    per_task: doc(dict[str, dict[str, TaskArmReviews]], "Task → arm → medians.")
    per_arm: doc(dict[str, ArmReviews], "Arm → the mean of its task medians.")
    usage: doc(ReviewUsage, "Reviewer tokens, counted apart from coding usage.")


class CostValue(_Strict, frozen=True):
    usd: doc(Num, "Dollars, or null when unknown.")
    lower_bound: doc(bool, "True when some token count behind it is only a lower bound.")
    basis: doc(str, "Which price row and date, which token counts.")
    reason: doc(str | None, "Why the dollars are unknown.")


class PriceRow(_Strict, frozen=True):
    input_per_million: doc(float, "Dollars per million uncached input tokens.")
    cached_input_per_million: doc(float, "Dollars per million cached input tokens.")
    output_per_million: doc(float, "Dollars per million output tokens.")


class PriceTable(_Strict, frozen=True):
    as_of: doc(str, "The date the prices were read.")
    currency: doc(str, "USD.")
    models: doc(dict[str, PriceRow], "Model → its prices.")


class Costs(_Strict, frozen=True):
    prices: doc(PriceTable | None, "The run's prices.json, or null when it has none (then every dollar figure is absent).")
    reason: doc(str | None, "Why there are no dollars (no prices.json, or an invalid one).")
    attempts: doc(dict[str, CostValue], "Attempt id → its dollars.")
    per_task: doc(dict[str, dict[str, CostValue]], "Task → arm → dollars summed over its attempts.")
    arms: doc(dict[str, CostValue], "Arm → dollars summed over its attempts.")


class SourceOnlyIndex(_Strict, frozen=True):
    filter: doc(str, "The filter revision whose index is selected.")
    index: doc(str, "The selected index.json, relative to the run directory (earlier revisions' indexes stay on disk, unread).")
    sha256: doc(str, "The SHA-256 bound by the latest `source_only.selected` event in events.jsonl.")
    status: doc(Literal["verified", "changed", "missing"],
                "verified (the file's bytes match the bound SHA-256), changed or missing (its grades are then left out of the rows).")
    reason: doc(str | None, "Why the index is not verified.")


class ResultsJson(_Strict, frozen=True):
    """``report/results.json``."""

    schema_version: doc(Literal[2], "The schema version.")
    run: doc(RunInfo, "The run's identity and settings.")
    comparison_identity: doc(ComparisonIdentity, "What `compare` checks before comparing this run with another.")
    token_provenance: doc(TokenProvenance, "Where the token counts come from and how many are exact, bounds or unknown.")
    arms: doc(list[str], "vanilla first, then treatments in config order.")
    tasks: doc(list[str], "Task ids, sorted.")
    attempts: doc(list[AttemptRow], "One row per live attempt, by task, arm, repeat.")
    per_task: doc(dict[str, dict[str, ArmSummary]], "Task → arm → summary.")
    deltas: doc(dict[str, Delta], "Treatment → its paired comparison against vanilla.")
    missing_values: doc(list[MissingValue], "Every unknown value with its reason.")
    discarded_attempts: doc(list[DiscardedAttempt], "Attempts a resume replaced, with their token use.")
    reused_attempts: doc(list[ReusedAttempt], "Vanilla attempts imported from the cache, with their origin.")
    costs: doc(Costs, "Dollars per attempt, task × arm and arm from the run's dated prices.json.")
    notes: doc(list[str], "Plain-language notes: banners, incomplete runs, bounds, methods.")
    reviews: doc(Reviews | None, "Independent review findings of the selected revision; absent without a reviewer.") = None
    references: doc(
        dict[str, dict[str, ReferenceValue]],
        "Task → lines metric → the task's solution/solution.patch measured with the attempts' line collector "
        "(code measures are shown as a ratio to it; ratio gates divide by it). Empty in reports made before it existed.",
    ) = {}
    code_measures: doc(
        dict[str, dict[str, CodeMeasureGroup]],
        "Metric → `language|analyzer` → per task × arm medians and per-arm medians of task medians; grouped by "
        "language and analyzer, never pooled across them (see docs/metrics.md).",
    ) = {}
    measurement_history: doc(list[MeasurementRevisionRow], "Every measurement revision, in order.") = []
    not_measured: doc(list[NotMeasuredRow], "(task, measure) pairs the run does not measure, with the reason; "
                      "empty for a run saved before the list existed.") = []
    source_only_index: doc(
        SourceOnlyIndex | None,
        "The selected source-only index.json the rows' source-only grades come from, or null when none is selected.",
    ) = None


@cache
def _results_type(columns: tuple[Column, ...]) -> type:
    summary = arm_summary_type(columns)
    return msgspec.defstruct(
        "ResultsJson", [("per_task", doc(dict[str, dict[str, summary]], "Task → arm → summary."))],  # type: ignore[valid-type]
        bases=(ResultsJson,), frozen=True, kw_only=True, forbid_unknown_fields=True,
    )


def validate(document: Any) -> ResultsJson:
    """``document`` as a :class:`ResultsJson` of the measures registered now;
    ``msgspec.ValidationError`` names a field that does not fit."""
    return msgspec.convert(document, _results_type(summary_columns()), strict=False)
