"""pluginbench probe serve: the loopback server as a command."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

from pluginbench.probe import PROBE_ANTHROPIC_KEY, SCENARIOS_DIR


def test_probe_serve_prints_its_url_and_answers() -> None:
    """The server prints a loopback base URL and answers a Messages request from the scenario."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pluginbench", "probe", "serve", "--scenario", str(SCENARIOS_DIR / "text.yaml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 50, "stream": False,
                           "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
                           "messages": [{"role": "user", "content": "hi"}]}).encode()
        req = urllib.request.Request(f"{url}/v1/messages", data=body, method="POST", headers={
            "content-type": "application/json", "x-api-key": PROBE_ANTHROPIC_KEY, "anthropic-version": "2023-06-01"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            answer = json.loads(resp.read())
        assert answer["type"] == "message" and answer["usage"]["output_tokens"] >= 0
    finally:
        proc.terminate()
        proc.wait(timeout=60)
