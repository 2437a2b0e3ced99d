"""A damaged log is refused before anything is rebuilt or resumed (issue 21 item 2).

Each damage (the log cut at a line boundary, with and without its ledger; a second
``run.created``; an event about an attempt the run never had; an event version this
PluginBench does not read) is refused by ``report``, ``status`` and ``run <dir>`` (the
resume) with exit 2 naming the line and the fix, and the run folder is byte-identical
afterwards: no report rebuilt from part of the truth, no attempt coded again over its
evidence.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import write_config


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One finished simulated run (two tasks, vanilla + one treatment), made once."""
    base = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(base / "cache"))
        config = write_config(base, tasks=["roman-numerals", "word-wrap"])
        code, out = run_cli("run", str(config), "--output", str(base / "run"), "--foreground")
        assert code == 0, out
    yield base / "run"


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the finished run (its lock record dropped: the copy is not a move)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    dest = tmp_path / "run"
    shutil.copytree(finished_run, dest)
    (dest / "run.lock").unlink(missing_ok=True)
    return dest


def tree_hash(root: Path) -> dict[str, str]:
    """Every file under ``root`` by relative path, with its sha256."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]


def _write(run: Path, events: list[dict[str, object]]) -> None:
    (run / "events.jsonl").write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))


def _first_completed(events: list[dict[str, object]]) -> int:
    return next(i for i, e in enumerate(events) if e["type"] == "attempt.completed")


def truncate(run: Path) -> str:
    """Cut the log at a line boundary just before the first attempt completes."""
    events = _lines(run)
    _write(run, events[: _first_completed(events)])
    return "the log lost its last"


def truncate_without_ledger(run: Path) -> str:
    """The same cut with the ledger gone too: the attempt folders still show what was done."""
    truncate(run)
    events = _lines(run)
    started = {e["attempt_id"] for e in events if e["type"] == "attempt.started"}
    # cut further, before the last attempt.started, so an attempt folder has no start in the log
    last_start = max(i for i, e in enumerate(events) if e["type"] == "attempt.started")
    _write(run, events[:last_start])
    assert len(started) > len({e["attempt_id"] for e in _lines(run) if e["type"] == "attempt.started"})
    (run / "evidence" / "ledger.sqlite").unlink()
    return "never started it"


def second_run_created(run: Path) -> str:
    """A copy of line 1 injected mid-log, seq renumbered so only the structure is wrong."""
    events = _lines(run)
    at = _first_completed(events)
    events.insert(at, dict(events[0]))
    for seq, e in enumerate(events, 1):
        e["seq"] = seq
    _write(run, events)
    (run / "evidence" / "ledger.sqlite").unlink()  # the ledger would otherwise disagree first
    return f"line {at + 1} is a second run.created"


def unknown_attempt(run: Path) -> str:
    """One event names an attempt the run never planned."""
    events = _lines(run)
    at = _first_completed(events)
    events[at]["attempt_id"] = "ghost__vanilla__r9"
    _write(run, events)
    return f"line {at + 1} (attempt.completed) names attempt 'ghost__vanilla__r9'"


def future_version(run: Path) -> str:
    """One event carries an event version this PluginBench does not read."""
    events = _lines(run)
    at = _first_completed(events)
    events[at]["v"] = 99
    _write(run, events)
    return f"line {at + 1} (attempt.completed) has event version v=99"


DAMAGE: dict[str, Callable[[Path], str]] = {
    "truncated": truncate,
    "truncated-no-ledger": truncate_without_ledger,
    "second-run-created": second_run_created,
    "unknown-attempt": unknown_attempt,
    "v99": future_version,
}


@pytest.mark.parametrize("command", ["report", "status", "run"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_log_is_refused_and_the_run_folder_is_unchanged(run_copy: Path, damage: str, command: str) -> None:
    """report, status and resume refuse the damaged log (exit 2, the line, the fix) and change no file of the run."""
    needle = DAMAGE[damage](run_copy)
    before = tree_hash(run_copy)
    code, out = run_cli(command, str(run_copy))
    assert_refused(code, out, "events.jsonl", needle, "fix:")
    assert "line" in out
    assert tree_hash(run_copy) == before


def test_changed_frozen_evidence_is_refused_by_report_and_recorded_by_the_resume(run_copy: Path) -> None:
    """A deleted frozen task file: report exits 2 naming the frozen task and changes nothing; the resume records run.failed naming it."""
    (run_copy / "evidence" / "frozen" / "tasks" / "word-wrap" / "instruction.md").unlink()
    before = tree_hash(run_copy)
    code, out = run_cli("report", str(run_copy))
    assert_refused(code, out, "frozen task 'word-wrap'", "changed since it was frozen", "fix:")
    assert tree_hash(run_copy) == before
    code, out = run_cli("run", str(run_copy), "--foreground")
    assert code != 0, out
    last = _lines(run_copy)[-1]
    assert last["type"] == "run.failed" and "frozen task 'word-wrap'" in str(last["error"]), last
    code, out = run_cli("status", str(run_copy), "--json")
    assert code == 0 and json.loads(out)["phase"] == "failed"


def test_hand_edited_settings_are_a_warning_in_status_and_a_refusal_in_report(run_copy: Path) -> None:
    """An evaluation.json edited by hand: status and status --json still answer (exit 0) with a warning naming the file and the fix, report refuses it, and nothing is written."""
    code, out = run_cli("status", str(run_copy), "--json")
    assert code == 0 and json.loads(out)["settings_warning"] is None
    settings = run_copy / "evaluation.json"
    settings.write_text(settings.read_text().replace('"name"', '"name" ', 1))
    before = tree_hash(run_copy)
    code, out = run_cli("status", str(run_copy), "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["phase"] == "complete" and doc["states"]["complete"] == doc["attempts_total"] > 0
    assert str(settings) in doc["settings_warning"] and "restore the original evaluation.json" in doc["settings_warning"]
    code, out = run_cli("status", str(run_copy))
    assert code == 0 and "warning: " in out, out
    assert "evaluation.json does not match its hash binding" in " ".join(out.split())  # however the terminal wraps it
    assert_refused(*run_cli("report", str(run_copy)), "evaluation.json does not match its hash binding", "fix:")
    assert tree_hash(run_copy) == before


def test_a_binding_that_is_not_a_json_object_is_refused_by_report_and_resume(run_copy: Path) -> None:
    """An evaluation-binding.json holding a JSON array: report and run --dry-run exit 2 naming the file and the fix, without a traceback, and change nothing."""
    (run_copy / "evaluation-binding.json").write_text("[]\n")
    before = tree_hash(run_copy)
    for argv in (["report", str(run_copy)], ["run", str(run_copy), "--dry-run"]):
        code, out = run_cli(*argv)
        assert_refused(code, out, "evaluation-binding.json is not a JSON object", "evaluation-binding.json", "fix:")
        assert "Traceback" not in out and "attribute" not in out
    assert tree_hash(run_copy) == before


@pytest.mark.parametrize("lost", ["evaluation.json", "evaluation-binding.json"])
def test_a_run_that_lost_its_settings_file_is_refused_naming_that_file(run_copy: Path, lost: str) -> None:
    """A run folder whose evaluation.json or binding was deleted: status, report, show and run --dry-run exit 2 naming the missing file and saying to restore it, not calling it no run directory."""
    (run_copy / lost).unlink()
    before = tree_hash(run_copy)
    for argv in (["status", str(run_copy)], ["report", str(run_copy)], ["show", str(run_copy)],
                 ["run", str(run_copy), "--dry-run"]):
        code, out = run_cli(*argv)
        assert_refused(code, out, f"is a run whose {lost} is missing", str(run_copy / lost), f"restore {lost}")
        assert "not a run directory" not in out
    assert tree_hash(run_copy) == before
