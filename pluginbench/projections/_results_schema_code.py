"""The typed schema of results.json ``code_measures`` (:mod:`._report_code`)."""

from typing import Annotated, Literal

import msgspec
from msgspec import Meta


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


Num = float | int | None
CodeCellStatus = Literal["measured", "unknown", "not_applicable"]


class CodeMeasureCell(_Strict, frozen=True):
    median: Annotated[Num, Meta(description="Median over the attempts whose value is measured; null when none is.")]
    n: Annotated[int, Meta(description="Attempts with a measured value.")]
    unknown: Annotated[int, Meta(description="Attempts whose value is unknown (each listed in missing_values with its reason).")]
    reasons: Annotated[list[str], Meta(description="The distinct reasons of the unknown and not-applicable values.")] = []
    status: Annotated[CodeCellStatus, Meta(description="measured (a median exists), not_applicable (every value is not applicable: the measure has no meaning for the task's language) or unknown.")] = "measured"
    not_applicable: Annotated[int, Meta(description="Attempts whose value is not applicable (never counted as unknown or missing).")] = 0
    reference: Annotated[Num, Meta(description="The task's reference solution's value of this metric (`references`), or null when it has none.")] = None
    ratio_to_reference: Annotated[Num, Meta(description="median / reference; null without a median or a positive reference.")] = None


class CodeMeasureArm(_Strict, frozen=True):
    median_of_task_medians: Annotated[Num, Meta(description="Each task weighs the same: the median of the task medians.")]
    tasks: Annotated[int, Meta(description="Tasks with a median.")]
    mean_of_task_medians: Annotated[Num, Meta(description="Each task weighs the same: the mean of the task medians (the overview's statistic).")] = None
    unknown_tasks: Annotated[list[str], Meta(description="Tasks where the arm has attempts but no measured value in this group (never counted as 0).")] = []
    not_applicable_tasks: Annotated[list[str], Meta(description="Tasks where every value of the arm is not applicable (distinct from unknown_tasks).")] = []
    delta_vs_vanilla: Annotated[Num, Meta(description="Treatments only: the mean over the tasks both arms have a median for of (this arm's median − vanilla's); null when there is none.")] = None
    paired_tasks: Annotated[int | None, Meta(description="Treatments only: the tasks delta_vs_vanilla is taken over.")] = None
    delta_low: Annotated[Num, Meta(description="Treatments only: the lower end of delta_vs_vanilla's sign-flip interval at delta_level (the page's method and level); null with too few paired tasks.")] = None
    delta_high: Annotated[Num, Meta(description="Treatments only: the upper end of that interval.")] = None
    delta_level: Annotated[float | None, Meta(description="Treatments only: the interval's two-sided confidence level (statistics.confidence_level).")] = None
    delta_status: Annotated[str | None, Meta(description="Treatments only: ok, too_few_tasks or no_tasks.")] = None
    better: Annotated[Literal["lower", "higher"] | None, Meta(description="Treatments only: the metric's better direction as its measure declares it; null for a descriptive count.")] = None
    reading: Annotated[Literal["better", "worse", "unclear", "descriptive"] | None, Meta(description="Treatments only: better / worse (the whole interval on that side of 0 in the better direction), unclear (it spans 0 or there are too few tasks), descriptive (no better direction).")] = None


class CodeMeasureGroup(_Strict, frozen=True):
    language: Annotated[str | None, Meta(description="The language; `any` for a language-independent measure (iterations, duplicated test lines); null when no analyzer said.")]
    analyzer: Annotated[str | None, Meta(description="The analyzer (or coverage format) and version; null when not known.")]
    unit: Annotated[str, Meta(description="The unit.")]
    per_task: Annotated[dict[str, dict[str, CodeMeasureCell]], Meta(description="Task → arm → median.")]
    per_arm: Annotated[dict[str, CodeMeasureArm], Meta(description="Arm → the median and mean of its task medians.")]
    gate_name: Annotated[str | None, Meta(description="The metric's name in a gates file, or null when it is not gateable.")] = None
