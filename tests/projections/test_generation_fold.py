"""Generated-guidance arms as pure functions: the fold of generation events (a killed session is kept with
unknown usage and superseded), the report rows and totals, the per-task fingerprint binding, the plan's worst
case and the cost ceiling's spend."""

from __future__ import annotations

from pathlib import Path

from pluginbench.actors._ceiling import within_ceiling
from pluginbench.actors._generate import bound_fingerprint, generation_id
from pluginbench.config import Evaluation, Generate, parse_evaluation
from pluginbench.events import (
    GenerationFailed,
    GenerationStarted,
    GuidanceGenerated,
    RunCreated,
    SlotPlan,
    Usage,
)
from pluginbench.plan import generation_plan
from pluginbench.projections import (
    Generations,
    RunState,
    generation_rows,
    generation_sessions,
    generation_totals,
)
from pluginbench.stats._cost import parse_prices

EXACT = Usage(status="exact", input_tokens=1000, cached_input_tokens=0, uncached_input_tokens=1000,
              output_tokens=100, total_tokens=1100)
BOUND = Usage(status="lower_bound", input_tokens=500, cached_input_tokens=0, uncached_input_tokens=500,
              output_tokens=10, total_tokens=510, reason="a floor")


def _started(arm: str, task: str, n: int) -> GenerationStarted:
    return GenerationStarted(arm=arm, task=task, generation_id=generation_id(task, arm, n), harness="claude",
                             model="m1", file="CLAUDE.md")


def _generated(arm: str, task: str, n: int, usage: Usage = EXACT) -> GuidanceGenerated:
    return GuidanceGenerated(arm=arm, task=task, generation_id=generation_id(task, arm, n), file="CLAUDE.md",
                             path=f"evidence/generated/{generation_id(task, arm, n)}/CLAUDE.md", sha256="ab" * 32,
                             bytes=42, fingerprint="fp", usage=usage, seconds=3.5, discarded_changes=["junk.txt"])


def test_a_killed_session_is_superseded_and_kept_with_unknown_usage() -> None:
    """A second start of the same (arm, task) before the first ended supersedes it: the first is listed killed
    (usage unknown, never zero) and makes the arm's token and time totals unknown; an end naming an old session
    id is ignored; a pair that ended is not unfinished."""
    g = Generations()
    g.apply(_started("gen", "t1", 1))
    assert g.unfinished() == [("gen", "t1")] and g.outcome("gen", "t1") is None
    g.apply(_started("gen", "t1", 2))  # the resume after a kill -9
    g.apply(_generated("gen", "t1", 1))  # a stale end of the killed one: ignored
    assert g.outcome("gen", "t1") is None
    g.apply(_generated("gen", "t1", 2))
    g.apply(_started("gen", "t2", 1))
    g.apply(GenerationFailed(arm="gen", task="t2", generation_id=generation_id("t2", "gen", 1), reason="no file",
                             usage=BOUND, seconds=1.0))
    assert g.unfinished() == [] and [k.generation_id for k in g.killed] == ["t1__gen__gen1"]
    rows = generation_rows(g)
    assert [(r["task"], r["generation_id"], r["outcome"]) for r in rows] == [
        ("t1", "t1__gen__gen1", "killed"), ("t1", "t1__gen__gen2", "generated"), ("t2", "t2__gen__gen1", "failed")]
    assert rows[0]["tokens"]["status"] == "unknown" and rows[0]["tokens"]["total"] is None
    assert rows[1]["sha256"] == "ab" * 32 and rows[1]["discarded_changes"] == ["junk.txt"]
    totals = generation_totals(g)["gen"]
    assert (totals["sessions"], totals["generated"], totals["failed"], totals["killed"]) == (3, 1, 1, 1)
    assert totals["tokens"] is None and totals["tokens_status"] == "unknown" and "t1__gen__gen1" in totals["tokens_reason"]
    assert totals["seconds"] is None and "t1__gen__gen1" in totals["seconds_reason"]
    assert [s.generation_id for s in generation_sessions(g)] == ["t1__gen__gen1", "t1__gen__gen2", "t2__gen__gen1"]


def test_totals_sum_known_sessions_and_carry_a_bound() -> None:
    """Without a killed session the arm's tokens and seconds are sums; a lower-bound session makes the total a
    lower bound, not exact."""
    g = Generations()
    for task, usage in (("t1", EXACT), ("t2", BOUND)):
        g.apply(_started("gen", task, 1))
        g.apply(_generated("gen", task, 1, usage))
    totals = generation_totals(g)["gen"]
    assert totals["tokens"] == 1610 and totals["tokens_status"] == "lower_bound" and totals["seconds"] == 7.0


def test_the_run_state_folds_generation_events() -> None:
    """RunState keeps each pair's latest session and its end."""
    state = RunState()
    for e in (_started("gen", "t1", 1), _generated("gen", "t1", 1)):
        state.apply(e)
    assert state.generations.outcome("gen", "t1") == _generated("gen", "t1", 1)


def test_the_per_task_fingerprint_binds_the_file_and_the_generating_settings() -> None:
    """The arm's fingerprint on a task changes with the file's hash, the model, the prompt and the arm's own
    frozen fingerprint, and is the same for the same inputs."""
    spec = Generate(model="m1")
    base = bound_fingerprint("arm", spec, "claude", "a" * 64)
    assert base == bound_fingerprint("arm", Generate(model="m1"), "claude", "a" * 64)
    others = {bound_fingerprint("arm", spec, "claude", "b" * 64), bound_fingerprint("arm2", spec, "claude", "a" * 64),
              bound_fingerprint("arm", Generate(model="m2"), "claude", "a" * 64),
              bound_fingerprint("arm", Generate(model="m1", instruction="x {file}"), "claude", "a" * 64),
              bound_fingerprint("arm", spec, "codex", "a" * 64)}
    assert base not in others and len(others) == 5


def _evaluation(**runner: object) -> Evaluation:
    return parse_evaluation({"tasks": {"source": "t", "ids": ["a", "b", "c"]},
                             "runner": {"harness": "simulated", "model": "simulated-1", **runner},
                             "treatments": {"g": {"generate": {"model": "gm"}}, "plain": {"task_owned": "remove"}}},
                            Path("e.yaml"))


PRICES = parse_prices({"as_of": "2026-12-01", "models": {
    "simulated-1": {"input_per_million": 1.0, "cached_input_per_million": 1.0, "output_per_million": 1.0},
    "gm": {"input_per_million": 2.0, "cached_input_per_million": 1.0, "output_per_million": 10.0}}}, "prices.json")


def test_the_plan_counts_one_session_per_task_at_the_generating_model_price() -> None:
    """One session per task of each generating arm; the worst case is the budget at the generating model's dearest
    price; without a budget or a row it is unknown with the reason; without a generating arm there is no block."""
    plan = generation_plan(_evaluation(max_tokens_per_attempt=100_000), ["a", "b", "c"], PRICES)
    assert plan is not None and plan["sessions"] == 3 and list(plan["per_arm"]) == ["g"]
    assert plan["worst_case_usd"] == 3 * 100_000 * 10.0 / 1_000_000
    unknown = generation_plan(_evaluation(), ["a", "b", "c"], PRICES)
    assert unknown is not None and unknown["worst_case_usd"] is None and "max_tokens_per_attempt" in unknown["reason"]
    assert generation_plan(parse_evaluation({"tasks": {"source": "t", "ids": ["a"]}}, Path("e.yaml")), ["a"], PRICES) is None


def test_the_ceiling_counts_generation_spend_at_its_own_model() -> None:
    """A generating session's dollars (at its model's row) count toward cost_ceiling: with them the run may start
    fewer attempts; a killed session has unknown dollars and is counted at the worst case."""
    created = RunCreated(name="r", evaluation_sha256="x", harness="simulated", model="simulated-1", reasoning=None,
                         backend="local", isolation="none", tasks=["a"], arms=["vanilla", "g"], repeats=1, jobs=1,
                         seed=0, timeout_seconds=60, cost_ceiling=0.03, max_tokens_per_attempt=10_000,
                         slots=[SlotPlan(slot=0, task="a", arm="vanilla", repeat=1, attempt_id="a__vanilla__r1"),
                                SlotPlan(slot=1, task="a", arm="g", repeat=1, attempt_id="a__g__r1")])
    state = RunState()
    state.apply(created)
    assert within_ceiling(state, PRICES, None, 2).allowed == 2  # 2 × $0.01 worst case under $0.03
    big = Usage(status="exact", input_tokens=0, cached_input_tokens=0, uncached_input_tokens=0, output_tokens=1500,
                total_tokens=1500)
    state.apply(GenerationStarted(arm="g", task="a", generation_id="a__g__gen1", harness="simulated", model="gm",
                                  file="CLAUDE.md"))
    state.apply(GuidanceGenerated(arm="g", task="a", generation_id="a__g__gen1", file="CLAUDE.md", path="p",
                                  sha256="s", bytes=1, fingerprint="f", usage=big, seconds=1.0))
    check = within_ceiling(state, PRICES, None, 2)  # $0.015 spent on generation at gm's $10/M output
    assert check.allowed == 1 and "$0.0150 spent so far" in (check.reason or "")
    state.apply(GenerationStarted(arm="g", task="b", generation_id="b__g__gen1", harness="simulated", model="gm",
                                  file="CLAUDE.md"))
    state.apply(GenerationStarted(arm="g", task="b", generation_id="b__g__gen2", harness="simulated", model="gm",
                                  file="CLAUDE.md"))  # gen1 killed: unknown dollars, counted at the worst case
    check = within_ceiling(state, PRICES, None, 2)
    assert check.allowed == 0 and "unknown dollars" in (check.reason or "")


def test_frozen_changes_names_a_changed_generated_file_and_accepts_a_removing_arm(tmp_path: Path) -> None:
    """A generated file whose bytes no longer have its recorded SHA-256 (or that is gone) is named as changed, so a
    resume and a rebuild refuse the run; an arm frozen with task_owned: remove (its fingerprint bound to that
    setting) is not."""
    import hashlib

    from pluginbench.events import TreatmentFrozen
    from pluginbench.projections import frozen_changes
    from pluginbench.rundir import RunDir

    rd = RunDir(tmp_path)
    path = "evidence/generated/t1__gen__gen1/CLAUDE.md"
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_bytes(b"# guide\n")
    state = RunState()
    empty = hashlib.sha256(b"").hexdigest()
    state.apply(TreatmentFrozen(arm="gen", fingerprint=hashlib.sha256(f"{empty}\0task_owned=remove".encode()).hexdigest(),
                                guidance_bytes=0, skills=[], plugins=[]))
    state.apply(_started("gen", "t1", 1))
    state.apply(GuidanceGenerated(arm="gen", task="t1", generation_id="t1__gen__gen1", file="CLAUDE.md", path=path,
                                  sha256=hashlib.sha256(b"# guide\n").hexdigest(), bytes=8, fingerprint="f",
                                  usage=EXACT, seconds=1.0))
    assert frozen_changes(rd, state) == []
    (tmp_path / path).write_bytes(b"# edited\n")
    assert frozen_changes(rd, state) == [f"the guidance generated for arm 'gen' on task 't1' ({path})"]
    (tmp_path / path).unlink()
    assert len(frozen_changes(rd, state)) == 1
