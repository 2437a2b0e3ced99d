"""The gates file: every malformed gate is refused naming the file, the field and the fix."""

from __future__ import annotations

import pytest

from pluginbench.errors import InputError
from pluginbench.stats import parse_gates

OK_COUNT = {"name": "passes", "correctness": "passes", "against": "vanilla", "direction": "higher"}
OK_BOUND = {"name": "b", "correctness": "passes", "against": "vanilla", "direction": "higher", "bound": "lower", "margin": -0.05}
OK_TOKEN = {"name": "t", "metrics": ["Input tokens", "Output tokens"], "against": "vanilla", "direction": "lower", "bound": "upper", "factor": 1.3}
OK_RATIO = {"name": "r", "metrics": ["Source lines added"], "statistic": "mean_of_task_median_ratios", "reference_floor": 10, "against": "vanilla", "direction": "lower", "factor": 1.1}

BAD = [
    ("not a mapping", ["gates"], None, "YAML mapping"),
    ("count_overlap_passes missing", {"gates": [OK_COUNT]}, "count_overlap_passes", "required"),
    ("no gates", {"count_overlap_passes": True, "gates": []}, "gates", "no gates"),
    ("unknown field", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "tolerence": 1}]}, "gates[0].tolerence", "unknown key 'tolerence'"),
    ("wrong type", {"count_overlap_passes": "yes", "gates": [OK_COUNT]}, "count_overlap_passes", "expected `bool`"),
    ("bad direction", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "direction": "up"}]}, "gates[0].direction", "invalid value: 'up'"),
    ("both correctness and metrics", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "metrics": ["Input tokens"]}]}, "gates[0].correctness", "exactly one"),
    ("neither", {"count_overlap_passes": True, "gates": [{"name": "x", "against": "vanilla", "direction": "lower"}]}, "gates[0].correctness", "exactly one"),
    ("unknown metric", {"count_overlap_passes": True, "gates": [{**OK_RATIO, "metrics": ["Lines"]}]}, "gates[0].metrics[0]", "unknown metric"),
    ("metric gate without statistic", {"count_overlap_passes": True, "gates": [{k: v for k, v in OK_RATIO.items() if k not in ("statistic", "reference_floor")}]}, "gates[0].statistic", "needs a statistic"),
    ("reference_floor on a non-ratio statistic", {"count_overlap_passes": True, "gates": [{**OK_RATIO, "statistic": "total"}]}, "gates[0].reference_floor", "only to statistic"),
    ("correctness gate with factor", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "factor": 1.2}]}, "gates[0].factor", "cannot use factor"),
    ("negative tolerance", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "tolerance": -1}]}, "gates[0].tolerance", ">= 0"),
    ("per_task on a metric gate", {"count_overlap_passes": True, "gates": [{**OK_RATIO, "per_task": True}]}, "gates[0].per_task", "correctness gates"),
    ("bound gate with statistic", {"count_overlap_passes": True, "gates": [{**OK_TOKEN, "statistic": "total"}]}, "gates[0].statistic", "cannot use statistic"),
    ("bound gate with per_task", {"count_overlap_passes": True, "gates": [{**OK_BOUND, "per_task": True}]}, "gates[0].per_task", "cannot use per_task"),
    ("bound gate with tolerance", {"count_overlap_passes": True, "gates": [{**OK_BOUND, "tolerance": 1}]}, "gates[0].tolerance", "cannot use tolerance"),
    ("bound gate with reference_floor", {"count_overlap_passes": True, "gates": [{**OK_TOKEN, "reference_floor": 3}]}, "gates[0].reference_floor", "cannot use reference_floor"),
    ("correctness bound upper", {"count_overlap_passes": True, "gates": [{**OK_BOUND, "bound": "upper"}]}, "gates[0].bound", "bound: lower and direction: higher"),
    ("correctness bound lower direction", {"count_overlap_passes": True, "gates": [{**OK_BOUND, "direction": "lower"}]}, "gates[0].bound", "direction: higher"),
    ("correctness bound without margin", {"count_overlap_passes": True, "gates": [{k: v for k, v in OK_BOUND.items() if k != "margin"}]}, "gates[0].margin", "needs margin"),
    ("correctness bound on unknowns", {"count_overlap_passes": True, "gates": [{**OK_BOUND, "correctness": "unknown"}]}, "gates[0].correctness", "correctness: passes"),
    ("token bound with one metric", {"count_overlap_passes": True, "gates": [{**OK_TOKEN, "metrics": ["Input tokens"]}]}, "gates[0].metrics", "Input tokens, Output tokens"),
    ("token bound lower", {"count_overlap_passes": True, "gates": [{**OK_TOKEN, "bound": "lower"}]}, "gates[0].bound", "bound: upper"),
    ("token bound without factor", {"count_overlap_passes": True, "gates": [{k: v for k, v in OK_TOKEN.items() if k != "factor"}]}, "gates[0].factor", "needs factor"),
    ("margin on a plain gate", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "margin": 0.1}]}, "gates[0].margin", "bound gates only"),
    ("zero factor", {"count_overlap_passes": True, "gates": [{**OK_RATIO, "factor": 0}]}, "gates[0].factor", "positive"),
    ("duplicate names", {"count_overlap_passes": True, "gates": [OK_COUNT, OK_COUNT]}, "gates[1].name", "two gates"),
    ("split named all", {"count_overlap_passes": True, "gates": [OK_COUNT], "splits": {"all": ["a"]}}, "splits.all", "all"),
    ("empty split", {"count_overlap_passes": True, "gates": [OK_COUNT], "splits": {"s": []}}, "splits.s", "no tasks"),
    ("an exponent YAML reads as text", {"count_overlap_passes": True, "gates": [{**OK_RATIO, "factor": "1e3"}]}, "gates[0].factor", "is text, not a number"),
    ("escape sequence in a gate name", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "name": "\x1b[31mred\x1b]0;t\x07"}]}, "gates[0].name", "control character"),
    ("escape sequence in a split's task", {"count_overlap_passes": True, "gates": [OK_COUNT], "splits": {"s": ["a\x1b[2J"]}}, "splits.s[0]", "control character"),
]


@pytest.mark.parametrize(("case", "raw", "field", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_gates_file_is_refused(case, raw, field, message) -> None:
    """A malformed gates file is an InputError (exit 2) that names the file, the field and a fix."""
    with pytest.raises(InputError) as info:
        parse_gates(raw, "ci/gates.yaml")
    err = info.value
    assert err.file == "ci/gates.yaml"
    assert err.field == field
    assert message in err.message
    assert err.fix


def test_valid_gates_file_parses() -> None:
    """The product description's example gates, bound gates included, parse with their comparators."""
    g = parse_gates(
        {"count_overlap_passes": False, "splits": {"climb": ["a", "b"]}, "gates": [OK_COUNT, OK_BOUND, OK_TOKEN, {**OK_RATIO, "against": "workflow-main"}]},
        "gates.yaml",
    )
    assert [x.kind for x in g.gates] == ["count", "correctness_bound", "token_bound", "metric"]
    assert g.comparators == ["vanilla", "workflow-main"]
    assert g.splits == {"climb": ["a", "b"]}


FIXES = [
    ("unknown gate key", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "tolerence": 1}]}, "tolerance"),
    ("unknown top-level key", {"count_overlap_passes": True, "gatez": [], "gates": [OK_COUNT]}, "count_overlap_passes, gates, candidate, confidence_level, splits"),
    ("bad direction", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "direction": "up"}]}, "use one of: higher, lower"),
    ("bad correctness", {"count_overlap_passes": True, "gates": [{**OK_COUNT, "correctness": "pass"}]}, "use one of: passes, unknown"),
    ("missing against", {"count_overlap_passes": True, "gates": [{k: v for k, v in OK_COUNT.items() if k != "against"}]}, "add it"),
]


@pytest.mark.parametrize(("case", "raw", "fix"), FIXES, ids=[f[0] for f in FIXES])
def test_schema_errors_say_the_allowed_keys_or_values(case, raw, fix) -> None:
    """A misspelt key lists the keys allowed there, a bad choice lists the allowed values, a missing key says to add it."""
    with pytest.raises(InputError) as info:
        parse_gates(raw, "gates.yaml")
    assert fix in info.value.fix
    assert "Object contains" not in info.value.message and "Invalid enum" not in info.value.message


def test_a_rate_metric_named_check_x_prints_as_text_not_an_emoji() -> None:
    """The CLI consoles print `check:x:` as written (Rich would turn `:x:` into an emoji)."""
    from pluginbench.cli._common import console, err_console

    for c in (console, err_console):
        with c.capture() as got:
            c.print("  check:x: not measured", highlight=False, markup=False)
        assert "check:x: not measured" in got.get()
