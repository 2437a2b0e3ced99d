"""``comparison.stopping``: bad values are refused naming the field (exit 2 through the CLI,
nothing written); a valid block plans tasks in a seeded random order, task by task, cut at
``max_tasks``; without it the plan and the frozen settings are those of a fixed-size run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from typer.testing import CliRunner

from pluginbench.actors._runfiles import evaluation_bytes, stopping_spec
from pluginbench.cli import app
from pluginbench.config import load
from pluginbench.errors import ConfigError
from pluginbench.plan import plan_slots, plan_summary

GUIDE = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "guidance" / "testing-discipline.md"
IDS = [f"t{i}" for i in range(8)]


def _config(tmp_path: Path, stopping: Any = None, **over: Any) -> Path:
    cfg: dict[str, Any] = {
        "name": "seq", "tasks": {"source": "tasks", "ids": IDS},
        "treatments": {"td": {"guidance": [str(GUIDE)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"}, "repeats": 2, "seed": 4,
    }
    if stopping is not None:
        cfg["comparison"] = {"stopping": stopping}
    cfg.update(over)
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize(("stopping", "over", "field"), [
    ({"min_tasks": 0}, {}, "comparison.stopping.min_tasks"),
    ({"min_tasks": 9}, {}, "comparison.stopping.min_tasks"),
    ({"min_tasks": 5, "max_tasks": 4}, {}, "comparison.stopping.max_tasks"),
    ({"max_tasks": 9}, {}, "comparison.stopping.max_tasks"),
    ({"smallest_effect": 0}, {}, "comparison.stopping.smallest_effect"),
    ({"smallest_effect": 1.5}, {}, "comparison.stopping.smallest_effect"),
    ({"token_factor": -1.0}, {}, "comparison.stopping.token_factor"),
    ({"ratio_bound": 1.0}, {}, "comparison.stopping.ratio_bound"),
    ({"token_factor": 5.0, "ratio_bound": 4.0}, {}, "comparison.stopping.token_factor"),
    ({"cost_factor": 0}, {}, "comparison.stopping.cost_factor"),
    ({"cost_factor": 0.2, "ratio_bound": 4.0}, {}, "comparison.stopping.cost_factor"),
    ({"min_tasks": 2}, {"treatments": {}}, "comparison.stopping"),
    ({"min_taskz": 2}, {}, "comparison.stopping.min_taskz"),
    ({"min_tasks": "2"}, {}, "comparison.stopping.min_tasks"),
])
def test_bad_stopping_values_are_refused_naming_the_field(tmp_path: Path, stopping: Any, over: dict[str, Any],
                                                          field: str) -> None:
    """Each bad value is a ConfigError whose field is the one at fault, with a fix."""
    with pytest.raises(ConfigError) as caught:
        load(_config(tmp_path, {"min_tasks": 2, **stopping} if "min_taskz" not in stopping else stopping, **over))
    assert caught.value.field == field and caught.value.fix


def test_a_bad_stopping_block_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    """`run` on a config with max_tasks below min_tasks exits 2 naming file and field, and creates no run folder."""
    config = _config(tmp_path, {"min_tasks": 5, "max_tasks": 3})
    result = CliRunner().invoke(app, ["run", str(config), "--output", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "comparison.stopping.max_tasks" in result.output and "evaluation.yaml" in result.output
    assert not (tmp_path / "run").exists()


def test_a_sequential_plan_goes_task_by_task_in_seeded_order_up_to_max_tasks(tmp_path: Path) -> None:
    """Slots come in blocks of one task's arms × repeats, the tasks in the seeded order cut at max_tasks."""
    ev = load(_config(tmp_path, {"min_tasks": 2, "max_tasks": 5})).evaluation
    slots = plan_slots(ev, IDS)
    assert len(slots) == 5 * 2 * 2
    tasks = [s.task for s in slots]
    order = list(dict.fromkeys(tasks))
    assert len(order) == 5 and set(order) <= set(IDS)
    assert tasks == [t for t in order for _ in range(4)]
    assert slots == plan_slots(ev, IDS)
    assert stopping_spec(ev) is not None and stopping_spec(ev).max_tasks == 5  # type: ignore[union-attr]


def test_without_stopping_the_plan_and_frozen_settings_are_unchanged(tmp_path: Path) -> None:
    """A fixed-size config has no sequential plan, no stopping spec and no comparison key in evaluation.json."""
    loaded = load(_config(tmp_path))
    ev = loaded.evaluation
    assert ev.stopping is None and stopping_spec(ev) is None
    assert "sequential" not in plan_summary(ev, IDS)
    assert "comparison" not in json.loads(evaluation_bytes(ev, loaded.path))
    assert "comparison" not in msgspec.to_builtins(ev) or msgspec.to_builtins(ev)["comparison"] is None


def test_the_dry_run_plan_shows_expected_cost_to_a_decision(tmp_path: Path) -> None:
    """`run --dry-run --json` carries the simulated tasks, attempts and endings at 0, +5, +10 and +20 pp."""
    (tmp_path / "tasks").mkdir()
    ev = load(_config(tmp_path, {"min_tasks": 2, "max_tasks": 6})).evaluation
    seq = plan_summary(ev, IDS)["sequential"]
    assert [e["effect"] for e in seq["expected"]] == [0.0, 0.05, 0.1, 0.2]
    assert seq["max_attempts"] == 6 * 2 * 2
    for e in seq["expected"]:
        assert 2 <= e["mean_tasks"] <= 6 and e["mean_attempts"] == pytest.approx(e["mean_tasks"] * 4, abs=0.1)
        assert e["worst_case_usd"] is None  # no price table: unknown, never zero
        assert e["success"] + e["failure"] + e["futility"] + e["undecided"] == pytest.approx(1.0)


def test_a_cost_gate_without_a_price_row_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    """cost_factor with no price row for the model (no prices: the bundled table has none for simulated-1) exits 2 naming the field, before any run folder."""
    config = _config(tmp_path, {"min_tasks": 2, "cost_factor": 1.0},
                     tasks={"source": str(GUIDE.parents[1] / "tasks"), "ids": ["roman-numerals", "word-wrap"]})
    result = CliRunner().invoke(app, ["run", str(config), "--output", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert "comparison.stopping.cost_factor" in result.output and "simulated-1" in result.output
    assert not (tmp_path / "run").exists()


def test_the_cost_gate_freezes_the_price_row_and_the_bonferroni_split(tmp_path: Path) -> None:
    """stopping_spec freezes the config table's row for the model (date and source with it) and multiplicity bonferroni; the plan states the family and each gate's level."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"as_of": "2026-11-01", "models": {"simulated-1": {
        "input_per_million": 3.0, "cached_input_per_million": 0.3, "output_per_million": 15.0}}}))
    ev = load(_config(tmp_path, {"min_tasks": 2, "cost_factor": 1.0, "token_factor": 1.2}, prices=str(prices))).evaluation
    spec = stopping_spec(ev)
    assert spec is not None and spec.multiplicity == "bonferroni" and spec.cost_factor == 1.0
    assert spec.price is not None and (spec.price.model, spec.price.output_per_million, spec.price.as_of,
                                       spec.price.source) == ("simulated-1", 15.0, "2026-11-01", "run")
    seq = plan_summary(ev, IDS)["sequential"]
    assert seq["family"] == 3 and seq["gate_level"] == pytest.approx(1 - 0.1 / 3)
    assert all(e["mean_tasks_error"] >= 0 for e in seq["expected"])
