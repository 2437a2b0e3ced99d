"""Probe steps with faulty usage: omitted or verbatim malformed usage, on both APIs, and what the log records."""

from __future__ import annotations

import pytest

from pluginbench.errors import ScenarioError
from pluginbench.probe import SCENARIOS_DIR, ProbeServer, load_scenario

from ._client import anthropic_body, request, responses_body, rinput, user

RAW = {"input_tokens": "many", "output_tokens": -7}


def _probe(step: dict) -> ProbeServer:
    return ProbeServer(load_scenario({"rules": [{"name": "r", "script": [step]}]}))


def test_a_step_cannot_both_omit_and_replace_its_usage() -> None:
    """omit_usage with raw_usage is refused, naming the field."""
    with pytest.raises(ScenarioError) as err:
        load_scenario({"rules": [{"script": [{"text": "x", "omit_usage": True, "raw_usage": RAW}]}]})
    assert err.value.field == "rules[0].script[0].raw_usage"


@pytest.mark.parametrize(("step", "fault", "sent"), [
    ({"text": "hi", "omit_usage": True}, "omitted", None),
    ({"text": "hi", "raw_usage": RAW}, "malformed", RAW),
])
def test_anthropic_answer_carries_the_faulty_usage_and_the_log_says_so(step, fault, sent) -> None:
    """message_start and message_delta carry no usage (or the raw one verbatim); the log records no served usage."""
    with _probe(step) as probe:
        r = request(probe.base_url, "POST", "/v1/messages", anthropic_body([user("hi")]))
        assert r.status == 200
        events = dict((name, data) for name, data in r.events())
        assert events["message_start"]["message"].get("usage") == sent
        assert events["message_delta"].get("usage") == sent
        probe.wait_idle(timeout=60)
        (rec,) = probe.requests
        assert (rec.usage, rec.usage_fault, rec.completed) == (None, fault, True)
        assert probe.served_usage() == {}


@pytest.mark.parametrize(("step", "fault", "sent"), [
    ({"text": "hi", "omit_usage": True}, "omitted", None),
    ({"text": "hi", "raw_usage": RAW}, "malformed", RAW),
])
def test_responses_completed_carries_the_faulty_usage(step, fault, sent) -> None:
    """response.completed has no usage key (or the raw object verbatim)."""
    with _probe(step) as probe:
        r = request(probe.base_url, "POST", "/v1/responses", responses_body([rinput("user", "hi")]))
        done = [data for name, data in r.events() if name == "response.completed"][0]
        assert done["response"].get("usage") == sent and ("usage" in done["response"]) == (sent is not None)
        probe.wait_idle(timeout=60)
        (rec,) = probe.requests
        assert (rec.usage, rec.usage_fault) == (None, fault)


def test_bundled_usage_fault_scenarios_load() -> None:
    """The bundled fault scenarios parse, with the faults where their names say."""
    faults = {name: [s.usage_fault for s in load_scenario(SCENARIOS_DIR / f"{name}.yaml").rules[0].script]
              for name in ("usage-omitted", "usage-omitted-one", "usage-malformed")}
    assert faults == {"usage-omitted": ["omitted", "omitted"], "usage-omitted-one": [None, "omitted"],
                      "usage-malformed": ["malformed", "malformed"]}
