"""The real dashboard server's attempt pages over HTTP: facts, patch, calls, tail, receipt,
paging a 5,000-turn transcript, side by side, evidence files, every refusal, and a bundle."""

from __future__ import annotations

import http.client
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pluginbench.dashboard._discovery import run_key
from pluginbench.viewer._bundle import write_bundle
from tests.dashboard.server import dashboard, request
from tests.viewer._fixture import CLAUDE_ID, CODEX_ID, inspect_run
from tests.viewer.long_transcript import long_stream, subagent_stream

LONG_ID = "task-b.vanilla.0"
SUB_ID, HOSTILE_ID = "task-a.vanilla.1", "task-a.guided.1"  # in other-run: complete attempts with no evidence yet
XSS = '</code></pre><script>alert(1)</script><img src=x onerror=alert(2)>"\'><svg onload=alert(3)>'


def _hostile(root: Path) -> None:
    """An attempt whose transcript, patch, verifier output and receipt all carry markup."""
    folder = root / "evidence" / "attempts" / HOSTILE_ID
    (folder / "agent").mkdir(parents=True)
    (folder / "agent" / "stdout.jsonl").write_text("\n".join(json.dumps(x) for x in (
        {"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "text", "text": XSS},
            {"type": "tool_use", "id": "t1", "name": XSS, "input": {"command": XSS}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": XSS}]}})) + "\n")
    (folder / "model.patch").write_text(f"diff --git a/{XSS} b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+{XSS}\n")
    (folder / "grading").mkdir()
    (folder / "grading" / "test-stdout.txt").write_text(XSS)
    (folder / "native-treatment.json").write_text(json.dumps({"memory": [XSS]}))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, Path, Path]]:
    base = tmp_path_factory.mktemp("attempt-http")
    runs = base / "runs"
    root = inspect_run(runs / "inspect-run")
    long_dir = root / "evidence" / "attempts" / LONG_ID / "agent"
    long_dir.mkdir(parents=True)
    (long_dir / "stdout.jsonl").write_text(long_stream(5000))
    other = inspect_run(runs / "other-run")
    sub_dir = other / "evidence" / "attempts" / SUB_ID / "agent"
    sub_dir.mkdir(parents=True)
    (sub_dir / "stdout.jsonl").write_text(subagent_stream(3, 2500))
    _hostile(other)
    (other / "evidence" / "attempts" / CLAUDE_ID / "other-secret.txt").write_text("other run")
    (base / "outside.txt").write_text("outside")
    folder = root / "evidence" / "attempts" / CLAUDE_ID
    (folder / "link.txt").symlink_to(base / "outside.txt")
    (folder / "agent" / "linkdir").symlink_to(base)
    (root / "evidence" / "attempts" / "task-a.guided.1").symlink_to(other / "evidence" / "attempts" / CLAUDE_ID)
    bundle = base / "inspect.tar.gz"
    write_bundle(root, bundle, environ=dict(os.environ))
    with dashboard(runs, bundle) as port:
        yield port, run_key(root), root, base


def _get(port: int, path: str) -> tuple[int, str]:
    status, body = request(port, "GET", path)
    return status, body.decode()


def test_attempt_page_shows_facts_patch_calls_in_order_tail_and_receipt(served: tuple[int, str, Path, Path]) -> None:
    """The attempt page of a real Claude Code trace shows outcome, both patch files, each tool call in order, the tail, the receipt."""
    port, key, _root, _ = served
    status, page = _get(port, f"/run/{key}/attempt/{CLAUDE_ID}")
    assert status == 200, page[-600:]
    assert 'id="outcome" class="m-pass"' in page and "p2p_failed_tests" in page
    assert re.findall(r'data-path="([^"]+)"', page) == ["calc.py", "notes.txt"]
    calls = re.findall(r'<b class="tool-name">([^<]+)</b> <code class="tool-summary">([^<]*)</code>', page)
    assert [c[0] for c in calls] == ["Bash", "Read", "Edit", "Bash", "Bash", "Bash"]
    assert calls[0][1] == "python3 -m unittest -q"
    assert "HIDDEN-TESTS-OK" in page and "line 59\n" not in page and "&quot;tdd&quot;" in page
    status, codex = _get(port, f"/run/{key}/attempt/{CODEX_ID}")
    assert status == 200 and re.findall(r'<b class="tool-name">([^<]+)</b>', codex)[:2] == [
        "exec_command", "apply_patch"]
    run_page = _get(port, f"/run/{key}")[1]
    assert f'href="/run/{key}/attempt/{CLAUDE_ID}"' in run_page
    assert f'/attempt/{CLAUDE_ID}"' in _get(port, "/results")[1]


def test_a_5000_turn_transcript_is_paged(served: tuple[int, str, Path, Path]) -> None:
    """A 5,000-turn transcript renders 200 steps a page, with links to all 25 pages, and page 25 holds the last turn."""
    port, key, _root, _ = served
    status, page = _get(port, f"/run/{key}/attempt/{LONG_ID}")
    assert status == 200 and page.count('class="step tool') == 200 and "5,000 model turns" in page
    assert "?page=25#timeline" in page and "echo step 199<" in page and "echo step 200<" not in page
    last = _get(port, f"/run/{key}/attempt/{LONG_ID}?page=25")[1]
    assert "echo step 4999<" in last and last.count('class="step tool') == 200


def test_side_by_side_shows_both_attempts_and_where_they_part(served: tuple[int, str, Path, Path]) -> None:
    """Side by side shows both attempts, where their tool calls part ways, and the diff of the two patches."""
    port, key, _root, _ = served
    status, page = _get(port, f"/run/{key}/side/{CLAUDE_ID}/{CODEX_ID}")
    assert status == 200 and page.count('class="side-col"') == 2
    assert "part ways at call 1" in page and "notes.txt" in page


def test_evidence_files_are_served_only_from_that_attempt(served: tuple[int, str, Path, Path]) -> None:
    """An attempt's regular file is served as plain text; traversal (in the path, the ids, encoded), other runs' files and symlinks are refused on every attempt route."""
    port, key, root, _ = served
    status, body = request(port, "GET", f"/run/{key}/attempt/{CLAUDE_ID}/file/model.patch")
    assert status == 200 and body == (root / "evidence" / "attempts" / CLAUDE_ID / "model.patch").read_bytes()
    refused = {
        f"/run/{key}/attempt/{CLAUDE_ID}/file/../../../events.jsonl": 400,
        f"/run/{key}/attempt/{CLAUDE_ID}/file/%2e%2e/{CODEX_ID}/model.patch": 400,
        f"/run/{key}/attempt/..%2f..%2fevaluation.json/file/x": 400,
        f"/run/{key}/attempt/{CLAUDE_ID}/file/other-secret.txt": 404,
        f"/run/{key}/attempt/{CLAUDE_ID}/file/link.txt": 404,
        f"/run/{key}/attempt/{CLAUDE_ID}/file/agent/linkdir/outside.txt": 404,
        f"/run/{key}/attempt/task-a.guided.1/file/other-secret.txt": 404,
        f"/run/{key}/attempt/task-a.guided.1": 404,
        f"/run/{key}/attempt/{CLAUDE_ID}/file/agent": 404,
        f"/run/{key}/attempt/{CLAUDE_ID}/file//etc/passwd": 404,
        f"/run/{key}/attempt/no-such/file/model.patch": 404,
        f"/run/{key}/attempt/{CLAUDE_ID}/file/model.patch%00": 400,
        f"/run/{key}/attempt/{CLAUDE_ID}/file/agent%5cstdout.jsonl": 400,
        f"/run/{key}/attempt/task-a.guided.1?thread=0.0": 404,
        f"/run/{key}/side/{CLAUDE_ID}/task-a.guided.1": 404,
        f"/run/{key}/side/{CLAUDE_ID}/..": 400,
        f"/run/{key}/side/%2e%2e/{CLAUDE_ID}": 400,
        f"/run/no-such-run/attempt/{CLAUDE_ID}": 404,
        f"/run/no-such-run/attempt/{CLAUDE_ID}/file/model.patch": 404,
    }
    for path, code in refused.items():
        status, body = request(port, "GET", path)
        assert status == code and b"outside" not in body and b"other run" not in body, path
    assert request(port, "POST", f"/run/{key}/attempt/{CLAUDE_ID}")[0] == 405


def test_a_bundle_opens_in_the_dashboard_with_the_same_numbers(served: tuple[int, str, Path, Path]) -> None:
    """The bundle served beside its run shows the same attempt facts (outcome, tokens, calls)."""
    port, key, _root, _ = served
    runs = _get(port, "/")[1]
    keys = sorted(set(re.findall(r'data-run="(inspect-run-[0-9a-f]+)"', runs)))
    assert len(keys) == 2 and key in keys
    bundled = next(k for k in keys if k != key)

    def facts(k: str) -> list[str]:
        page = _get(port, f"/run/{k}/attempt/{CLAUDE_ID}")[1]
        table = page.split('id="facts">', 1)[1].split("</table>", 1)[0]
        return [re.sub(r"<[^>]+>", "", table), *re.findall(r'<b class="tool-name">([^<]+)</b>', page)]

    assert facts(bundled) == facts(key)


def test_a_subagent_thread_of_thousands_of_steps_is_paged(served: tuple[int, str, Path, Path]) -> None:
    """A 2,500-step subagent shows its first 200 steps in its fold with links to its 13 pages; each page holds its own steps and leads back."""
    port, _key, _root, base = served
    key = run_key(base / "runs" / "other-run")
    status, page = _get(port, f"/run/{key}/attempt/{SUB_ID}")
    fold = page.split('<details class="children" data-thread="3.0">', 1)[1]
    assert status == 200 and fold.count('class="step tool') == 200 and "2,500 steps" in fold
    assert "child step 199<" in fold and "child step 200<" not in fold
    assert f'href="/run/{key}/attempt/{SUB_ID}?thread=3.0&amp;page=13#thread"' in fold
    status, last = _get(port, f"/run/{key}/attempt/{SUB_ID}?thread=3.0&page=13")
    steps = last.split('id="steps">', 1)[1]
    assert status == 200 and steps.count('class="step tool') == 100
    assert "child step 2499<" in steps and "child step 2399<" not in steps and "echo step 0<" not in steps
    assert f'href="/run/{key}/attempt/{SUB_ID}?page=1#timeline">main timeline</a> (step 4)' in last
    for bad in ("9.0", "3.1", "3.0-0.0", "..%2f", "3.0.0", "-1.0", "<script>"):
        status, page = _get(port, f"/run/{key}/attempt/{SUB_ID}?thread={bad}")
        assert status == 200 and 'id="thread" class="warn"' in page and "<script>" not in page, bad


def test_markup_in_agent_text_is_shown_as_text_under_the_csp(served: tuple[int, str, Path, Path]) -> None:
    """Markup in a transcript, patch, verifier output or receipt is escaped on every page; pages carry the CSP and answer only the dashboard's Host."""
    port, _key, _root, base = served
    key = run_key(base / "runs" / "other-run")
    for path in (f"/run/{key}/attempt/{HOSTILE_ID}", f"/run/{key}/side/{HOSTILE_ID}/{CLAUDE_ID}"):
        status, page = _get(port, path)
        assert status == 200 and "alert(" in page, path
        for raw in ("<script>alert", "<img src=x", "<svg onload", "onerror=alert(2)>"):
            assert raw not in page, (path, raw)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for path in (f"/run/{key}/attempt/{HOSTILE_ID}", f"/run/{key}/side/{HOSTILE_ID}/{CLAUDE_ID}",
                     f"/run/{key}/attempt/{HOSTILE_ID}/file/model.patch"):
            conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
            resp = conn.getresponse()
            resp.read()
            csp = resp.getheader("Content-Security-Policy") or ""
            assert resp.status == 200 and "default-src 'none'" in csp and "'unsafe-inline'" not in csp.split(
                "script-src", 1)[-1].split(";")[0], (path, csp)
            assert resp.getheader("X-Content-Type-Options") == "nosniff"
        assert resp.getheader("Content-Type", "").startswith("text/plain") and "sandbox" in csp
    finally:
        conn.close()
    for host in ("evil.example:80", f"127.0.0.1.evil.example:{port}", f"localhost:{port + 1}"):
        assert request(port, "GET", f"/run/{key}/attempt/{HOSTILE_ID}", host=host)[0] == 403, host


def test_report_served_by_the_dashboard_links_attempts_and_side_by_side(served: tuple[int, str, Path, Path]) -> None:
    """report.html on disk has no attempt links; served, each attempt and each vanilla/treatment pair links to a page that opens."""
    port, key, root, _ = served
    disk = (root / "report" / "report.html").read_text()
    assert not re.search(r' href="(attempt|side)/', disk) and 'data-href="attempt/' in disk
    status, page = _get(port, f"/run/{key}/report.html")
    hrefs = re.findall(r'<a class="pb-link" href="([^"]+)"', page)
    assert status == 200 and f"attempt/{CLAUDE_ID}" in hrefs and f"side/{CLAUDE_ID}/{CODEX_ID}" in hrefs
    assert len(hrefs) == disk.count('<a class="pb-link" data-href="')
    for href in (f"attempt/{CLAUDE_ID}", f"attempt/{CODEX_ID}", f"side/{CLAUDE_ID}/{CODEX_ID}"):
        assert _get(port, f"/run/{key}/{href}")[0] == 200, href
