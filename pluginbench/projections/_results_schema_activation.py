"""The typed schema of results.json ``activation`` (:mod:`._report_activation`)."""

from typing import Annotated, Literal

import msgspec
from msgspec import Meta


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class ActivationCounts(_Strict, frozen=True):
    used: Annotated[int, Meta(description="Attempts that used it (or, for `any`, used some treatment component).")]
    not_used: Annotated[int, Meta(description="Attempts whose traces were read completely and show no use.")]
    unknown: Annotated[int, Meta(description="Attempts whose traces cannot tell (missing or incomplete, or evidence the CLI never records).")]
    rate: Annotated[float | None, Meta(description="used / (used + not_used): the share of attempts that exercised it; null when no attempt is known.")]


class ComponentActivation(ActivationCounts, frozen=True):
    owner: Annotated[Literal["treatment", "task"], Meta(description="The arm's treatment, or the task repository's own (the same on every arm).")]
    exercised: Annotated[bool | None, Meta(description="true: some attempt used it; false: every attempt is known and none did; null: unknown.")]
    label: Annotated[Literal["exercised", "not exercised", "unknown"], Meta(description="The words the report shows.")]
    median_first_turn: Annotated[float | int | None, Meta(description="Median root-session model turn of the first use, over the attempts that used it (0 = before the first reply).")]


class OutcomeSplit(_Strict, frozen=True):
    attempts: Annotated[int, Meta(description="Attempts in this group.")]
    decided: Annotated[int, Meta(description="Of them, attempts with a decided outcome (pass, overlap pass, fail, empty).")]
    passes: Annotated[int, Meta(description="Confirmed passes.")]
    pass_rate: Annotated[float | None, Meta(description="passes / decided; null when none is decided.")]


class OutcomesByActivation(_Strict, frozen=True):
    used: Annotated[OutcomeSplit, Meta(description="Attempts that used some treatment component.")]
    not_used: Annotated[OutcomeSplit, Meta(description="Attempts known to have used none.")]
    note: Annotated[str, Meta(description="Descriptive, not causal.")]


class ArmActivation(_Strict, frozen=True):
    attempts: Annotated[int, Meta(description="Complete, eligible attempts of the arm.")]
    exercised: Annotated[bool | None, Meta(description="true: some attempt used a treatment component; false: every attempt is known and none did; null: unknown or no components.")]
    label: Annotated[Literal["exercised", "not exercised", "unknown", "no components"], Meta(description="The words shown next to the arm's verdict.")]
    any: Annotated[ActivationCounts, Meta(description="Per attempt: used any treatment component (measure `activation_any`).")]
    unknown_reasons: Annotated[list[str], Meta(description="Why `activation_any` is unknown, distinct reasons.")]
    components: Annotated[dict[str, ComponentActivation], Meta(description="Component (`skill:<name>`, `agent:<type>`, `hook:<plugin>:<event>[:<matcher>]`, `command:…`, `mcp:…`; task-owned ones `task:…`) → its counts.")]
    outcomes_by_activation: Annotated[OutcomesByActivation, Meta(description="Pass rate of attempts that used the package vs those that did not (descriptive).")]


class Activation(_Strict, frozen=True):
    per_arm: Annotated[dict[str, ArmActivation], Meta(description="Arm → was its package exercised.")]
    note: Annotated[str, Meta(description="How to read the outcome split.")]


class CheckCounts(_Strict, frozen=True):
    passed: Annotated[int, Meta(description="Attempts that passed the check.")]
    failed: Annotated[int, Meta(description="Attempts that failed it.")]
    unknown: Annotated[int, Meta(description="Attempts where it could not run (never counted as a fail).")]
    rate: Annotated[float | None, Meta(description="passed / (passed + failed); null when none is known.")]
    unknown_reasons: Annotated[list[str], Meta(description="Distinct reasons of the unknowns (at most 5).")]


class GraderTokens(_Strict, frozen=True):
    attempts: Annotated[int, Meta(description="Attempts of the arm whose llm checks were graded.")]
    total_tokens: Annotated[int | None, Meta(description="Their grader calls' tokens; `null` (unknown) when any attempt's total is unknown, never a partial sum.")]
    unknown_reasons: Annotated[list[str], Meta(description="Distinct reasons of the unknown totals (at most 5).")]


class Checks(_Strict, frozen=True):
    names: Annotated[list[str], Meta(description="Every check name seen (`check:<name>` values), sorted.")]
    per_arm: Annotated[dict[str, dict[str, CheckCounts]], Meta(description="Arm → check name → its counts.")]
    note: Annotated[str, Meta(description="Checks never change correctness.")]
    grader: Annotated[dict[str, GraderTokens] | None, Meta(description="Arm → the tokens the llm checks' grader calls used on its attempts (the reviewer's CLI; counted apart from coding usage, and in the cost ceiling); absent when no attempt has an llm check.")] = None
