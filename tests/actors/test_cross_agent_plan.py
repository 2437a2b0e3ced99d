"""Planning a cross-agent evaluation: attempts and worst-case dollars per harness, slots, vanilla keys per harness."""

from __future__ import annotations

from pathlib import Path

from pluginbench.actors._vanilla import key_inputs
from pluginbench.cache import vanilla_key
from pluginbench.config import Evaluation, HarnessEntry, RunnerConfig, TasksConfig, Treatment
from pluginbench.config._schema import ComparisonConfig, StoppingConfig
from pluginbench.plan import cross_agent_lines, cross_agent_plan, plan_summary
from pluginbench.stats import Prices
from pluginbench.stats._cost import ModelPrice

TASKS = ["a", "b", "c"]
PRICES = Prices(as_of="2026-11-30", models={
    "claude-sonnet-4-5": ModelPrice(input_per_million=3, cached_input_per_million=0.3, output_per_million=15),
    "gpt-5.1": ModelPrice(input_per_million=1.25, cached_input_per_million=0.125, output_per_million=10)})


def _ev(**runner: object) -> Evaluation:
    entries = [HarnessEntry(harness="claude", model="claude-sonnet-4-5", reasoning="low"),
               HarnessEntry(harness="codex", model="gpt-5.1", reasoning="low", max_tokens_per_attempt=2_000_000)]
    return Evaluation(tasks=TasksConfig(source="t", ids=TASKS), repeats=2, seed=5,
                      treatments={"docs": Treatment(guidance=["g.md"]), "skills": Treatment(skills=["s"])},
                      runner=RunnerConfig(harnesses=entries, **runner))  # type: ignore[arg-type]  # test kwargs


def test_each_harness_plans_its_own_arm_set_and_the_total_adds_them() -> None:
    """Two harnesses × 3 tasks × 3 arms × 2 repeats: 18 attempts each, 36 in all, each harness's slots its own."""
    plan = cross_agent_plan(_ev(max_tokens_per_attempt=1_000_000), TASKS, PRICES)
    assert plan["harnesses"] == ["claude", "codex"] and plan["arms"] == ["vanilla", "docs", "skills"]
    per = plan["per_harness"]
    assert [per[h]["coding_attempts"] for h in ("claude", "codex")] == [18, 18] and plan["coding_attempts"] == 36
    assert per["claude"]["harness"] == "claude" and per["codex"]["model"] == "gpt-5.1"
    assert [s["attempt_id"] for s in per["claude"]["slots"]] == [s["attempt_id"] for s in per["codex"]["slots"]]
    assert per["claude"]["attempts_per_arm"] == {"vanilla": 6, "docs": 6, "skills": 6}


def test_worst_case_dollars_are_per_harness_at_its_own_model_and_budget() -> None:
    """Claude at 1M tokens × $15 and Codex at its own 2M × $10 per attempt; the total is their sum."""
    plan = cross_agent_plan(_ev(max_tokens_per_attempt=1_000_000), TASKS, PRICES)
    per = plan["per_harness"]
    assert per["claude"]["cost"]["worst_case_usd"] == 18 * 15.0
    assert per["codex"]["cost"]["worst_case_usd"] == 18 * 20.0
    assert plan["worst_case_usd"] == 18 * 15.0 + 18 * 20.0 and plan["worst_case_unknown"] == []
    lines = cross_agent_lines(plan)
    assert "claude (model claude-sonnet-4-5, reasoning low): 18 coding attempts, $270.00 worst case" in lines[1]
    assert lines[-1] == "  total: 36 coding attempts, $630.00 worst case"


def test_unknown_dollars_of_one_harness_leave_the_total_unknown() -> None:
    """Without a budget for Claude its dollars are unknown, and so is the total: never a partial sum."""
    plan = cross_agent_plan(_ev(), TASKS, PRICES)
    assert plan["per_harness"]["claude"]["cost"]["worst_case_usd"] is None
    assert plan["per_harness"]["codex"]["cost"]["worst_case_usd"] == 360.0
    assert plan["worst_case_usd"] is None and plan["worst_case_unknown"] == ["claude"]
    assert cross_agent_lines(plan)[-1] == "  total: 36 coding attempts, dollars unknown for claude"


def test_a_harness_plan_equals_the_plan_of_that_harness_alone() -> None:
    """Each harness's part of the plan is exactly the single-harness plan of the same settings."""
    ev = _ev(max_tokens_per_attempt=1_000_000)
    alone = Evaluation(tasks=ev.tasks, repeats=2, seed=5, treatments=ev.treatments,
                       runner=RunnerConfig(harness="codex", model="gpt-5.1", reasoning="low", max_tokens_per_attempt=2_000_000))
    assert cross_agent_plan(ev, TASKS, PRICES)["per_harness"]["codex"] == plan_summary(alone, TASKS, PRICES)


def test_sequential_stopping_is_planned_per_harness() -> None:
    """With comparison.stopping each harness's plan carries its own sequential rule and expectations."""
    ev = Evaluation(tasks=TasksConfig(source="t", ids=[f"t{i}" for i in range(12)]), repeats=1,
                    treatments={"docs": Treatment(guidance=["g.md"])},
                    runner=RunnerConfig(harnesses=[HarnessEntry(harness="simulated", model="s"), HarnessEntry(harness="nop")]),
                    comparison=ComparisonConfig(stopping=StoppingConfig(min_tasks=6, max_tasks=8)))
    plan = cross_agent_plan(ev, [f"t{i}" for i in range(12)])
    for h in ("simulated", "nop"):
        seq = plan["per_harness"][h]["sequential"]
        assert seq["planned_tasks"] == 8 and seq["max_attempts"] == 16


def test_vanilla_cache_keys_differ_by_harness_for_the_same_task() -> None:
    """The two harnesses' vanilla attempts of one task have different cache keys, each prefixed by its harness."""
    from pluginbench.config import per_harness

    keys = {name: vanilla_key(key_inputs(sub, task_id="a", task_fingerprint="f" * 64, workdir="/w", cli_version="1.0.0",
                                         isolation="bubblewrap", transport="provider"))
            for name, sub in per_harness(_ev())}
    assert keys["claude"].startswith("claude-") and keys["codex"].startswith("codex-")
    assert keys["claude"].split("-", 1)[1] != keys["codex"].split("-", 1)[1]


def test_a_damaged_cross_agent_folder_is_refused_by_every_command_that_takes_it(tmp_path: Path) -> None:
    """A cross-agent.json that is not JSON, or names a run that is gone, is exit 2 naming the file for run, status and report."""
    from tests.cli._cli_helpers import assert_refused, run_cli

    folder = tmp_path / "cross"
    folder.mkdir()
    (folder / "cross-agent.json").write_text("{not json")
    for args in (["run", str(folder)], ["status", str(folder)], ["report", str(folder)]):
        code, out = run_cli(*args)
        assert_refused(code, out, "cross-agent.json", "cannot be read as a cross-agent evaluation")
    (folder / "cross-agent.json").write_text('{"name": "x", "evaluation": {"treatments": {}}, '
                                             '"harnesses": [{"harness": "claude", "run": "claude"}]}')
    code, out = run_cli("status", str(folder))
    assert_refused(code, out, "the claude harness's run claude/ is missing")
    code, out = run_cli("events", str(folder))
    assert_refused(code, out, "is a cross-agent evaluation", f"{folder}/claude")
