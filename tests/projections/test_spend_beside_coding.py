"""Model calls besides coding as pure folds: review calls and llm-check votes count in cost_ceiling at the
reviewer's model row (unknown never 0), a vote a kill cut off is discarded by the next worker's decision, an older
log without vote events says what it lacks, and status shows checks, calls and generation."""

from __future__ import annotations

import msgspec

from pluginbench.actors._ceiling import within_ceiling
from pluginbench.actors._decide import decide
from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptStarted,
    CheckVoteCast,
    CheckVoteDiscarded,
    CheckVoteStarted,
    CodingStarted,
    GenerationStarted,
    GuidanceGenerated,
    Measure,
    MeasuresCollected,
    ReviewCompleted,
    ReviewerSpec,
    ReviewStarted,
    RunCreated,
    RunStarted,
    SlotPlan,
    Usage,
    decode,
    encode,
)
from pluginbench.projections import RunFacts, RunState, fold, side_lines, status_of
from pluginbench.stats._cost import parse_prices

PRICES = parse_prices({"as_of": "2026-11-01", "models": {
    "coder": {"input_per_million": 1.0, "cached_input_per_million": 1.0, "output_per_million": 1.0},
    "judge": {"input_per_million": 10.0, "cached_input_per_million": 10.0, "output_per_million": 10.0}}}, "prices.json")
REVIEWER = ReviewerSpec(harness="claude", model="judge", reasoning=None, cli_version="2", timeout_seconds=60,
                        criteria_sha256="0" * 64)


def _usage(tokens: int) -> Usage:
    return Usage(status="exact", input_tokens=tokens, cached_input_tokens=0, uncached_input_tokens=tokens,
                 output_tokens=0, total_tokens=tokens)


def _run(max_tokens: int | None = None, ceiling: float = 1.0) -> RunState:
    state = RunState()
    state.apply(RunCreated(name="r", evaluation_sha256="x", harness="claude", model="coder", reasoning=None,
                           backend="local", isolation="none", tasks=["t"], arms=["vanilla"], repeats=2, jobs=1, seed=0,
                           timeout_seconds=60, reviewer=REVIEWER, cost_ceiling=ceiling,
                           max_tokens_per_attempt=max_tokens,
                           slots=[SlotPlan(slot=i, task="t", arm="vanilla", repeat=i + 1,
                                           attempt_id=f"t__vanilla__r{i + 1}") for i in range(2)]))
    state.apply(RunStarted(pid=1, pgid=1, resumed=False))
    state.apply(CodingStarted())
    return state


def _vote(aid: str, n: int) -> CheckVoteStarted:
    return CheckVoteStarted(attempt_id=aid, check="explains", vote=n, votes=3, harness="claude", model="judge")


def test_review_and_vote_dollars_count_toward_the_ceiling_at_the_reviewers_row() -> None:
    """Coding spends $0.10 at the coder row; a review call and an llm-check vote of 20,000 tokens each at the judge's
    $10/M add $0.40: with a $0.45 ceiling the spend so far is $0.50 and no attempt may start."""
    state = _run(ceiling=0.45)
    aid = "t__vanilla__r1"
    state.apply(AttemptStarted(attempt_id=aid, slot=0, task="t", arm="vanilla", repeat=1))
    state.apply(AgentLaunched(attempt_id=aid, argv=["claude"]))
    state.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=_usage(100_000)))
    assert within_ceiling(state, PRICES, None, 1).allowed == 1  # $0.10 of $0.45
    state.apply(ReviewStarted(attempt_id=aid, revision="initial"))
    state.apply(ReviewCompleted(attempt_id=aid, revision="initial", findings=[], usage=_usage(20_000), seconds=1.0))
    state.apply(_vote(aid, 1))
    assert within_ceiling(state, PRICES, None, 1).allowed == 1  # $0.30: a vote in flight counts when it ends
    state.apply(CheckVoteCast(attempt_id=aid, check="explains", vote=1, verdict="pass", usage=_usage(20_000)))
    check = within_ceiling(state, PRICES, None, 1)
    assert check.allowed == 0 and "$0.5000 spent so far" in (check.reason or "")


def test_a_cut_off_vote_is_discarded_on_resume_and_its_unknown_dollars_are_never_zero() -> None:
    """A vote started and never ended when the worker died: the next run.started's decision records it as
    check_vote.discarded (usage unknown); without max_tokens_per_attempt the ceiling then cannot be checked and says
    which call, and with it the call counts at the worst case."""
    state = _run()
    aid = "t__vanilla__r1"
    state.apply(_vote(aid, 2))
    resumed = RunStarted(pid=2, pgid=2, resumed=True)
    state.apply(resumed)
    emitted = [c.event for c in decide(state, resumed) if isinstance(getattr(c, "event", None), CheckVoteDiscarded)]
    assert len(emitted) == 1 and (emitted[0].attempt_id, emitted[0].vote) == (aid, 2)
    assert emitted[0].usage.status == "unknown" and "graded again" in emitted[0].reason
    state.apply(emitted[0])
    assert not state.check_votes.open and state.check_votes.discarded == 1
    check = within_ceiling(state, PRICES, None, 1)
    assert check.allowed == 0 and "cannot be checked" in (check.reason or "") and "vote 2" in (check.reason or "")
    bounded = _run(max_tokens=10_000, ceiling=0.25)  # worst case: 10,000 tokens at the coder's $1/M = $0.01
    bounded.apply(_vote(aid, 2))
    bounded.apply(emitted[0])
    assert within_ceiling(bounded, PRICES, None, 30).allowed == 24  # 1 unknown call at the worst case + 24 ≤ $0.25
    assert not any(isinstance(getattr(c, "event", None), CheckVoteDiscarded) for c in decide(state, resumed))


def test_an_older_log_without_vote_events_says_its_grader_dollars_are_unknown() -> None:
    """An attempt measured with llm-check grader tokens but no check_vote event (a log from before them): the ceiling
    names it as unknown dollars (a total without the split), and status still shows the tokens from its measures."""
    state = _run()
    aid = "t__vanilla__r1"
    state.apply(AttemptStarted(attempt_id=aid, slot=0, task="t", arm="vanilla", repeat=1))
    state.apply(MeasuresCollected(attempt_id=aid, measures={
        "checks_grader_tokens": Measure(value=1234, unit="tokens"), "check:explains": Measure(value=1, unit="pass")}))
    check = within_ceiling(state, PRICES, None, 1)
    assert check.allowed == 0 and "logged before check_vote events" in (check.reason or "")


def test_vote_events_round_trip_and_fold_from_the_log() -> None:
    """The three vote events encode and decode to themselves, and a log of them folds to the same counts."""
    events = [_vote("a", 1), CheckVoteCast(attempt_id="a", check="explains", vote=1, verdict=None, usage=_usage(5),
                                           reason="malformed vote: x", seconds=1.5),
              CheckVoteDiscarded(attempt_id="a", check="explains", vote=2, reason="cut off",
                                 usage=Usage(status="unknown", reason="killed"))]
    assert [decode(encode(e)) for e in events] == events
    votes = fold(events).check_votes.summary()
    assert (votes["started"], votes["cast"], votes["no_verdict"], votes["discarded"], votes["open"]) == (2, 1, 1, 1, 0)
    assert votes["tokens"]["total_tokens"] is None and votes["tokens"]["unknown_calls"] == 1


def test_status_shows_checks_calls_and_generation_and_older_runs_are_unchanged() -> None:
    """status --json carries each arm's check results, the review and vote calls and the generated arm's sessions,
    and the shared status lines name a cut-off vote and a cut-off generation; a run with none of them has none of
    these keys (its status is what it was)."""
    state = _run()
    aid = "t__vanilla__r1"
    state.apply(GenerationStarted(arm="vanilla", task="t", generation_id="t__vanilla__gen1", harness="claude",
                                  model="coder", file="CLAUDE.md"))
    state.apply(GenerationStarted(arm="vanilla", task="u", generation_id="u__vanilla__gen1", harness="claude",
                                  model="coder", file="CLAUDE.md"))
    state.apply(GuidanceGenerated(arm="vanilla", task="u", generation_id="u__vanilla__gen1", file="CLAUDE.md",
                                  path="p", sha256="s", bytes=1, fingerprint="f", usage=_usage(10), seconds=1.0))
    state.apply(AttemptStarted(attempt_id=aid, slot=0, task="t", arm="vanilla", repeat=1))
    state.apply(AgentLaunched(attempt_id=aid, argv=["claude"]))
    state.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=_usage(10)))
    state.apply(_vote(aid, 1))
    state.apply(CheckVoteCast(attempt_id=aid, check="explains", vote=1, verdict="pass", usage=_usage(7)))
    state.apply(_vote(aid, 2))
    state.apply(MeasuresCollected(attempt_id=aid, measures={
        "checks_grader_tokens": Measure(value=7, unit="tokens"), "check:explains": Measure(value=1, unit="pass"),
        "check:style": Measure(value=None, unit="pass", status="unknown", reason="no transcript")}))
    state.attempts[aid].state = "complete"
    facts = RunFacts(run_dir="/r", owner=None, newest_write=None, last_event={}, torn_tail_bytes=0,
                     states_source="events", selected_measures=["checks"], report_html=None, log=None,
                     left_running=None)
    snap = msgspec.to_builtins(status_of(state, facts, 0.0))
    checks = snap["arms"]["vanilla"]["checks"]
    assert checks["measured"] == 1 and checks["grader_tokens"] == 7
    assert checks["checks"] == {"explains": {"passed": 1, "failed": 0, "unknown": 0},
                                "style": {"passed": 0, "failed": 0, "unknown": 1}}
    votes = snap["model_calls"]["check_votes"]
    assert (votes["cast"], votes["open"], votes["tokens"]["total_tokens"]) == (1, 1, 7)
    gen = snap["generation"]
    assert gen["arms"]["vanilla"]["generated"] == 1 and gen["unfinished"] == [{"arm": "vanilla", "task": "t"}]
    text = "\n".join(t for t, _ in side_lines(snap))
    assert "1 cut off (the next worker records them as discarded)" in text
    assert "1 cut off (generated again on resume)" in text and "explains 1/1" in text and "+1 unknown" in text
    plain = RunState()
    plain.apply(msgspec.structs.replace(state.created, reviewer=None))
    bare = msgspec.to_builtins(status_of(plain, facts._replace(selected_measures=[]), 0.0))
    assert bare["model_calls"] is None and bare["generation"] is None and bare["arms"]["vanilla"]["checks"] is None
    assert side_lines(bare) == []


def test_the_reports_costs_price_calls_beside_coding_apart_from_the_arms() -> None:
    """costs.beside_coding prices review calls and votes at their model's row, apart from the arms' dollars; a call
    that used no token costs $0 without a row, and a cut-off vote makes its kind's dollars unknown, never a partial
    sum."""
    from pluginbench.projections._report_cost import costs_section
    from pluginbench.projections._report_data import tokens_dict

    zero = Usage(status="exact", input_tokens=0, cached_input_tokens=0, uncached_input_tokens=0, output_tokens=0,
                 total_tokens=0)
    calls = {"review_calls": [("judge", tokens_dict(_usage(20_000))), ("simulated", tokens_dict(zero))],
             "check_votes": [("judge", tokens_dict(_usage(1_000))),
                             ("judge", tokens_dict(Usage(status="unknown", reason="cut off")))]}
    costs = costs_section(PRICES, None, "coder", [], ["t"], ["vanilla"], calls=calls)
    assert costs["beside_coding"]["review_calls"]["usd"] == 0.2
    assert costs["beside_coding"]["check_votes"]["usd"] is None
    assert "cut off" in costs["beside_coding"]["check_votes"]["reason"]
    assert costs["arms"]["vanilla"]["usd"] is None  # no attempt: the arms' dollars never take the calls in
    assert "beside_coding" not in costs_section(PRICES, None, "coder", [], ["t"], ["vanilla"])
