"""The probe's Gemini API routes over real loopback HTTP (no CLI)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from pluginbench.probe import PROBE_GEMINI_KEY, ProbeServer, bundled_scenario, launch_env
from pluginbench.probe._gemini import method_of, model_of

TOOLS = [{"functionDeclarations": [{"name": "run_shell_command"}, {"name": "write_file"}]}]
CWD_PROMPT = "<session_context>\n- **Workspace Directories:**\n  - /work/app\n</session_context>"


def _post(base: str, model: str, method: str, body: dict, key: str = PROBE_GEMINI_KEY) -> tuple[int, bytes]:
    suffix = "?alt=sse" if method == "streamGenerateContent" else ""
    req = urllib.request.Request(f"{base}/v1beta/models/{model}:{method}{suffix}", data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json", "x-goog-api-key": key})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _events(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def test_gemini_answers_usage_tools_errors_and_log(tmp_path: Path) -> None:
    """generateContent and streamGenerateContent answer the step as functionCall parts with its
    usage exactly in usageMetadata (on the last event only), the shell call takes the offered
    run_shell_command, {{cwd}} is the CLI's workspace, a quota 429 is a Google error with a
    daily QuotaFailure, a real-looking Google key is refused, and the log records api gemini."""
    log = tmp_path / "requests.jsonl"
    first = {"contents": [{"role": "user", "parts": [{"text": CWD_PROMPT}, {"text": "go"}]}], "tools": TOOLS}
    second = {**first, "contents": [*first["contents"], {"role": "model", "parts": [{"functionCall": {"name": "x"}}]},
                                    {"role": "user", "parts": [{"functionResponse": {"name": "x"}}]}]}
    with ProbeServer(bundled_scenario("edit-file"), log=log) as probe:
        base = launch_env("gemini", probe.base_url).env["GOOGLE_GEMINI_BASE_URL"]
        status, raw = _post(base, "gemini-2.5-pro", "generateContent", first)
        answer = json.loads(raw)
        assert status == 200 and answer["candidates"][0]["finishReason"] == "STOP"
        (part,) = answer["candidates"][0]["content"]["parts"]
        assert part["functionCall"]["name"] == "run_shell_command" and part["functionCall"]["args"]["command"] == "ls -la && pwd"
        assert answer["usageMetadata"] == {"promptTokenCount": 1200, "candidatesTokenCount": 40, "cachedContentTokenCount": 300,
                                           "thoughtsTokenCount": 8, "totalTokenCount": 1248}
        status, raw = _post(base, "gemini-2.5-pro", "streamGenerateContent", second)
        events = _events(raw)
        assert status == 200 and [("usageMetadata" in e) for e in events] == [False] * (len(events) - 1) + [True]
        call = events[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]
        assert call["name"] == "write_file" and call["args"]["file_path"] == "/work/app/probe_output.txt"
        status, raw = _post(base, "gemini-2.5-pro", "countTokens", {"contents": []})
        assert status == 200 and json.loads(raw)["totalTokens"] >= 1
        probe.wait_idle()
        served = probe.served_usage()
    with ProbeServer(bundled_scenario("quota-exhausted")) as probe:
        status, raw = _post(probe.base_url, "gemini-2.5-pro", "streamGenerateContent", first)
        error = json.loads(raw)["error"]
        assert status == 429 and error["status"] == "RESOURCE_EXHAUSTED"
        assert "PerDay" in error["details"][0]["violations"][0]["quotaId"]
    with ProbeServer(bundled_scenario("text")) as probe:
        status, _ = _post(probe.base_url, "gemini-2.5-pro", "generateContent", first, key="AIzaSyRealLookingKey123")
        assert status == 401 and probe.requests[0].refused_real_credential
        headers = {k.lower(): v for k, v in probe.requests[0].headers.items()}
        assert headers["x-goog-api-key"].startswith("<redacted")
    assert served["gemini-2.5-pro"].input_tokens == 2500 and served["gemini-2.5-pro"].reasoning_tokens == 13
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(r["api"], r["kind"], r["stream"], r["answer"]) for r in lines] == [
        ("gemini", "coding", False, "tool"), ("gemini", "coding", True, "tool"), ("other", "side", False, "count_tokens")]


def test_gemini_paths_name_the_model_and_method() -> None:
    """The model and method are read from a /v1beta/models/{model}:{method} path, and nothing from other paths."""
    assert model_of("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse") == "gemini-2.5-pro"
    assert method_of("/v1beta/models/gemini-2.5-pro:streamGenerateContent") == "streamGenerateContent"
    assert method_of("/v1/chat/completions") is None and model_of("/v1/messages") is None
