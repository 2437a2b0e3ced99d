"""The probe server over real loopback HTTP, driven by a stdlib client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pluginbench.errors import InputError
from pluginbench.probe import (
    PROBE_ANTHROPIC_KEY,
    PROBE_OPENAI_KEY,
    ProbeServer,
    StepUsage,
    bundled_scenario,
    load_scenario,
)

from ._client import anthropic_body, request, responses_body, rinput, user

USAGE = {"input_tokens": 321, "output_tokens": 45, "cache_read_input_tokens": 67,
         "cache_creation_input_tokens": 8, "reasoning_tokens": 9}
SCEN = load_scenario({
    "rules": [
        {"name": "err", "when": {"messages_contain": "FAIL-"}, "script": [
            {"error": {"status": 429, "message": "slow down", "retry_after": 3}}]},
        {"name": "e401", "when": {"messages_contain": "AUTH-"}, "script": [
            {"error": {"status": 401, "message": "bad key"}}]},
        {"name": "e529", "when": {"messages_contain": "OVER-"}, "script": [
            {"error": {"status": 529, "message": "overloaded"}}]},
        {"name": "drop", "when": {"messages_contain": "DROP-"}, "script": [
            {"drop_stream": True, "usage": USAGE}]},
        {"name": "main", "script": [
            {"text": "looking {{cwd}}", "tool": {"name": "shell", "input": {"command": "ls -la"}},
             "usage": USAGE},
            {"tool": {"name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"},
             "usage": {"input_tokens": 10, "output_tokens": 2}},
        ]},
    ],
    "final": {"text": "final words", "usage": {"input_tokens": 5, "output_tokens": 1}},
})


@pytest.fixture
def probe():
    with ProbeServer(SCEN) as server:
        yield server


def _anthropic_message(events: list[tuple[str, dict]]) -> dict:
    """Rebuild the message a client would assemble from an Anthropic SSE stream."""
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    msg = events[0][1]["message"]
    blocks: dict[int, dict] = {}
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"], _json="")
        elif name == "content_block_delta":
            b, d = blocks[data["index"]], data["delta"]
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            else:
                b["_json"] += d["partial_json"]
    for b in blocks.values():
        if b["type"] == "tool_use":
            b["input"] = json.loads(b["_json"])
        b.pop("_json")
    delta = events[-2][1]
    return dict(msg, content=[blocks[i] for i in sorted(blocks)],
                stop_reason=delta["delta"]["stop_reason"], usage=delta["usage"])


def test_anthropic_stream_carries_script_and_exact_usage(probe: ProbeServer) -> None:
    """A streamed Messages answer holds the step's text and tool call and its usage exactly."""
    body = anthropic_body([user("Primary working directory: /w/here\nhi")])
    r = request(probe.base_url, "POST", "/v1/messages?beta=true", body)
    assert r.status == 200 and r.headers["content-type"] == "text/event-stream"
    assert r.headers.get("request-id")
    msg = _anthropic_message(r.events())
    assert msg["model"] == "claude-sonnet-4-5" and msg["stop_reason"] == "tool_use"
    assert msg["content"][0] == {"type": "text", "text": "looking /w/here"}
    assert msg["content"][1]["name"] == "Bash"  # the portable "shell" is Bash for Claude Code
    assert msg["content"][1]["input"] == {"command": "ls -la"}
    assert msg["usage"] == {k: USAGE[k] for k in ("input_tokens", "output_tokens",
                                                   "cache_read_input_tokens",
                                                   "cache_creation_input_tokens")}
    assert probe.wait_idle(timeout=60)
    (rec,) = probe.requests
    assert (rec.api, rec.kind, rec.rule, rec.step, rec.status, rec.completed) == (
        "anthropic", "coding", "main", 0, 200, True)


def test_anthropic_non_streaming_answer(probe: ProbeServer) -> None:
    """With stream false the answer is one JSON Message with the same usage."""
    convo = [user("x"), {"role": "assistant", "content": [{"type": "text", "text": "a"}]}, user("y")]
    r = request(probe.base_url, "POST", "/v1/messages", anthropic_body(convo, stream=False))
    msg = r.json()
    assert r.status == 200 and msg["type"] == "message"
    assert msg["content"][0]["name"] == "apply_patch"
    assert msg["usage"]["input_tokens"] == 10 and msg["usage"]["output_tokens"] == 2


def test_served_usage_sums_completed_coding_turns_per_model(probe: ProbeServer) -> None:
    """served_usage totals what was served per model and leaves side answers out."""
    request(probe.base_url, "POST", "/v1/messages", anthropic_body([user("a")]))
    request(probe.base_url, "POST", "/v1/messages",
            anthropic_body([user("a"), {"role": "assistant", "content": "x"}, user("b")]))
    request(probe.base_url, "POST", "/v1/messages", anthropic_body([user("t")], tools=False))
    request(probe.base_url, "POST", "/v1/responses", responses_body([rinput("user", "a")]),
            headers={"authorization": f"Bearer {PROBE_OPENAI_KEY}"})
    assert probe.wait_idle(timeout=60)
    totals = probe.served_usage()
    assert totals["claude-sonnet-4-5"] == StepUsage(**USAGE) + StepUsage(input_tokens=10, output_tokens=2)
    assert totals["gpt-5.5"] == StepUsage(**USAGE)
    assert probe.served_usage("side") == {"claude-sonnet-4-5": StepUsage(input_tokens=0, output_tokens=0)}


def test_responses_stream_maps_tools_and_usage(probe: ProbeServer) -> None:
    """A Responses stream emits a message, the offered shell tool and exact usage details."""
    body = responses_body([rinput("user", "<environment_context>\n  <cwd>/w/cx</cwd>"),
                           rinput("user", "go")])
    r = request(probe.base_url, "POST", "/v1/responses", body)
    events = r.events()
    kinds = [d["type"] for _, d in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    done = [d["item"] for _, d in events if d["type"] == "response.output_item.done"]
    assert done[0]["content"][0]["text"] == "looking /w/cx"
    assert done[1]["name"] == "exec_command" and json.loads(done[1]["arguments"]) == {"cmd": "ls -la"}
    seqs = [d["sequence_number"] for _, d in events]
    assert seqs == sorted(set(seqs))
    usage = events[-1][1]["response"]["usage"]
    assert usage == {"input_tokens": 321, "input_tokens_details": {"cached_tokens": 67,
                                                                   "cache_write_tokens": 8},
                     "output_tokens": 45, "output_tokens_details": {"reasoning_tokens": 9},
                     "total_tokens": 366}


def test_responses_apply_patch_follows_the_offered_tool_kind(probe: ProbeServer) -> None:
    """apply_patch becomes a custom call, a function call, or a shell heredoc, per what is offered."""
    turn1 = [rinput("user", "go"), {"type": "function_call", "call_id": "c", "name": "exec_command",
                                    "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": "ok"}]

    def item(tools: list[dict]) -> dict:
        events = request(probe.base_url, "POST", "/v1/responses", responses_body(turn1, tools=tools)).events()
        return next(d["item"] for _, d in events if d["type"] == "response.output_item.done")

    custom = item([{"type": "custom", "name": "apply_patch"}, {"type": "function", "name": "exec_command"}])
    assert custom["type"] == "custom_tool_call" and custom["input"].startswith("*** Begin Patch")
    func = item([{"type": "function", "name": "apply_patch"}])
    assert func["type"] == "function_call" and "Begin Patch" in json.loads(func["arguments"])["input"]
    shell = item([{"type": "function", "name": "shell"}])
    assert shell["name"] == "shell" and json.loads(shell["arguments"])["command"][:2] == ["bash", "-lc"]
    assert "apply_patch <<'EOF'" in json.loads(shell["arguments"])["command"][2]


@pytest.mark.parametrize("needle, status, etype", [
    ("FAIL-", 429, "rate_limit_error"), ("AUTH-", 401, "authentication_error"),
    ("OVER-", 529, "overloaded_error")])
def test_error_steps_answer_the_status(probe: ProbeServer, needle: str, status: int, etype: str) -> None:
    """An error step answers its HTTP status with an Anthropic error body."""
    r = request(probe.base_url, "POST", "/v1/messages", anthropic_body([user(needle)]))
    assert r.status == status and r.json()["error"]["type"] == etype
    if status == 429:
        assert r.headers["retry-after"] == "3"
    (rec,) = probe.requests
    assert (rec.answer, rec.status, rec.usage) == ("error", status, None)
    assert probe.served_usage() == {}


def test_responses_error_body(probe: ProbeServer) -> None:
    """An error step on Responses answers an OpenAI-shaped error."""
    r = request(probe.base_url, "POST", "/v1/responses", responses_body([rinput("user", "FAIL-")]))
    assert r.status == 429 and r.json()["error"]["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize("api", ["anthropic", "responses"])
def test_drop_stream_cuts_the_connection(probe: ProbeServer, api: str) -> None:
    """A drop_stream step starts the stream and cuts it; the usage is not counted as served."""
    if api == "anthropic":
        r = request(probe.base_url, "POST", "/v1/messages", anthropic_body([user("DROP-")]))
        last = "message_stop"
    else:
        r = request(probe.base_url, "POST", "/v1/responses", responses_body([rinput("user", "DROP-")]))
        last = "response.completed"
    assert r.status == 200 and r.error is not None
    assert r.raw and last.encode() not in r.raw
    assert probe.wait_idle(timeout=60)
    (rec,) = probe.requests
    assert rec.answer == "drop_stream" and rec.completed is False
    assert probe.served_usage() == {}


def test_side_requests_do_not_consume_steps(probe: ProbeServer) -> None:
    """Title/quota calls, count_tokens, /v1/models and HEAD are side requests; the script is untouched."""
    request(probe.base_url, "HEAD", "/api/hello")
    tok = request(probe.base_url, "POST", "/v1/messages/count_tokens?beta=true",
                  {"model": "m", "messages": [user("x")]})
    assert tok.status == 200 and tok.json()["input_tokens"] > 0
    models = request(probe.base_url, "GET", "/v1/models")
    assert models.json()["data"]
    side = request(probe.base_url, "POST", "/v1/messages",
                   anthropic_body([user("quota")], tools=False, stream=False))
    assert side.json()["content"][0]["text"] == "PluginBench probe side answer."
    coding = request(probe.base_url, "POST", "/v1/messages", anthropic_body([user("go")]))
    assert _anthropic_message(coding.events())["content"][1]["name"] == "Bash"  # still step 0
    assert probe.wait_idle(timeout=60)
    kinds = [(r.kind, r.answer) for r in probe.requests]
    assert kinds == [("side", "hello"), ("side", "count_tokens"), ("side", "models"),
                     ("side", "text"), ("coding", "tool")]


def test_unknown_path_is_404_and_recorded(probe: ProbeServer) -> None:
    """An unknown route answers 404 and is still recorded."""
    r = request(probe.base_url, "POST", "/v2/whatever", {"x": 1})
    assert r.status == 404
    assert probe.requests[0].answer == "not_found"


@pytest.mark.parametrize("headers", [
    {"x-api-key": "sk-ant-api03-realLookingKey"},
    {"x-api-key": "", "authorization": "Bearer sk-ant-oat01-oauthToken"},
    {"x-api-key": "", "authorization": "Bearer sk-proj-openaiKey"},
])
def test_real_looking_credentials_are_refused(probe: ProbeServer, headers: dict) -> None:
    """A request with a real-looking key or token gets 401 and is flagged, and no step is used."""
    r = request(probe.base_url, "POST", "/v1/messages", anthropic_body([user("go")]), headers=headers)
    assert r.status == 401
    (rec,) = probe.requests
    assert rec.refused_real_credential and rec.step is None
    assert "sk-" not in json.dumps(rec.headers)  # the credential is not kept


def test_probe_and_absent_credentials_are_accepted(probe: ProbeServer) -> None:
    """The probe's fake key and a missing key are served normally."""
    a = request(probe.base_url, "POST", "/v1/responses", responses_body([rinput("user", "x")]),
                headers={"x-api-key": "", "authorization": f"Bearer {PROBE_OPENAI_KEY}"})
    b = request(probe.base_url, "POST", "/v1/responses", responses_body([rinput("user", "x")]),
                headers={"x-api-key": ""})
    assert (a.status, b.status) == (200, 200)
    assert not any(r.refused_real_credential for r in probe.requests)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_non_loopback_hosts_are_refused(host: str) -> None:
    """The probe refuses to bind anything but loopback."""
    with pytest.raises(InputError):
        ProbeServer(SCEN, host=host)


def test_ipv6_loopback_and_localhost_work() -> None:
    """::1 and localhost are loopback and serve."""
    for host in ("localhost", "::1"):
        try:
            server = ProbeServer(SCEN, host=host)
        except OSError:  # no IPv6 on this machine
            assert host == "::1"
            continue
        with server:
            r = request(server.base_url, "POST", "/v1/messages", anthropic_body([user("x")]))
            assert r.status == 200


def test_concurrent_conversations_do_not_interfere(probe: ProbeServer) -> None:
    """Parallel sessions at different turns each get their own step."""
    results: dict[int, str] = {}

    def run(turns: int) -> None:
        convo = [user("x")]
        for _ in range(turns):
            convo += [{"role": "assistant", "content": "a"}, user("y")]
        r = request(probe.base_url, "POST", "/v1/messages", anthropic_body(convo))
        results[turns] = _anthropic_message(r.events())["content"][-1].get("name") or \
            _anthropic_message(r.events())["content"][-1]["text"]

    threads = [threading.Thread(target=run, args=(n % 3,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: "Bash", 1: "apply_patch", 2: "final words"}
    assert probe.wait_idle(timeout=60)
    assert len(probe.requests) == 12


def test_log_file_gets_every_record(tmp_path: Path) -> None:
    """With log= every record is appended as one JSON line, in request order, even though a
    streamed answer is recorded only when its stream ends (after the client moved on)."""
    log = tmp_path / "probe.jsonl"
    with ProbeServer(SCEN, log=log) as server:
        request(server.base_url, "POST", "/v1/messages", anthropic_body([user("x")]))
        request(server.base_url, "HEAD", "/api/hello")
        assert server.wait_idle(timeout=60)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["seq"], r["answer"]) for r in lines] == [(1, "tool"), (2, "hello")]


def test_log_keeps_arrival_order_past_a_request_that_failed_unrecorded(tmp_path: Path) -> None:
    """A request that ends without a record (an undecodable gzip body) does not hold back later log lines."""
    log = tmp_path / "probe.jsonl"
    with ProbeServer(SCEN, log=log) as server:
        with pytest.raises(OSError):  # the server drops the connection without an answer
            request(server.base_url, "POST", "/v1/messages", "not gzip", headers={"content-encoding": "gzip"})
        request(server.base_url, "HEAD", "/api/hello")
        assert server.wait_idle(timeout=60)
        assert [r.answer for r in server.requests] == ["hello"]
        lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["seq"], r["answer"]) for r in lines] == [(2, "hello")]


def test_stop_is_idempotent_and_frees_the_port() -> None:
    """After stop the port refuses connections; stopping twice is harmless."""
    server = ProbeServer(bundled_scenario("text")).start()
    url = server.base_url
    server.stop()
    server.stop()
    with pytest.raises(OSError):
        request(url, "POST", "/v1/messages", anthropic_body([user("x")]))


def test_module_cli_serves_and_prints_base_url(tmp_path: Path) -> None:
    """`python -m pluginbench.probe serve` prints the base URL and answers until terminated."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pluginbench.probe", "serve", "--scenario",
         str(root / "pluginbench/probe/scenarios/text.yaml"), "--port", "0"],
        stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        r = request(url, "POST", "/v1/messages", anthropic_body([user("x")]))
        assert _anthropic_message(r.events())["content"][0]["text"] == "Hello from the PluginBench probe."
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


def test_module_cli_rejects_a_bad_scenario(tmp_path: Path) -> None:
    """A bad scenario file exits 2 with an error naming the file."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [{script: [{nope: 1}]}]\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "pluginbench.probe", "serve", "--scenario", str(bad)],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(root)),
                          timeout=30)
    assert proc.returncode == 2 and str(bad) in proc.stderr


def test_drop_on_a_non_streaming_request_cuts_the_json_body(probe: ProbeServer) -> None:
    """A drop_stream step answering a non-streaming request sends half the JSON body and cuts."""
    r = request(probe.base_url, "POST", "/v1/messages", anthropic_body([user("DROP-")], stream=False))
    assert r.status == 200 and r.error == "incomplete"
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.raw)
    assert probe.wait_idle(timeout=60)
    (rec,) = probe.requests
    assert (rec.answer, rec.stream, rec.completed, rec.usage) == ("drop_stream", False, False, None)


def test_log_lines_are_written_as_requests_settle_without_bodies(tmp_path: Path) -> None:
    """With log_bodies=False each answered request is in the log before the server stops (a killed worker keeps it), its body left out."""
    log = tmp_path / "probe.jsonl"
    with ProbeServer(SCEN, log=log, log_bodies=False) as server:
        request(server.base_url, "POST", "/v1/messages", anthropic_body([user("secret prompt")]))
        assert server.wait_idle(timeout=60)
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        assert [(r["seq"], r["answer"], r["body"]) for r in lines] == [(1, "tool", None)]
        assert "secret prompt" not in log.read_text()


def test_an_oversized_or_gzip_bomb_body_is_refused_without_reading_it(probe: ProbeServer, monkeypatch) -> None:
    """A body announcing more than MAX_BODY_BYTES, or a small gzip body inflating past it, is answered
    413 and recorded as too_large; the probe keeps serving."""
    import gzip
    import socket
    from urllib.parse import urlsplit

    from pluginbench.probe import _server

    monkeypatch.setattr(_server, "MAX_BODY_BYTES", 1024 * 1024)
    parts = urlsplit(probe.base_url)
    bomb = gzip.compress(bytes(_server.MAX_BODY_BYTES + 1024), compresslevel=9)
    assert len(bomb) < 8 * 1024
    heads = [f"Content-Length: {50 * 1024 ** 3}\r\n".encode(),
             f"Content-Encoding: gzip\r\nContent-Length: {len(bomb)}\r\n".encode()]
    for head, body in zip(heads, (b"", bomb), strict=True):
        with socket.create_connection((parts.hostname, parts.port), timeout=60) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: " + PROBE_ANTHROPIC_KEY.encode()
                      + b"\r\n" + head + b"\r\n" + body)
            assert b" 413 " in s.recv(64)
    assert [r.answer for r in probe.requests][-2:] == ["too_large", "too_large"]
    assert request(probe.base_url, "GET", "/v1/models").status == 200


def test_the_server_starts_and_answers_without_a_reverse_lookup_of_its_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """Binding asks no resolver for the loopback address's name (http.server's own
    ``server_bind`` calls ``socket.getfqdn``, which a broken resolver can stall)."""
    import socket

    def no_lookup(*args: object) -> str:
        raise AssertionError("the probe server asked the resolver for a name")

    monkeypatch.setattr(socket, "getfqdn", no_lookup)
    with ProbeServer(SCEN) as server:
        reply = request(server.base_url, "POST", "/v1/messages", anthropic_body([user("hello")], stream=False))
        assert reply.status == 200 and reply.json()["content"], reply.raw
        assert server.base_url == f"http://127.0.0.1:{server.port}"
