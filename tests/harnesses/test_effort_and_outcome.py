"""Requested versus effective effort from native evidence, and the execution outcome of after-run checks."""

from __future__ import annotations

import json

from pluginbench.harnesses._claude_checks import effective_effort, execution_outcome
from pluginbench.harnesses._codex_children import model_record
from pluginbench.harnesses._codex_events import read_rollout

from .test_codex_children import rollout


def _requests(*params: dict) -> tuple[list[str], list[list[str]]]:
    return [json.dumps({"type": "api-request", "params": p}) for p in params], []


def test_claude_effective_effort_is_what_every_request_carried() -> None:
    """All API requests carrying output_config.effort give that effort, with the evidence."""
    got, why = effective_effort(_requests(*[{"output_config": {"effort": "medium"}}] * 3), "medium")
    assert got == "medium" and "all 3 API requests" in why


def test_claude_effort_not_sent_is_not_the_requested_one() -> None:
    """A model the CLI sends no effort to (only a thinking budget): effective effort None, requested kept apart."""
    got, why = effective_effort(_requests({"thinking": {"type": "enabled", "budget_tokens": 31999}}), "medium")
    assert got is None and "requested 'medium'" in why and "budget_tokens" in why


def test_claude_disagreeing_or_missing_evidence_is_unknown() -> None:
    """Requests at different efforts, no request and no transcript all leave the effective effort None."""
    got, why = effective_effort(_requests({"output_config": {"effort": "low"}}, {"output_config": {"effort": "high"}}), "low")
    assert got is None and "disagree" in why
    assert effective_effort(([], []), "low")[0] is None
    assert effective_effort(None, "low") == (None, "no session transcript, so no API request parameters")


def test_codex_effective_effort_comes_from_the_root_turn_context() -> None:
    """The record's effort is the root session's recorded one; another effort than requested is unknown."""
    same = model_record([read_rollout(rollout("t", [("gpt-5.5", "high")]))], model="gpt-5.5", effort="high")
    assert (same.status, same.effort) == ("single", "high")
    other = model_record([read_rollout(rollout("t", [("gpt-5.5", "low")]))], model="gpt-5.5", effort="high")
    assert other.status == "unknown" and "effort low, not the requested high" in (other.reason or "")
    unrecorded = model_record([read_rollout(rollout("t", [("gpt-5.5", None)]))], model="gpt-5.5", effort="high")
    assert unrecorded.effort is None and "unverified" in (unrecorded.reason or "")


def test_a_failed_after_run_check_makes_the_execution_a_failure_with_the_reason() -> None:
    """A failed check is a failed execution (reason kept); a clean success result is a success."""
    ok = {"type": "result", "subtype": "success", "is_error": False}
    assert execution_outcome([], timed_out=False, provider_stop=None, result=ok) == ("success", [])
    outcome, reasons = execution_outcome(["1 permission denial(s) recorded"], timed_out=False,
                                         provider_stop=None, result=ok)
    assert outcome == "failure" and reasons == ["after-run check failed: 1 permission denial(s) recorded"]
    outcome, reasons = execution_outcome([], timed_out=True, provider_stop=None, result=None)
    assert outcome == "failure" and reasons == ["the session timed out"]
    err = {**ok, "is_error": True, "terminal_reason": "api_error"}
    assert execution_outcome([], timed_out=False, provider_stop="x", result=err)[1] == [
        "provider stop: x", "the session's result is an error (api_error)"]
