"""The viewer's pure parts and facts: transcripts of both real CLIs as timelines, patches per
file, two attempts compared, scrubbing, the evidence rules, ``show --json`` and bundles."""

from __future__ import annotations

import base64
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pluginbench.cli import app
from pluginbench.errors import InputError
from pluginbench.viewer import (
    AttemptFacts,
    _bundle,
    _scrub,
    attempt_dir,
    attempt_facts,
    claude_timeline,
    codex_timeline,
    divergence,
    load_timeline,
    patch_delta,
    safe_file,
    split_patch,
    tool_sequence,
    totals,
)
from tests.viewer._fixture import CLAUDE_ID, CODEX_ID, PATCH, TRACES, inspect_run

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
TOKEN = "sk-ant-oat01-" + "Q" * 30 + "viewer-test-token"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return inspect_run(tmp_path_factory.mktemp("viewer") / "inspect-run")


def test_claude_real_trace_gives_each_tool_call_in_order_with_turn_tokens() -> None:
    """The real Claude Code transcript reads as 6 tool calls in order, the failing first command marked, tokens per turn."""
    tl = load_timeline(TRACES / "claude")
    assert tl.harness == "claude" and tl.root is not None
    calls = [(s.name, s.summary) for s in tl.root.steps if s.kind == "tool"]
    assert [n for n, _ in calls] == ["Bash", "Read", "Edit", "Bash", "Bash", "Bash"]
    assert calls[0][1] == "python3 -m unittest -q" and calls[5][1].startswith("set -o pipefail")
    assert tl.root.steps[0].is_error is True and tl.root.steps[1].is_error is False
    assert tl.root.steps[0].tokens == {"input_tokens": 1200, "cache_creation_input_tokens": 0,
                                       "cache_read_input_tokens": 0, "output_tokens": 20}
    assert totals(tl.root)["turns"] == 7


def test_codex_real_rollout_gives_each_tool_call_in_order_and_stdout_alone_still_reads() -> None:
    """The real Codex rollout reads as exec/apply_patch calls in order with per-turn tokens; stdout alone gives the commands."""
    tl = load_timeline(TRACES / "codex")
    assert tl.harness == "codex" and tl.root is not None
    assert [s.name for s in tl.root.steps if s.kind == "tool"] == ["exec_command", "apply_patch", "exec_command",
                                                                    "exec_command", "exec_command"]
    assert tl.root.steps[1].summary == "calc.py" and tl.root.steps[0].is_error is True
    assert tl.root.steps[0].tokens and tl.root.steps[0].tokens["input_tokens"] == 1200
    only = codex_timeline([], (TRACES / "codex" / "agent" / "stdout.jsonl").read_text())
    assert only.root is not None and [s.name for s in only.root.steps if s.kind == "tool"][:2] == [
        "command_execution", "file_change"]


def test_provider_retries_and_subagents_are_shown() -> None:
    """A real 429-then-ok stream shows its retry; a stream subagent and a Codex child nest under the call that started them."""
    tl = claude_timeline((SAMPLES / "claude-code-2.1.328" / "03_err_429_then_ok.stream.jsonl").read_text(), "s")
    assert [(r.attempt, r.status) for r in tl.retries] == [(1, 429)]
    assert tl.root is not None and tl.root.steps[0].kind == "retry"
    lines = [
        {"type": "assistant", "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1", "name": "Task",
                                                                     "input": {"prompt": "look"}}]}},
        {"type": "assistant", "parent_tool_use_id": "t1",
         "message": {"id": "m2", "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]}},
    ]
    nested = claude_timeline("\n".join(json.dumps(x) for x in lines), "s")
    assert nested.root is not None
    task = nested.root.steps[0]
    assert task.name == "Task" and task.output == "done" and task.children[0].steps[0].summary == "ls"
    def meta(sid: str, parent: str | None) -> dict[str, object]:
        return {"type": "session_meta", "payload": {"id": sid, "source": (
            {"subagent": {"thread_spawn": {"parent_thread_id": parent}}} if parent else "exec")}}

    call = {"type": "response_item", "payload": {"type": "function_call", "name": "spawn_agent", "call_id": "c",
                                                  "arguments": "{\"message\": \"go\"}"}}
    child = {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "d",
                                                   "arguments": "{\"cmd\": \"pwd\"}"}}
    tl2 = codex_timeline([("rollout-a", "\n".join(map(json.dumps, [meta("A", None), call]))),
                          ("rollout-b", "\n".join(map(json.dumps, [meta("B", "A"), child])))])
    assert tl2.root is not None and tl2.root.steps[0].children[0].steps[0].summary == "pwd"
    assert totals(tl2.root)["subagents"] == 1


def test_a_long_output_is_cut_and_says_so() -> None:
    """A tool output over the keep limit is cut with a note of how much was left out."""
    lines = [{"type": "assistant", "message": {"id": "m", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                                                        "input": {"command": "yes"}}]}},
             {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "y" * 50_000}]}}]
    tl = claude_timeline("\n".join(map(json.dumps, lines)), "s")
    assert tl.root is not None and tl.root.steps[0].output is not None
    assert tl.root.steps[0].output.endswith("(30,000 more characters cut)")


def test_patch_split_per_file_and_two_attempts_compared() -> None:
    """A patch splits per file with its line counts; two patches diff; tool sequences part at the first difference."""
    files = split_patch(PATCH)
    assert [(f.path, f.added, f.removed) for f in files] == [("calc.py", 1, 1), ("notes.txt", 1, 0)]
    assert split_patch("") == []
    assert patch_delta(PATCH, PATCH) == "" and "+pytest" not in patch_delta(PATCH, PATCH.replace("a - b", "a * b"))
    assert divergence(["a", "b", "c"], ["a", "x"]) == 1 and divergence(["a"], ["a", "b"]) == 1
    assert divergence(["a"], ["a"]) is None


@pytest.mark.parametrize(("text", "kind"), [
    ("key sk-ant-api03-" + "A" * 40, "anthropic key"),
    ("OPENAI sk-proj-" + "b" * 40, "openai key"),
    ("ghp_" + "c" * 36, "github token"),
    ("AKIA" + "D" * 16, "aws access key"),
    ("eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.abcdefghijkl", "jwt"),
    ("Authorization: Bearer " + "e" * 32, "bearer value"),
    ("xoxb-1234567890-abcdef", "slack token"),
    ("AIza" + "F" * 35, "google api key"),
    ("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----", "private key"),
])
def test_token_like_strings_are_redacted(text: str, kind: str) -> None:
    """Each kind of token-like string is replaced, counted, and no longer found."""
    clean, counts = _scrub.scrub_text(text, [], [], None)
    assert counts == {kind: 1} and _scrub.TOKEN in clean and not _scrub.findings(clean, [], [], None)


def test_credentials_in_any_encoding_host_paths_and_the_user_are_replaced() -> None:
    """A delivered credential (literal and base64), host folders and the user name are replaced; a common name is kept."""
    forms = _scrub.credential_forms(["my-delivered-credential-value"])
    b64 = base64.b64encode(b"xx my-delivered-credential-value").decode()
    text = f"a my-delivered-credential-value b {b64} /srv/me/runs/r1/evidence /home/alice/x alice said"
    clean, counts = _scrub.scrub_text(text, forms, [("/srv/me/runs/r1", "<run>")], "alice")
    assert "credential-value" not in clean and "bXktZGVs" not in clean[-80:] and "<run>/evidence" in clean
    assert "/home/<user>/x <user> said" in clean and counts["delivered credential"] == 2
    assert _scrub.scrub_text("the agent ran", [], [], "agent")[0] == "the agent ran"


def test_evidence_rules_refuse_traversal_and_symlinks(run: Path, tmp_path: Path) -> None:
    """An id or path that leaves the attempt, or a symlink anywhere on the way, is refused."""
    folder = attempt_dir(run, CLAUDE_ID)
    assert folder is not None and safe_file(folder, "model.patch") is not None
    for bad in ("..", "../x", "a/b", ".hidden", "", "x\\y"):
        assert attempt_dir(run, bad) is None, bad
    for rel in ("../task-a.guided.0/model.patch", "./model.patch", "agent//stdout.jsonl", "/etc/passwd", "agent"):
        assert safe_file(folder, rel) is None, rel
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (folder / "link.txt").symlink_to(outside)
    (folder / "linkdir").symlink_to(tmp_path)
    assert safe_file(folder, "link.txt") is None and safe_file(folder, "linkdir/outside.txt") is None
    (run / "evidence" / "attempts" / "linked.0").symlink_to(folder)
    assert attempt_dir(run, "linked.0") is None
    with pytest.raises(InputError):
        attempt_facts(run, "../inspect-run")
    (folder / "link.txt").unlink()
    (folder / "linkdir").unlink()
    (run / "evidence" / "attempts" / "linked.0").unlink()
    # a run whose evidence/attempts (or evidence) folder is a symlink to another run's
    for linked in ("evidence/attempts", "evidence"):
        other = tmp_path / f"linked-{linked.replace('/', '-')}"
        (other / "evidence").mkdir(parents=True)
        for name in ("evaluation.json", "events.jsonl"):
            (other / name).write_bytes((run / name).read_bytes())
        if linked == "evidence":
            (other / "evidence").rmdir()
        (other / linked).symlink_to(run / linked)
        assert attempt_dir(other, CLAUDE_ID) is None, linked
    discarded = run / "evidence" / "discarded"
    made = not discarded.exists()
    discarded.mkdir(exist_ok=True)
    (discarded / "task-a.guided.1").symlink_to(folder)
    try:
        assert attempt_dir(run, "task-a.guided.1") is None
    finally:
        (discarded / "task-a.guided.1").unlink()
        if made:
            discarded.rmdir()


def test_show_json_has_the_documented_schema_and_the_facts(run: Path) -> None:
    """`show --json` prints every documented key; the facts are the attempt's outcome, patch, calls, tail and receipt."""
    res = CliRunner().invoke(app, ["show", str(run), CLAUDE_ID, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc) == set(AttemptFacts.__struct_fields__)
    documented = (Path(__file__).resolve().parents[2] / "docs" / "viewer.md").read_text()
    assert all(f"`{k}`" in documented for k in doc), [k for k in doc if f"`{k}`" not in documented]
    assert doc["schema_version"] == 1 and doc["outcome"] == "pass" and doc["reward"] == 1.0
    assert [f["path"] for f in doc["patch_files"]] == ["calc.py", "notes.txt"]
    assert doc["verifier_result"]["p2p_failed_tests"] == ["tests/test_b.py::t"]
    assert doc["verifier_tail"].endswith("HIDDEN-TESTS-OK") and "line 59" not in doc["verifier_tail"]
    assert doc["receipt"] == {"memory": ["CLAUDE.md"], "skills": ["tdd"]}
    assert [s["name"] for s in doc["timeline"]["root"]["steps"] if s["kind"] == "tool"][0] == "Bash"
    # the nested shapes the schema table documents
    assert set(doc["timeline"]) == {"harness", "source", "root", "retries", "notes"}
    assert set(doc["timeline"]["root"]) == {"name", "turns", "steps"}
    assert all(set(s) == {"kind", "turn", "name", "summary", "input", "output", "is_error", "tokens", "children"}
               for s in doc["timeline"]["root"]["steps"])
    assert set(doc["timeline_totals"]) == {"turns", "tool_calls", "subagents", "steps"}
    assert all(set(f) == {"path", "added", "removed", "binary", "text"} for f in doc["patch_files"])
    assert all(set(m) == {"name", "value", "unit", "status", "reason"} for m in doc["measures"])
    assert all(isinstance(p, str) and isinstance(n, int) for p, n in doc["files"])
    listing = CliRunner().invoke(app, ["show", str(run), "--json"])
    rows = json.loads(listing.stdout)
    assert set(rows) == {"schema_version", "attempts"} and rows["schema_version"] == 1
    assert all(set(a) == {"attempt_id", "task", "arm", "repeat", "state", "outcome", "outcome_reason", "tokens",
                          "tokens_status", "reused"} for a in rows["attempts"])
    assert [a["attempt_id"] for a in rows["attempts"]][:2] == [CLAUDE_ID, "task-a.vanilla.1"]
    bad = CliRunner().invoke(app, ["show", str(run), "no-such"])
    assert bad.exit_code == 2 and "no attempt 'no-such'" in bad.output


def test_bundle_has_no_token_no_host_path_and_reopens_with_the_same_numbers(run: Path, tmp_path: Path) -> None:
    """A bundle scrubs a delivered token (also base64) and host paths, lists sha256s, and shows the same facts."""
    stdout = run / "evidence" / "attempts" / CODEX_ID / "agent" / "stdout.jsonl"
    original = stdout.read_text()
    leak = json.dumps({"type": "error", "message": f"token {TOKEN} b64 {base64.b64encode(TOKEN.encode()).decode()} "
                                                   f"at {run}/evidence and {Path.home()}/x"})
    stdout.write_text(original + leak + "\n")
    try:
        out = tmp_path / "b.tar.gz"
        env = {**os.environ, "CLAUDE_CODE_OAUTH_TOKEN": TOKEN}
        result = _bundle.write_bundle(run, out, environ=env)
        assert result.replaced.get("delivered credential", 0) >= 2 and result.replaced.get("host path", 0) >= 1
        with tarfile.open(out) as tar:
            blobs = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]  # every member listed is a file
        everything = b"".join(blobs.values())
        assert TOKEN.encode() not in everything and base64.b64encode(TOKEN.encode())[:20] not in everything
        assert str(run).encode() not in everything and f"{Path.home()}/x".encode() not in everything
        manifest = json.loads(blobs["inspect-run/bundle/manifest.json"])
        assert {f["path"] for f in manifest["files"]} >= {"events.jsonl", "report/results.json",
                                                          f"evidence/attempts/{CLAUDE_ID}/model.patch"}
        assert "NOTE.md" in " ".join(blobs) and _bundle.write_bundle(run, tmp_path / "c.tar.gz", environ=env).bytes == result.bytes
        a = json.loads(CliRunner().invoke(app, ["show", str(run), CLAUDE_ID, "--json"]).stdout)
        b = json.loads(CliRunner().invoke(app, ["show", str(out), CLAUDE_ID, "--json"]).stdout)
        for key in ("outcome", "reward", "tokens", "measures", "patch_files", "timeline_totals", "verifier_tail", "receipt"):
            assert a[key] == b[key], key
    finally:
        stdout.write_text(original)


def test_bundle_refuses_when_a_scan_still_finds_a_secret(run: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """If scrubbing missed a credential, the second scan refuses and nothing is written."""
    stdout = run / "evidence" / "attempts" / CLAUDE_ID / "agent" / "stderr.txt"
    stdout.write_text(f"leaked {TOKEN}\n")
    monkeypatch.setattr(_bundle, "scrub_text", lambda text, *a: (text, {}))
    out = tmp_path / "refused.tar.gz"
    try:
        with pytest.raises(_bundle.BundleRefused, match="still finds"):
            _bundle.write_bundle(run, out, environ={**os.environ, "CLAUDE_CODE_OAUTH_TOKEN": TOKEN})
        assert not out.exists() and not list(tmp_path.iterdir())
    finally:
        stdout.unlink()
    assert tool_sequence(None) == []


def test_bad_input_names_the_path_and_exits_2(run: Path, tmp_path: Path) -> None:
    """A folder that is not a run, an output folder that does not exist, or a changed bundle: exit 2, nothing written."""
    runner = CliRunner()
    for args in (["show", str(tmp_path)], ["show", str(tmp_path), "x"], ["bundle", str(tmp_path)],
                 ["bundle", str(run), "-o", str(tmp_path / "missing" / "b.tar.gz")]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "Traceback" not in res.output, (args, res.output)
    assert not (tmp_path / "missing").exists()
    good = tmp_path / "good.tar.gz"
    _bundle.write_bundle(run, good, environ=dict(os.environ))
    with tarfile.open(good) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]  # files only
    changed = tmp_path / "changed.tar.gz"
    with tarfile.open(changed, "w:gz") as tar:
        for m, data in members:
            if data is not None and m.name.endswith("model.patch"):
                data = data.replace(b"a + b", b"a * b")
                m.size = len(data)
            tar.addfile(m, None if data is None else io.BytesIO(data))
    res = runner.invoke(app, ["show", str(changed), CLAUDE_ID])
    assert res.exit_code == 2 and "does not match the manifest" in res.output


def test_an_evidence_file_whose_name_is_not_utf8_is_listed_escaped(tmp_path: Path) -> None:
    """An exported file named with non-UTF-8 bytes is listed escaped, so the attempt page and JSON can be written
    (it made the dashboard's attempt page answer 500)."""
    from html import escape
    from urllib.parse import quote

    from pluginbench.viewer._evidence import list_files

    (tmp_path / "export").mkdir()
    (tmp_path / "export" / os.fsdecode(b"bad\xff.py")).write_text("x\n")
    (tmp_path / "export" / "ok.py").write_text("y\n")
    listed = list_files(tmp_path)
    assert listed == [("export/bad\\xff.py", 2), ("export/ok.py", 2)]
    json.dumps(listed).encode("utf-8")
    for path, _size in listed:
        (quote(path) + escape(path)).encode("utf-8")


def test_a_damaged_log_is_refused_once_with_its_own_file_field_and_fix(run: Path, tmp_path: Path) -> None:
    """show of a run whose log has a garbled line prints that refusal once (line, file, fix), not wrapped in a second error that calls it no run directory."""
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(run, damaged)
    lines = (damaged / "events.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = b'{"type": "attempt.sta\n'
    (damaged / "events.jsonl").write_bytes(b"".join(lines))
    res = CliRunner().invoke(app, ["show", str(damaged)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.output.count("error:") == 1 and "field: line 2" in res.output
    assert "pass a run directory" not in res.output


def test_a_run_with_a_damaged_log_is_not_bundled(run: Path, tmp_path: Path) -> None:
    """bundle of a run whose log has a garbled line exits 2 naming the line and writes no archive that show could not open."""
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(run, damaged)
    lines = (damaged / "events.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = b'{"type": "attempt.sta\n'
    (damaged / "events.jsonl").write_bytes(b"".join(lines))
    res = CliRunner().invoke(app, ["bundle", str(damaged), "-o", str(tmp_path / "b.tar.gz")])
    assert res.exit_code == 2 and "field: line 2" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "b.tar.gz").exists()
