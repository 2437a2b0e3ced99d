"""Event value types and the event base: the shapes events carry (usage, measures, price
rows, reviewer specs, readiness rows...) and ``_Event``, whose ``seq``, ``at`` and ``v`` every
event has. See :mod:`._types` for the schema's rules."""

from typing import Annotated, Literal

import msgspec

from ._vocab import MeasureStatus, ModelStatus, UsageStatus

#: A count PluginBench itself makes (a slot, a repeat, jobs, files, bytes): never negative.
#: A log line edited to break that is refused when read, naming its line and field, like
#: any other damaged line. Token counts are not constrained: they come from the CLI, and a
#: negative one is kept and excluded from token ratios with its reason (docs/results.md).
Count = Annotated[int, msgspec.Meta(ge=0)]


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=False):
    seq: int = 0
    at: str = ""
    v: int = 1


# ---------------------------------------------------------------- value types


class SlotPlan(msgspec.Struct, frozen=True, kw_only=True):
    """One planned slot: a task × arm × repeat at a randomized position."""

    slot: Count
    task: str
    arm: str
    repeat: Count
    attempt_id: str


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """Token usage of one attempt. ``status`` is exact, lower_bound, unvalidated or unknown.

    Any counter that was not measured is ``None``; ``reason`` says why. ``native_session``
    is set only for an arm whose plugins run command hooks: hook subprocesses are
    unmetered, so the attempt's total is ``unknown`` and the native CLI session's own
    usage (with its own status) is kept there, separately and labelled.
    """

    status: UsageStatus
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    uncached_input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_output_tokens: int | None = None
    total_tokens: int | None = None
    reason: str | None = None
    native_session: "Usage | None" = None


class ChildModel(msgspec.Struct, frozen=True, kw_only=True):
    """A Codex child session that ran on another model or effort than its runner."""

    session_id: str | None
    model: str | None
    effort: str | None


class ModelRecord(msgspec.Struct, frozen=True, kw_only=True):
    """Which model and effort an attempt's sessions ran on, read from its rollouts.

    ``status`` is ``single`` (the root and every child on the runner's model and effort),
    ``mixed`` (a child on another model or effort: ``model`` is None and the attempt is
    ineligible) or ``unknown`` (a session's model could not be read; ``reason`` says why).
    """

    status: ModelStatus
    model: str | None
    effort: str | None = None
    children: int | None = None
    mismatched: list[ChildModel] = []
    reason: str | None = None


class Measure(msgspec.Struct, frozen=True, kw_only=True):
    """One measured value, or an explicit unknown with a reason."""

    value: float | int | None
    unit: str
    status: MeasureStatus = "measured"
    reason: str | None = None
    #: the language and analyzer a code measure was taken with (reports group by them and
    #: never pool across them); ``None`` for measures that have neither (tokens, lines)
    language: str | None = None
    analyzer: str | None = None


class FrozenPrice(msgspec.Struct, frozen=True, kw_only=True):
    """The price row a sequential run's cost gate prices every attempt with, frozen at
    creation so the decision stays a fold of the log (a later edit of ``prices.json`` or a
    newer bundled table changes the report's dollars, never the sequence)."""

    model: str
    #: dollars per million tokens: uncached input, cached input, output
    input_per_million: float
    cached_input_per_million: float
    output_per_million: float
    #: the table's date and which table it was (``run``: the config's ``prices``; ``bundled``)
    as_of: str
    source: str


class StoppingSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential run's stopping rule as frozen at creation (``comparison.stopping`` with
    the run's ``statistics.confidence_level``); see docs/configuration.md#stopping."""

    level: float
    min_tasks: int
    max_tasks: int | None
    smallest_effect: float
    token_factor: float | None = None
    ratio_bound: float = 4.0
    #: the cost gate's factor (dollars-per-attempt ratio), priced with ``price``; None: no cost gate
    cost_factor: float | None = None
    price: FrozenPrice | None = None
    #: how the run's error is shared among its gates: ``bonferroni`` (every treatment × gated
    #: metric gets an equal share); ``none`` in logs written before this field existed
    multiplicity: Literal["bonferroni", "none"] = "none"


class ReviewerSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Who reviews: harness (claude, codex, or the labelled ``simulated`` stand-in), exact
    model, effort, its host CLI version, the review budget and the fixed criteria's digest."""

    harness: str
    model: str
    reasoning: str | None
    cli_version: str | None
    timeout_seconds: Count
    criteria_sha256: str


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One review finding, as the reviewer's response schema requires it."""

    severity: str
    category: str
    title: str
    file: str | None = None
    line: int | None = None
    detail: str = ""


class ClusterNode(msgspec.Struct, frozen=True, kw_only=True):
    """A worker node of a cluster backend that takes attempts: its name and coding slots."""

    name: str
    jobs: int


class CacheDecision(msgspec.Struct, frozen=True, kw_only=True):
    """What the vanilla cache said for one vanilla repeat: ``hit`` (reused), ``miss``
    (no entry), ``rejected`` (an entry failed admission; coded fresh) or ``kept`` (the
    run had already started or reused this attempt)."""

    repeat: int
    attempt_id: str
    decision: str
    reason: str | None = None


class ReadinessRow(msgspec.Struct, frozen=True, kw_only=True):
    """One task's readiness for one measure: ``ready``, ``not_configured`` or ``broken``."""

    task: str
    measure: str
    state: str  # ready | not_configured | broken
    reason: str | None = None
    #: what the ready collector is (format, analyzer and version, where its profile came from)
    detail: str | None = None


class NotMeasured(msgspec.Struct, frozen=True, kw_only=True):
    """A (task, measure) pair the run does not measure, and why."""

    task: str
    measure: str
    reason: str
