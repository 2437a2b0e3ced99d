"""The gates file (``gates.yaml``) of ``pluginbench compare``: schema and validation.

Pure: :func:`parse_gates` takes the already-parsed YAML mapping and a file name for the
error messages, and returns a frozen :class:`GatesFile` or raises
:class:`~pluginbench.errors.InputError` naming the file, the field and the fix.

Three kinds of gate (product description, "Compare runs"):

* a **count gate** (``correctness: passes|unknown``): the candidate's count of passes (or
  of unknown correctness) against the comparator's, within ``tolerance``, over the split
  or, with ``per_task``, on each task;
* a **metric gate** (``metrics`` with ``statistic``): a point statistic of the candidate
  against the comparator's, scaled by ``factor``;
* a **bound gate** (``bound``): an endpoint of the paired sign-flip interval at
  ``confidence_level`` against a limit (``margin`` for pass-rate differences, ``factor``
  for the token ratio on the log scale) — the one-sided sign-flip test at that limit (a
  non-zero pass-rate margin: the betting test for a bounded mean, :mod:`._bounded`);
* a **cost gate** (``cost: cost_per_pass|cost_ratio``): the candidate's dollars against the
  comparator's, both priced by the same table (:mod:`._cost_gate`), within ``factor``;
* a **rate gate** (``rate`` with ``threshold``): the candidate's share of attempts with a 0/1
  value (``activation:<component>``, ``activation_any``, ``check:<name>``) against a fixed
  threshold, by the exact one-sided binomial test (:mod:`._rate_gate`); the comparator only
  chooses the candidates and is shown for context.
"""

import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from .._parsing import looks_numeric, value_at
from ..errors import InputError

#: Metric names a gate may list, as the measure table prints them.
INPUT_TOKENS = "Input tokens"
OUTPUT_TOKENS = "Output tokens"
METRICS = (
    INPUT_TOKENS,
    "Cached input tokens",
    OUTPUT_TOKENS,
    "Reasoning output tokens",
    "Total tokens",
    "Coding seconds",
    "Source lines added",
    "Source lines removed",
    "Test lines added",
    "Test lines removed",
)
TOKEN_BOUND_METRICS = frozenset((INPUT_TOKENS, OUTPUT_TOKENS))
#: Cost gate metrics (``cost:``); their definitions are :data:`._cost.COST_PER_PASS_DEFINITION`
#: and :data:`._cost.COST_RATIO_DEFINITION`.
COST_METRICS = ("cost_per_pass", "cost_ratio")
STATISTICS = ("total", "mean_of_task_medians", "mean_of_task_median_ratios")


class Gate(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One gate as written in the gates file (see the module docstring for the kinds)."""

    name: Annotated[str, msgspec.Meta(description="Unique name, printed in the gate table.")]
    against: Annotated[
        str, msgspec.Meta(description="The comparator package (an arm, e.g. vanilla); every other package is checked against it.")
    ]
    direction: Annotated[
        Literal["higher", "lower"], msgspec.Meta(description="Which way is better for the candidate.")
    ]
    correctness: Annotated[
        Literal["passes", "unknown"] | None,
        msgspec.Meta(description="A count gate on passes or on attempts with unknown correctness. Exactly one of correctness, metrics and cost."),
    ] = None
    cost: Annotated[
        Literal["cost_per_pass", "cost_ratio"] | None,
        msgspec.Meta(description="A cost gate (direction: lower): cost_per_pass, total dollars / passing attempts, must be <= factor × the comparator's; cost_ratio, mean dollars per attempt of the candidate / the comparator's, passes when the one-sided sign-flip test shows it below factor (default 1) at the page's level (the upper end of its interval <= factor; undetermined with too few tasks). Undetermined when either side's dollars are unknown (no price table, a model without a row, unknown or lower-bound tokens) or the two were priced by different tables."),
    ] = None
    per_task: Annotated[
        bool, msgspec.Meta(description="Count gates: check each task of the split instead of the split's sum.")
    ] = False
    tolerance: Annotated[
        int, msgspec.Meta(description="Count gates: attempts the candidate may be worse by (passes >= comparator − tolerance; unknowns <= comparator + tolerance).")
    ] = 0
    metrics: Annotated[
        list[str] | None,
        msgspec.Meta(description="A metric gate on the sum of these metrics per attempt: " + ", ".join(METRICS) + "."),
    ] = None
    statistic: Annotated[
        Literal["total", "mean_of_task_medians", "mean_of_task_median_ratios"] | None,
        msgspec.Meta(description="Metric gates: the sum over attempts, the mean over tasks of each task's median, or the mean over tasks of candidate median / comparator median. Omitted by bound gates."),
    ] = None
    factor: Annotated[
        float | None,
        msgspec.Meta(description="Metric gates: candidate must be <= (lower) or >= (higher) factor × comparator; for ratios, the mean ratio against factor (default 1). Token bound gates: the upper endpoint must be <= factor."),
    ] = None
    reference_floor: Annotated[
        float | None,
        msgspec.Meta(description="Ratio gates: a task whose comparator median is below it (or missing, zero, negative) is left out and listed under Missing values."),
    ] = None
    bound: Annotated[
        Literal["lower", "upper"] | None,
        msgspec.Meta(description="A bound gate on the paired sign-flip interval: lower for the pass-rate difference (with margin), upper for the geometric-mean token ratio (with factor)."),
    ] = None
    margin: Annotated[
        float | None,
        msgspec.Meta(description="Correctness bound gates: the mean pass-rate difference must be credibly above margin (e.g. -0.05) at the one-sided (1 − confidence_level) / 2: at margin 0 by the sign-flip test (exact when the arms are exchangeable), at any other margin by the betting test for a bounded mean, which assumes no symmetry (tied differences shifted by a margin are not symmetric); its lower bound is shown."),
    ] = None
    rate: Annotated[
        str | None,
        msgspec.Meta(description="A rate gate on a 0/1 value per attempt (activation:<component>, activation_any, check:<name>): the candidate's share must be >= threshold (direction: higher) or <= (lower), by the exact one-sided binomial test at (1 − confidence_level) / 2 (the Clopper–Pearson bound is shown). Exactly one of correctness, metrics, cost and rate."),
    ] = None
    threshold: Annotated[
        float | None,
        msgspec.Meta(description="Rate gates: the fixed share, between 0 and 1 exclusive (e.g. 0.8)."),
    ] = None

    @property
    def kind(self) -> str:
        """``count``, ``metric``, ``cost``, ``rate``, ``correctness_bound`` or ``token_bound``."""
        if self.rate is not None:
            return "rate"
        if self.cost is not None:
            return "cost"
        if self.bound is not None:
            return "correctness_bound" if self.correctness is not None else "token_bound"
        return "count" if self.correctness is not None else "metric"


class GatesFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The whole gates file: the overlap-pass policy, named splits, and the gates."""

    count_overlap_passes: Annotated[
        bool,
        msgspec.Meta(description="Required: whether an overlap pass counts as a pass (true) or a fail (false); never an unknown."),
    ]
    gates: Annotated[list[Gate], msgspec.Meta(description="The gates, decided per split for every candidate package.")]
    candidate: Annotated[
        str | None,
        msgspec.Meta(description="The package under test (e.g. v2): only its gates decide the exit code; every other package's rows (v1 against vanilla) are shown for context. compare --candidate overrides it."),
    ] = None
    confidence_level: Annotated[
        float,
        msgspec.Meta(gt=0.5, lt=1.0, description="The two-sided level of every interval compare shows (default 0.90); each bound gate is the one-sided sign-flip test at (1 − level) / 2."),
    ] = 0.90
    splits: Annotated[
        dict[str, list[str]],
        msgspec.Meta(description="Named task subsets; each gets its own tables besides the all-tasks section."),
    ] = {}

    @property
    def comparators(self) -> list[str]:
        """Every package some gate compares against, in first-mention order."""
        return list(dict.fromkeys(g.against for g in self.gates))


_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")


def _field_of(message: str) -> tuple[str, str | None]:
    m = _AT.search(message)
    if not m:
        return message, None
    return message[: m.start()], m.group("path").lstrip(".") or None


_DOCS_FIX = "see docs/compare.md for every gates field and its type"
_GATE_PATH = re.compile(r"^gates\[\d+\]")


def _allowed(field: str | None) -> tuple[str, ...]:
    """The literal values the gates schema allows at ``field`` (``gates[0].direction``), if any."""
    struct: type[msgspec.Struct] = Gate if field and _GATE_PATH.match(field) else GatesFile
    name = (field or "").rsplit(".", 1)[-1]
    info = msgspec.inspect.type_info(struct)
    for f in getattr(info, "fields", ()):
        if f.name == name:
            t = f.type.type if isinstance(f.type, msgspec.inspect.Metadata) else f.type
            kinds = t.types if isinstance(t, msgspec.inspect.UnionType) else (t,)
            return tuple(str(v) for k in kinds if isinstance(k, msgspec.inspect.LiteralType) for v in k.values)
    return ()


def _explain(message: str, field: str | None) -> tuple[str, str | None, str]:
    """msgspec's validation message as the error a user can act on: the key or value that is
    wrong, its full field path, and the fix (the allowed names or values)."""
    named = re.search(r"`([^`]+)`", message)
    if message.startswith("Object contains unknown field") and named:
        at = field or ""
        struct: type[msgspec.Struct] = Gate if _GATE_PATH.match(at) else GatesFile
        known = ", ".join(struct.__struct_fields__)
        return (f"unknown key '{named.group(1)}'", f"{at}.{named.group(1)}" if at else named.group(1),
                f"remove it or check its spelling; the keys here are: {known} (docs/compare.md)")
    if message.startswith("Object missing required field") and named:
        at = field or ""
        return (f"required key '{named.group(1)}' is missing", f"{at}.{named.group(1)}" if at else named.group(1),
                f"add it; {_DOCS_FIX}")
    if message.startswith("Invalid enum value"):
        allowed = _allowed(field)
        return (f"invalid value: {message[len('Invalid enum value '):]}", field,
                "use one of: " + ", ".join(allowed) if allowed else _DOCS_FIX)
    if message.startswith("Expected"):
        return f"wrong type: {message[0].lower()}{message[1:]}", field, _DOCS_FIX
    return f"invalid gates file: {message}", field, _DOCS_FIX


def _refuse_control_characters(raw: Any, file: str, at: str) -> None:
    """Names, metrics and task ids are printed to the terminal: an escape sequence (``\\x1b[2J``)
    or another control character in any key or string of the gates file is refused, naming it."""
    if isinstance(raw, str):
        if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in raw):
            raise InputError(f"{at or 'a value'} holds a control character ({raw!r})", file=file, field=at or None,
                             fix="use printable text only (no escape sequences, tabs or newlines)")
    elif isinstance(raw, Mapping):
        for k, v in raw.items():
            here = f"{at}.{k}" if at else str(k)
            _refuse_control_characters(k, file, here)
            _refuse_control_characters(v, file, here)
    elif isinstance(raw, list):
        for i, v in enumerate(raw):
            _refuse_control_characters(v, file, f"{at}[{i}]")


def parse_gates(raw: Any, file: str, metrics: tuple[str, ...] = METRICS) -> GatesFile:
    """Validate a parsed gates file; every error names ``file``, the field and the fix.
    ``metrics``: the metric names a gate may list (the caller adds the registered measures')."""
    if not isinstance(raw, Mapping):
        raise InputError(
            "a gates file must be a YAML mapping",
            file=file,
            fix="write count_overlap_passes: and gates: at the top level",
        )
    if "count_overlap_passes" not in raw:
        raise InputError(
            "count_overlap_passes is required: the study decides whether an overlap pass counts",
            file=file,
            field="count_overlap_passes",
            fix="add count_overlap_passes: true (count them as passes) or false (as fails)",
        )
    _refuse_control_characters(raw, file, "")
    try:
        parsed = msgspec.convert(raw, GatesFile)
    except msgspec.ValidationError as exc:
        message, field = _field_of(str(exc))
        message, field, fix = _explain(message, field)
        value = value_at(raw, field)
        if message.startswith("wrong type") and isinstance(value, str) and looks_numeric(value):
            message = (f"{value!r} is text, not a number: YAML reads an exponent as a number only with a dot "
                       f"and a sign (1.0e+3; 1e3 and 1.0e3 are text) and quoted numbers as strings")
            fix = "write the number in plain digits without quotes (e.g. 1.3), or as 1.0e+3"
        raise InputError(message, file=file, field=field, fix=fix) from None
    if not parsed.gates:
        raise InputError(
            "the gates file has no gates", file=file, field="gates", fix="add at least one gate"
        )
    seen: set[str] = set()
    for i, gate in enumerate(parsed.gates):
        if gate.name in seen:
            raise InputError(
                f"two gates are named {gate.name!r}",
                file=file,
                field=f"gates[{i}].name",
                fix="give every gate its own name",
            )
        seen.add(gate.name)
        _check_gate(gate, f"gates[{i}]", file, metrics)
    for name, tasks in parsed.splits.items():
        if name == "all":
            raise InputError(
                "a split may not be named 'all': compare always adds the all-tasks section",
                file=file,
                field="splits.all",
                fix="rename the split",
            )
        if not tasks:
            raise InputError(
                f"split {name!r} lists no tasks",
                file=file,
                field=f"splits.{name}",
                fix="list the task ids of the split",
            )
        if len(set(tasks)) != len(tasks):
            raise InputError(
                f"split {name!r} lists a task twice",
                file=file,
                field=f"splits.{name}",
                fix="list each task once",
            )
    return parsed


def _check_gate(g: Gate, at: str, file: str, metrics: tuple[str, ...] = METRICS) -> None:
    def bad(field: str, message: str, fix: str) -> InputError:
        return InputError(message, file=file, field=f"{at}.{field}", fix=fix)

    if sum(x is not None for x in (g.correctness, g.metrics, g.cost, g.rate)) != 1:
        raise bad(
            "rate" if g.rate is not None else "correctness" if g.cost is None else "cost",
            f"gate {g.name!r} must set exactly one of correctness, metrics, cost and rate",
            "use correctness: passes|unknown for a count gate, metrics: [...] for a metric gate, "
            "cost: cost_per_pass|cost_ratio for a cost gate, or rate: <metric> with threshold: for a rate gate",
        )
    if g.rate is not None or g.threshold is not None:
        _check_rate(g, bad, metrics)
        return
    if g.tolerance < 0:
        raise bad("tolerance", "tolerance must be >= 0", "give a whole number of attempts, 0 or more")
    for field in ("factor", "reference_floor", "margin"):
        v = getattr(g, field)
        if v is not None and not math.isfinite(v):
            raise bad(field, f"{field} must be a finite number", f"give {field} as a number")
    if g.factor is not None and g.factor <= 0:
        raise bad("factor", "factor must be positive", "give a factor such as 1.1 or 1.3")
    if g.cost is not None:
        _check_cost(g, bad)
        return
    if g.metrics is not None:
        if not g.metrics:
            raise bad("metrics", "metrics lists nothing", "list at least one metric")
        for j, m in enumerate(g.metrics):
            if m in COST_METRICS:
                raise bad(f"metrics[{j}]", f"{m} is a cost gate, not a metric to sum",
                          f"write cost: {m} (and factor:) instead of metrics: [{m}]")
            if m not in metrics:
                raise bad(
                    f"metrics[{j}]",
                    f"unknown metric {m!r}",
                    "use one of: " + ", ".join(metrics),
                )
        if len(set(g.metrics)) != len(g.metrics):
            raise bad("metrics", "a metric is listed twice", "list each metric once")
    if g.bound is not None:
        _check_bound(g, bad)
        return
    if g.margin is not None:
        raise bad("margin", "margin belongs to bound gates only", "add bound: lower, or drop margin")
    if g.correctness is not None:
        for field in ("statistic", "factor", "reference_floor"):
            if getattr(g, field) is not None:
                raise bad(
                    field,
                    f"a correctness gate cannot use {field}",
                    f"drop {field}; correctness gates compare counts within tolerance",
                )
        return
    if g.statistic is None:
        raise bad(
            "statistic",
            f"metric gate {g.name!r} needs a statistic",
            "add statistic: total, mean_of_task_medians or mean_of_task_median_ratios",
        )
    if g.per_task:
        raise bad("per_task", "per_task belongs to correctness gates", "drop per_task")
    if g.tolerance:
        raise bad("tolerance", "tolerance belongs to correctness gates", "use factor instead")
    if g.reference_floor is not None and g.statistic != "mean_of_task_median_ratios":
        raise bad(
            "reference_floor",
            "reference_floor applies only to statistic: mean_of_task_median_ratios",
            "drop reference_floor or use the ratio statistic",
        )


def _check_bound(g: Gate, bad: Any) -> None:
    for field in ("statistic", "reference_floor"):
        if getattr(g, field) is not None:
            raise bad(
                field,
                f"a bound gate cannot use {field}: it always averages repeats within task",
                f"drop {field}",
            )
    if g.per_task:
        raise bad("per_task", "a bound gate cannot use per_task", "drop per_task")
    if g.tolerance:
        raise bad("tolerance", "a bound gate cannot use tolerance", "drop tolerance")
    if g.correctness is not None:
        if g.correctness != "passes":
            raise bad("correctness", "a correctness bound gate needs correctness: passes", "set correctness: passes")
        if g.bound != "lower" or g.direction != "higher":
            raise bad(
                "bound",
                "a correctness bound gate needs bound: lower and direction: higher",
                "set bound: lower and direction: higher",
            )
        if g.margin is None:
            raise bad("margin", "a correctness bound gate needs margin", "add margin: -0.05 (or your limit)")
        if g.factor is not None:
            raise bad("factor", "a correctness bound gate uses margin, not factor", "drop factor")
        return
    if set(g.metrics or ()) != TOKEN_BOUND_METRICS or len(g.metrics or ()) != 2:
        raise bad(
            "metrics",
            "a token bound gate needs exactly metrics: [Input tokens, Output tokens]",
            "set metrics: [Input tokens, Output tokens]",
        )
    if g.bound != "upper" or g.direction != "lower":
        raise bad(
            "bound",
            "a token bound gate needs bound: upper and direction: lower",
            "set bound: upper and direction: lower",
        )
    if g.factor is None:
        raise bad("factor", "a token bound gate needs factor", "add factor: 1.3 (or your limit)")
    if g.margin is not None:
        raise bad("margin", "a token bound gate uses factor, not margin", "drop margin")


def _check_cost(g: Gate, bad: Any) -> None:
    """A cost gate takes direction: lower and an optional factor, nothing else."""
    if g.direction != "lower":
        raise bad("direction", f"a cost gate needs direction: lower (fewer dollars are better), got {g.direction}",
                  "set direction: lower")
    for field in ("statistic", "reference_floor", "bound", "margin"):
        if getattr(g, field) is not None:
            raise bad(field, f"a cost gate cannot use {field}", f"drop {field}; a cost gate uses factor")
    if g.per_task:
        raise bad("per_task", "a cost gate cannot use per_task", "drop per_task")
    if g.tolerance:
        raise bad("tolerance", "a cost gate cannot use tolerance", "use factor instead")


def _check_rate(g: Gate, bad: Any, metrics: tuple[str, ...]) -> None:
    """A rate gate names a gateable metric and a threshold strictly between 0 and 1, nothing else."""
    if g.rate is None:
        raise bad("threshold", "threshold belongs to rate gates", "add rate: activation:<component> (or check:<name>), or drop threshold")
    if g.rate not in metrics:
        raise bad("rate", f"unknown metric {g.rate!r}",
                  "use activation_any, activation:<component>, check:<name> or another 0/1 metric")
    if g.threshold is None or not math.isfinite(g.threshold) or not 0.0 < g.threshold < 1.0:
        raise bad("threshold", f"a rate gate needs a threshold between 0 and 1 exclusive, got {g.threshold}",
                  "set threshold: 0.8 (the share of attempts)")
    for field in ("statistic", "factor", "reference_floor", "bound", "margin"):
        if getattr(g, field) is not None:
            raise bad(field, f"a rate gate cannot use {field}", f"drop {field}; a rate gate uses threshold")
    if g.per_task or g.tolerance:
        raise bad("per_task" if g.per_task else "tolerance", "a rate gate cannot use per_task or tolerance",
                  "drop it; a rate gate pools the split's attempts")
