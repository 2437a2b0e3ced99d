"""The real dashboard server's attempt pages over HTTP: facts, patch, calls, tail, receipt,
paging a 5,000-turn transcript, side by side, evidence files, every refusal, and a bundle."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pluginbench.dashboard._discovery import run_key
from pluginbench.viewer._bundle import write_bundle
from tests.dashboard.server import dashboard, request
from tests.viewer._fixture import CLAUDE_ID, CODEX_ID, inspect_run
from tests.viewer.long_transcript import long_stream

LONG_ID = "task-b.vanilla.0"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, Path, Path]]:
    base = tmp_path_factory.mktemp("attempt-http")
    runs = base / "runs"
    root = inspect_run(runs / "inspect-run")
    long_dir = root / "evidence" / "attempts" / LONG_ID / "agent"
    long_dir.mkdir(parents=True)
    (long_dir / "stdout.jsonl").write_text(long_stream(5000))
    other = inspect_run(runs / "other-run")
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
    """An attempt's regular file is served as plain text; traversal, other runs' files and symlinks are refused."""
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
