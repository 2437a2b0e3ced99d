"""Codex child sessions on another model or effort: read from real-shaped rollouts, they
make the attempt's model record ``mixed`` (no model) and the attempt ineligible."""

from __future__ import annotations

import json

from pluginbench.harnesses._codex import read_agent_run
from pluginbench.harnesses._codex_children import model_record
from pluginbench.harnesses._codex_events import read_rollout

from .test_codex_trace import lines, sample, tot


def rollout(thread: str, turns: list[tuple[str | None, str | None]], parent: str | None = None) -> str:
    """A rollout with one turn_context per ``(model, effort)``, shaped like 0.169.0's."""
    source = "exec" if parent is None else {"subagent": {"thread_spawn": {"parent_thread_id": parent}}}
    recs: list[dict] = [{"type": "session_meta", "payload": {"id": thread, "session_id": thread, "source": source}}]
    for model, effort in turns:
        recs.append({"type": "turn_context", "payload": {"model": model, "effort": effort, "collaboration_mode": {
            "mode": "default", "settings": {"model": model, "reasoning_effort": effort}}}})
        recs.append({"type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": {
            **tot(10, 0, 5, 0), "total_tokens": 15}}}})
    recs.append({"type": "event_msg", "payload": {"type": "task_complete", "error": None}})
    return lines(*recs)


def test_the_real_sample_rollout_records_its_model():
    """The 0.169.0 sample's turn_context gives gpt-5.5, and a lone root session is ``single`` on it."""
    r = read_rollout(sample("rollout-hooks-bypass.jsonl"))
    assert r.turns and r.turns[0][0] == "gpt-5.5"
    rec = model_record([r], model="gpt-5.5", effort=None)
    assert (rec.status, rec.model, rec.children, rec.mismatched) == ("single", "gpt-5.5", 0, [])


def test_children_on_the_runner_model_keep_the_attempt_eligible():
    """Children that inherited the runner's model and effort leave the record ``single`` with the model."""
    root = read_rollout(rollout("t1", [("gpt-5.5", "high")]))
    child = read_rollout(rollout("c1", [("gpt-5.5", "high")], parent="t1"))
    rec = model_record([root, child], model="gpt-5.5", effort="high")
    assert (rec.status, rec.model, rec.effort, rec.children) == ("single", "gpt-5.5", "high", 1)


def test_a_child_on_another_model_or_effort_makes_the_attempt_mixed():
    """A child on another model, or on another effort, makes the record ``mixed``: no model, the child named, a reason."""
    root = read_rollout(rollout("t1", [("gpt-5.5", "high")]))
    other_model = read_rollout(rollout("c1", [("gpt-5.6-luna", "high")], parent="t1"))
    other_effort = read_rollout(rollout("c2", [("gpt-5.5", "low")], parent="t1"))
    for child, want in ((other_model, ("c1", "gpt-5.6-luna", "high")), (other_effort, ("c2", "gpt-5.5", "low"))):
        rec = model_record([root, child], model="gpt-5.5", effort="high")
        assert rec.status == "mixed" and rec.model is None and rec.effort is None
        assert [(c.session_id, c.model, c.effort) for c in rec.mismatched] == [want]
        assert "ineligible" in (rec.reason or "")


def test_an_unreadable_child_is_unknown_never_single():
    """A child with no turn context, or no rollout at all, gives ``unknown`` with a reason and no model."""
    root = read_rollout(rollout("t1", [("gpt-5.5", "high")]))
    bare = read_rollout(rollout("c1", [], parent="t1"))
    rec = model_record([root, bare], model="gpt-5.5", effort="high")
    assert (rec.status, rec.model) == ("unknown", None) and "c1" in (rec.reason or "")
    none = model_record([], model="gpt-5.5", effort="high")
    assert (none.status, none.model) == ("unknown", None) and none.reason


def test_the_agent_run_carries_the_model_record():
    """read_agent_run compares every reachable child with the runner's model and effort."""
    stdout = lines({"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"},
                   {"type": "turn.completed", "usage": {"input_tokens": 20, "cached_input_tokens": 0,
                                                         "output_tokens": 10, "reasoning_output_tokens": 0}})
    texts = [rollout("t1", [("gpt-5.5", "high")]), rollout("c1", [("gpt-5.6-luna", "high")], parent="t1")]
    run = read_agent_run(stdout, texts, exit_code=0, timed_out=False, seconds=1, model="gpt-5.5", effort="high")
    assert run.model_record is not None and run.model_record.status == "mixed"
    assert json.dumps([c.session_id for c in run.model_record.mismatched]) == '["c1"]'
