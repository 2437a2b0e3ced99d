"""cost_ceiling: the run stops before an attempt could cross it, and resumes with a higher one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from pluginbench.actors import create_run, run_worker
from pluginbench.actors._ceiling import within_ceiling
from pluginbench.cli import app
from pluginbench.config import load
from pluginbench.events import Usage
from pluginbench.projections import fold
from pluginbench.projections._report_data import tokens_dict
from pluginbench.stats._cost import attempt_cost, parse_prices
from tests.runs_helpers import events_of, write_config

PRICE = 100.0  # dollars per million tokens, every kind: a simulated attempt costs about $1-3
PRICES = {"as_of": "2026-11-01", "models": {"simulated-1": {
    "input_per_million": PRICE, "cached_input_per_million": PRICE, "output_per_million": PRICE}}}


def _config(tmp: Path, **extra: Any) -> Path:
    (tmp / "prices.json").write_text(json.dumps(PRICES))
    runner = {"harness": "simulated", "model": "simulated-1", **extra.pop("runner", {})}
    return write_config(tmp, jobs=1, repeats=1, prices="prices.json", runner=runner, **extra)


def _costs_in_order(run_dir: Path) -> list[float]:
    """Each coded attempt's dollars, in the order the agents exited (jobs 1: start order)."""
    prices = parse_prices(PRICES, "prices.json")
    out = []
    for e in events_of(run_dir):
        if e["type"] == "agent.exited":
            usage = msgspec.convert(e["usage"], Usage)
            cost = attempt_cost(tokens_dict(usage), "simulated-1", prices).usd
            assert cost is not None
            out.append(cost)
    return out


@pytest.fixture(scope="module")
def reference_costs(tmp_path_factory: pytest.TempPathFactory) -> list[float]:
    """The dollars of the four attempts of an unbounded run of the same (seeded) plan."""
    tmp = tmp_path_factory.mktemp("reference")
    rd = create_run(load(_config(tmp)), tmp / "run")
    assert run_worker(rd.root, handle_signals=False).finished
    costs = _costs_in_order(rd.root)
    assert len(costs) == 4 and all(c > 0.5 for c in costs)
    return costs


def _started(run_dir: Path) -> int:
    return sum(1 for e in events_of(run_dir) if e["type"] == "attempt.started")


def test_budget_ceiling_stops_before_the_attempt_that_could_cross_and_resume_finishes(
    tmp_path: Path, reference_costs: list[float]
) -> None:
    """With a worst case of $3 per attempt, a ceiling of spent(2) + $3 + a cent lets the
    third attempt start and stops before the fourth; the stop is in the log and status; a
    resume with a higher ceiling records it in run.started and finishes the run."""
    worst = 30_000 * PRICE / 1e6
    ceiling = sum(reference_costs[:2]) + worst + 0.01
    assert sum(reference_costs[:3]) + worst > ceiling
    rd = create_run(load(_config(tmp_path, cost_ceiling=ceiling, runner={"max_tokens_per_attempt": 30_000})),
                    tmp_path / "run")
    assert (rd.root / "prices.json").is_file()  # the run keeps its own copy of the table
    state = run_worker(rd.root, handle_signals=False)
    assert state.stopped is not None and not state.finished
    assert _started(rd.root) == 3
    stops = [e for e in events_of(rd.root) if e["type"] == "run.stopping"]
    assert len(stops) == 1 and not stops[0]["failure"]
    assert f"cost_ceiling ${ceiling:g}" in stops[0]["reason"] and "--cost-ceiling" in stops[0]["reason"]
    status = CliRunner().invoke(app, ["status", str(rd.root), "--json"])
    snap = json.loads(status.output)
    assert snap["phase"] == "stopped" and "cost_ceiling" in json.dumps(snap)

    again = run_worker(rd.root, handle_signals=False)
    assert again.stopped is not None and _started(rd.root) == 3  # the same ceiling stops it again

    final = run_worker(rd.root, handle_signals=False, cost_ceiling=100.0)
    assert final.finished and _started(rd.root) == 4
    started = [e for e in events_of(rd.root) if e["type"] == "run.started"]
    assert [e["cost_ceiling"] for e in started] == [None, None, 100.0]


def test_ceiling_without_budget_is_checked_on_the_spend_so_far(tmp_path: Path, reference_costs: list[float]) -> None:
    """Without max_tokens_per_attempt the ceiling stops the run once the known spend reaches
    it: a ceiling a cent under the first two attempts' dollars stops it before the third."""
    ceiling = sum(reference_costs[:2]) - 0.01
    rd = create_run(load(_config(tmp_path, cost_ceiling=ceiling)), tmp_path / "run")
    state = run_worker(rd.root, handle_signals=False)
    assert state.stopped is not None and _started(rd.root) == 2
    assert f"cost_ceiling ${ceiling:g} reached" in state.stopped


def test_unknown_dollars_stop_without_budget_and_count_at_worst_case_with_one(
    tmp_path: Path, reference_costs: list[float]
) -> None:
    """An attempt with unknown tokens makes the spend uncheckable without a budget (stop,
    naming the attempt); with a budget it is counted at the worst case."""
    rd = create_run(load(_config(tmp_path, cost_ceiling=1000.0, runner={"max_tokens_per_attempt": 30_000})),
                    tmp_path / "run")
    run_worker(rd.root, handle_signals=False)
    from pluginbench.events import read_run_log

    state = fold(read_run_log(rd.events).events)
    first = next(state.live_attempts())
    first.usage = Usage(status="unknown", reason="hook subprocesses are unmetered")
    for a in state.live_attempts():
        a.state = "pending" if a is not first else a.state
        if a is not first:
            a.exited, a.usage = False, None
    prices = parse_prices(PRICES, "prices.json")
    assert within_ceiling(state, prices, None, 1).allowed == 1  # 3 (unknown at worst) + 3 <= 1000
    state.cost_ceiling = 5.0
    check = within_ceiling(state, prices, None, 1)
    assert check.allowed == 0 and "unknown dollars counted at the worst case" in (check.reason or "")
    state.created = msgspec.structs.replace(state.created, max_tokens_per_attempt=None)
    check = within_ceiling(state, prices, None, 1)
    assert check.allowed == 0 and first.attempt_id in (check.reason or "") and "cannot be checked" in (check.reason or "")
    assert within_ceiling(state, None, "no prices.json beside evaluation.json", 1).allowed == 0


def test_dry_run_prints_the_worst_case_and_json_carries_it(tmp_path: Path) -> None:
    """The plan's worst case is attempts × budget × the dearest price; without a budget it
    is unknown (null with the reason), never zero."""
    config = _config(tmp_path, cost_ceiling=50, runner={"max_tokens_per_attempt": 30_000})
    out = CliRunner().invoke(app, ["run", str(config), "--dry-run", "--json"])
    assert out.exit_code == 0, out.output
    cost = json.loads(out.output)["cost"]
    assert cost["worst_case_usd_per_attempt"] == pytest.approx(3.0)
    assert cost["worst_case_usd"] == pytest.approx(12.0)
    assert cost["cost_ceiling_usd"] == 50 and cost["prices_as_of"] == "2026-11-01"
    text = CliRunner().invoke(app, ["run", str(config), "--dry-run"])
    assert "worst-case cost: $12.00" in text.output and "cost_ceiling $50" in text.output

    bare = tmp_path / "bare"
    bare.mkdir()
    out = CliRunner().invoke(app, ["run", str(_config(bare)), "--dry-run", "--json"])
    cost = json.loads(out.output)["cost"]
    assert cost["worst_case_usd"] is None and "max_tokens_per_attempt is not set" in cost["reason"]


@pytest.mark.parametrize(
    "extra, field, fix",
    [
        ({"cost_ceiling": -1}, "cost_ceiling", "cost_ceiling: 50"),
        ({"cost_ceiling": 0}, "cost_ceiling", "cost_ceiling: 50"),
        ({"runner": {"max_tokens_per_attempt": 0}}, "runner.max_tokens_per_attempt", "2000000"),
        ({"cost_ceiling": 5, "prices": None}, "prices", "set prices: prices.json"),
        ({"cost_ceiling": 5, "runner": {"model": "simulated-2"}}, "models.simulated-2", "add a row for simulated-2"),
        ({"prices": "missing.json"}, "prices", "readable prices.json"),
    ],
)
def test_bad_cost_settings_exit_2_with_file_field_and_fix(tmp_path: Path, extra: dict[str, Any], field: str, fix: str) -> None:
    """Each bad ceiling, budget or price table is refused before anything starts."""
    (tmp_path / "prices.json").write_text(json.dumps(PRICES))
    runner = {"harness": "simulated", "model": "simulated-1", **extra.pop("runner", {})}
    config = write_config(tmp_path, jobs=1, repeats=1, runner=runner, **{"prices": "prices.json", **extra})
    out = CliRunner().invoke(app, ["run", str(config), "--dry-run"])
    assert out.exit_code == 2, out.output
    assert out.output.startswith("error: ") and f"field: {field}" in out.output and fix in out.output
    assert "Traceback" not in out.output


def test_bad_cost_ceiling_flag_exits_2(tmp_path: Path) -> None:
    """--cost-ceiling must be positive, and applies only to a run directory."""
    config = _config(tmp_path)
    for args in (["run", str(config), "--cost-ceiling", "-3"], ["run", str(config), "--cost-ceiling", "10"]):
        out = CliRunner().invoke(app, args)
        assert out.exit_code == 2 and "field: --cost-ceiling" in out.output, out.output


def test_check_json_carries_the_worst_case(tmp_path: Path) -> None:
    """check (without readiness) reports the plan's worst case in dollars and the ceiling."""
    config = _config(tmp_path, cost_ceiling=50, runner={"max_tokens_per_attempt": 10_000})
    out = CliRunner().invoke(app, ["check", str(config), "--no-readiness", "--json"])
    assert out.exit_code == 0, out.output
    cost = json.loads(out.output)["plan"]["cost"]
    assert cost["worst_case_usd"] == pytest.approx(4 * 10_000 * PRICE / 1e6)
    assert cost["cost_ceiling_usd"] == 50
    text = CliRunner().invoke(app, ["check", str(config), "--no-readiness"])
    assert "worst-case cost: $4.00" in text.output, text.output
