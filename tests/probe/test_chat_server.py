"""The probe's OpenAI Chat Completions route over real loopback HTTP (no CLI)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from pluginbench.probe import PROBE_OPENAI_KEY, ProbeServer, bundled_scenario, launch_env

TOOLS = [{"type": "function", "function": {"name": "run_shell_command"}},
         {"type": "function", "function": {"name": "write_file"}}]


def _post(base: str, body: dict, key: str = PROBE_OPENAI_KEY) -> tuple[int, bytes]:
    req = urllib.request.Request(f"{base}/chat/completions", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_chat_answers_usage_errors_and_log(tmp_path: Path) -> None:
    """Non-streaming and streaming answers carry the step's usage exactly, a scripted 429 is an
    OpenAI error body, and every request lands in the request log as api chat."""
    log = tmp_path / "requests.jsonl"
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}
    with ProbeServer(bundled_scenario("edit-file"), log=log) as probe:
        base = launch_env("chat", probe.base_url).env["OPENAI_BASE_URL"]
        status, raw = _post(base, {**body, "stream": False})
        answer = json.loads(raw)
        assert status == 200 and answer["choices"][0]["finish_reason"] == "tool_calls"
        assert answer["usage"]["prompt_tokens"] == 1200 and answer["usage"]["prompt_tokens_details"]["cached_tokens"] == 300
        status, raw = _post(base, {**body, "stream": True})
        chunks = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]
        assert status == 200 and chunks[-1] == "[DONE]" and json.loads(chunks[-2])["usage"]["completion_tokens"] == 40
        probe.wait_idle()
        served = probe.served_usage()
    with ProbeServer(bundled_scenario("quota-exhausted")) as probe:
        status, raw = _post(launch_env("chat", probe.base_url).env["OPENAI_BASE_URL"], body)
        assert status == 429 and "quota" in json.loads(raw)["error"]["message"]
    with ProbeServer(bundled_scenario("text")) as probe:
        status, _ = _post(launch_env("chat", probe.base_url).env["OPENAI_BASE_URL"], body, key="sk-realLookingKey123")
        assert status == 401 and probe.requests[0].refused_real_credential
    assert served["m"].input_tokens == 2400
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(r["api"], r["kind"], r["stream"]) for r in lines] == [("chat", "coding", False), ("chat", "coding", True)]
