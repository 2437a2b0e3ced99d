"""The typed schema of results.json ``reviews`` (:mod:`._report_reviews`): the selected
review revision's findings per attempt, their medians per task and arm, every revision in
evidence, and the reviewer's own token usage."""

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from ..events import UsageStatus

Num = float | int | None


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class FindingItem(_Strict, frozen=True):
    severity: Annotated[Literal["high", "medium", "low"], Meta(description="How much it matters.")]
    category: Annotated[Literal["correctness", "tests", "design", "readability", "security", "performance"], Meta(description="What it is about.")]
    title: Annotated[str, Meta(description="One line.")]
    file: Annotated[str | None, Meta(description="The file it points at.")]
    line: Annotated[int | None, Meta(description="The line it points at.")]
    detail: Annotated[str, Meta(description="The reviewer's explanation.")]


class ReviewedAttempt(_Strict, frozen=True):
    task: Annotated[str, Meta(description="Task.")]
    arm: Annotated[str, Meta(description="Arm.")]
    status: Annotated[Literal["complete", "failed", "stopped", "started", "pending"], Meta(description="complete (valid findings), failed (no valid findings: `reason`), stopped (a provider stop; "
                                       "a resume reviews it again), started or pending.")]
    reason: Annotated[str | None, Meta(description="Why the review failed.")]
    seconds: Annotated[Num, Meta(description="Wall time of the review call.")]
    findings: Annotated[int | None, Meta(description="Number of findings; null unless complete (a failed review is never zero findings).")]
    by_severity: Annotated[dict[str, int] | None, Meta(description="Severity → count.")]
    by_category: Annotated[dict[str, int] | None, Meta(description="Category → count.")]
    items: Annotated[list[FindingItem], Meta(description="The findings.")]


class FindingCounts(_Strict, frozen=True):
    findings: Annotated[Num, Meta(description="Findings (a median or a mean of medians; null without a valid review).")]
    by_severity: Annotated[dict[str, Num], Meta(description="Severity → the same statistic.")]
    by_category: Annotated[dict[str, Num], Meta(description="Category → the same statistic.")]


class TaskArmReviews(_Strict, frozen=True):
    reviewed: Annotated[int, Meta(description="Submissions with a valid review.")]
    failed: Annotated[int, Meta(description="Submissions whose review failed, stopped or is pending (left out of the median).")]
    median: Annotated[FindingCounts, Meta(description="Medians over the valid reviews.")]


class ArmReviews(_Strict, frozen=True):
    tasks_reviewed: Annotated[int, Meta(description="Tasks with at least one valid review.")]
    mean_of_task_medians: Annotated[FindingCounts, Meta(description="Each task weighs the same: the mean of its medians.")]


class ReviewerInfo(_Strict, frozen=True):
    revision: Annotated[str, Meta(description="The revision this reviewer wrote.")]
    harness: Annotated[str, Meta(description="claude, codex, or `simulated` (deterministic stand-in: no model call, not a real review).")]
    model: Annotated[str, Meta(description="Exact model.")]
    reasoning: Annotated[str | None, Meta(description="Effort.")]
    cli_version: Annotated[str | None, Meta(description="The host CLI version the reviews ran.")]
    timeout_seconds: Annotated[int, Meta(description="The review budget (reviewer.timeout_seconds, or timeout_seconds).")]
    review_criteria_sha256: Annotated[str, Meta(description="SHA-256 of the fixed criteria.")]
    simulated: Annotated[bool, Meta(description="The simulated stand-in wrote these findings.")]


class ReviewRevisionRow(_Strict, frozen=True):
    revision: Annotated[str, Meta(description="Its name.")]
    reviewer: Annotated[ReviewerInfo, Meta(description="Its reviewer.")]
    finished: Annotated[bool, Meta(description="Every assigned review ended.")]
    selected: Annotated[bool, Meta(description="The report uses it.")]
    failed_reason: Annotated[str | None, Meta(description="Why it failed (an error stopped it, or the process reviewing it ended); null when it did not fail.")] = None


class ReviewUsage(_Strict, frozen=True):
    calls: Annotated[int, Meta(description="Review calls of the selected revision (retried ones included).")]
    unknown_calls: Annotated[int, Meta(description="Calls whose usage is unknown.")]
    status: Annotated[UsageStatus, Meta(description="exact when every call's usage is exact, else lower_bound (or unknown without calls).")]
    input: Annotated[int | None, Meta(description="Summed input tokens (cached included).")]
    cached_input: Annotated[int | None, Meta(description="Summed cached input.")]
    uncached_input: Annotated[int | None, Meta(description="Summed uncached input.")]
    output: Annotated[int | None, Meta(description="Summed output tokens.")]
    total: Annotated[int | None, Meta(description="Summed totals.")]


class Reviews(_Strict, frozen=True):
    selected_revision: Annotated[str, Meta(description="The revision the counts come from.")]
    reviewer: Annotated[ReviewerInfo, Meta(description="Its reviewer.")]
    severities: Annotated[list[str], Meta(description="high, medium, low.")]
    categories: Annotated[list[str], Meta(description="correctness, tests, design, readability, security, performance.")]
    revisions: Annotated[list[ReviewRevisionRow], Meta(description="Every review revision in evidence, `initial` first.")]
    per_attempt: Annotated[dict[str, ReviewedAttempt], Meta(description="Attempt → its review (attempts with a submission).")]
    per_task: Annotated[dict[str, dict[str, TaskArmReviews]], Meta(description="Task → arm → medians.")]
    per_arm: Annotated[dict[str, ArmReviews], Meta(description="Arm → the mean of its task medians.")]
    usage: Annotated[ReviewUsage, Meta(description="Reviewer tokens, counted apart from coding usage.")]
