"""The review response parser and the review packet (pure and file-level, no CLI)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pluginbench.review import (
    MalformedResponse,
    PacketError,
    build_packet,
    final_message,
    parse_response,
    simulated_findings,
    verify_packet,
)

GOOD = '{"findings": [{"severity": "high", "category": "correctness", "title": "wrong sign", "file": "a.py", "line": 2}]}'


def test_a_bare_or_fenced_json_answer_gives_its_findings() -> None:
    """The final message may be the JSON object itself or one ```json block inside prose."""
    for text in (GOOD, f"Here is my review:\n```json\n{GOOD}\n```\n"):
        [f] = parse_response(text)
        assert (f.severity, f.category, f.title, f.file, f.line) == ("high", "correctness", "wrong sign", "a.py", 2)
    assert parse_response('{"findings": []}') == []


@pytest.mark.parametrize("text, why", [
    ("Looks fine to me.", "no JSON object"),
    ("", "no final message"),
    ('{"findings": [{"severity": "critical", "category": "tests", "title": "x"}]}', "not valid review JSON"),
    ('{"findings": [{"severity": "low", "category": "tests", "title": "x", "arm": "guided"}]}', "not valid review JSON"),
    ('{"issues": []}', "not valid review JSON"),
])
def test_a_malformed_answer_is_refused_with_the_reason(text: str, why: str) -> None:
    """Prose, an unknown severity, an extra field or a missing list is malformed, never zero findings."""
    with pytest.raises(MalformedResponse, match=why):
        parse_response(text)


def test_the_final_message_is_read_from_each_cli_stream() -> None:
    """Claude's last result event and Codex's last agent_message are the final message."""
    claude = "\n".join(json.dumps(e) for e in [{"type": "assistant"}, {"type": "result", "result": GOOD}])
    codex = "\n".join(json.dumps(e) for e in [
        {"type": "item.completed", "item": {"type": "agent_message", "text": "thinking"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": GOOD}}])
    assert final_message("claude", claude) == GOOD
    assert final_message("codex", codex) == GOOD
    assert final_message("claude", "not json\n") is None


def _inputs(tmp: Path) -> tuple[Path, str, Path]:
    src = tmp / "starting"
    src.mkdir()
    (src / "a.py").write_text("def f():\n    return 1\n")
    patch = tmp / "model.patch"
    patch.write_bytes(b"--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n")
    return src, hashlib.sha256(patch.read_bytes()).hexdigest(), patch


def test_the_packet_holds_only_the_bound_review_inputs(tmp_path: Path) -> None:
    """The packet has the instruction, criteria, patch, schema and starting source, bound by digests; no arm."""
    src, sha, patch = _inputs(tmp_path)
    packet = build_packet(tmp_path / "evidence", "t__guided-arm__r1", task="t", patch=patch, patch_sha256=sha,
                          starting_source=src, instruction="Fix f.", criteria=b"# criteria\n")
    files = sorted(str(p.relative_to(packet.root)) for p in packet.root.rglob("*") if p.is_file())
    assert files == ["criteria.md", "instruction.md", "response-schema.json", "source/a.py", "submission.patch"]
    assert not any("guided-arm" in p.read_text() for p in packet.root.rglob("*") if p.is_file())
    assert packet.binding["submission_sha256"] == sha
    assert packet.binding["criteria_sha256"] == hashlib.sha256(b"# criteria\n").hexdigest()
    assert verify_packet(tmp_path / "evidence", "t__guided-arm__r1", patch_sha256=sha).binding == packet.binding


def test_a_packet_is_refused_when_it_no_longer_matches_its_binding(tmp_path: Path) -> None:
    """An edited patch, or a submission other than the captured one, is refused."""
    src, sha, patch = _inputs(tmp_path)
    with pytest.raises(PacketError, match="does not match the submission"):
        build_packet(tmp_path / "ev", "a", task="t", patch=patch, patch_sha256="0" * 64, starting_source=src,
                     instruction="i", criteria=b"c")
    packet = build_packet(tmp_path / "ev", "a", task="t", patch=patch, patch_sha256=sha, starting_source=src,
                          instruction="i", criteria=b"c")
    (packet.root / "submission.patch").write_text("edited\n")
    with pytest.raises(PacketError, match="submission_sha256"):
        verify_packet(tmp_path / "ev", "a", patch_sha256=sha)


def test_the_simulated_reviewer_is_deterministic() -> None:
    """Same patch, same findings: an empty patch is one high correctness finding; no test file, one low tests finding."""
    assert [f.severity for f in simulated_findings("")] == ["high"]
    patch = "--- a/a.py\n+++ b/a.py\n@@\n+x = 1  # TODO\n"
    assert simulated_findings(patch) == simulated_findings(patch)
    assert sorted((f.category, f.severity) for f in simulated_findings(patch)) == [("readability", "medium"), ("tests", "low")]
