"""The deterministic graders beside the hidden verifier: each kind passes, fails and cannot run; config
syntax errors are refused naming the field (exit 2); a check never changes correctness."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pluginbench.measures._checks import Check
from pluginbench.measures._checks_spec import CHECKS, collect_checks
from pluginbench.measures._port import CollectorInput
from tests.cli._cli_helpers import assert_refused, edit, run_cli
from tests.runs_helpers import write_config

REAL = Path(__file__).resolve().parents[1] / "harnesses" / "data" / "claude-2.1.328"
PATCH = ("diff --git a/answer.txt b/answer.txt\nnew file mode 100644\nindex 0000000..1111111\n"
         "--- /dev/null\n+++ b/answer.txt\n@@ -0,0 +1 @@\n+guided\n")


def _input(tmp: Path, checks: list[dict[str, Any]], *, traces: bool = True, patch: str = PATCH) -> CollectorInput:
    """A recorded real Claude Code attempt (Bash `ls -la`, then Write answer.txt; final message "Done.")."""
    attempt = tmp / "attempt"
    agent = attempt / "agent"
    (agent / "transcripts").mkdir(parents=True)
    if traces:
        shutil.copy(REAL / "treatment.transcript.jsonl", agent / "transcripts" / "s.jsonl")
        shutil.copy(REAL / "treatment.stream.jsonl", agent / "stdout.jsonl")
    start = tmp / "start"
    start.mkdir()
    (start / "README.md").write_text("hello\n")
    settings = {"checks": msgspec.convert(checks, list[Check])}
    return CollectorInput(attempt_id="t__g__r1", task="t", arm="g", patch=patch, attempt_dir=attempt,
                          traces_dir=agent, harness="claude", task_dir=tmp, starting_source=start,
                          reference_patch=None, task_image=None, open_task_sandbox=None, settings=settings,
                          work_dir=attempt / "measure" / "checks", agent_traces=True)


CHECKS_ALL = [
    {"name": "answer-done", "kind": "regex", "target": "answer", "pattern": "^Done"},
    {"name": "answer-no", "kind": "regex", "target": "answer", "pattern": "never said"},
    {"name": "patch-guided", "kind": "regex", "target": "patch", "pattern": r"^\+guided$"},
    {"name": "transcript-ls", "kind": "regex", "target": "transcript", "pattern": "ls -la"},
    {"name": "used-bash", "kind": "tool_used", "tool": "Bash"},
    {"name": "used-skill", "kind": "tool_used", "skill": "tidy-code"},
    {"name": "bash-then-write", "kind": "tool_order", "tools": ["Bash", "Write"]},
    {"name": "write-then-bash", "kind": "tool_order", "tools": ["Write", "Bash"]},
    {"name": "answer-file", "kind": "file_exists", "path": "answer.txt", "content_regex": "guided"},
    {"name": "readme", "kind": "file_exists", "path": "README.md"},
    {"name": "missing-file", "kind": "file_exists", "path": "nope.txt", "weight": 2},
]


def _values(out: dict) -> dict[str, int | None]:
    return {k: m.value for k, m in out.items()}


def test_each_kind_passes_and_fails_on_a_real_attempt(tmp_path: Path) -> None:
    """regex (answer, patch, transcript), tool_used, tool_order and file_exists pass or fail as the recorded
    attempt warrants; checks_score is the weighted share."""
    got = _values(collect_checks(_input(tmp_path, CHECKS_ALL)))
    assert got == {"check:answer-done": 1, "check:answer-no": 0, "check:patch-guided": 1, "check:transcript-ls": 1,
                   "check:used-bash": 1, "check:used-skill": 0, "check:bash-then-write": 1,
                   "check:write-then-bash": 0, "check:answer-file": 1, "check:readme": 1,
                   "check:missing-file": 0, "checks_score": round(7 / 12, 6)}
    assert (tmp_path / "attempt" / "measure" / "checks" / "checks.json").is_file()


def test_a_check_that_cannot_run_is_unknown_with_the_reason(tmp_path: Path) -> None:
    """Without saved traces the answer, transcript and tool checks are unknown (never 0), the patch and file
    checks still run, and the score is unknown; a patch that does not apply makes file checks unknown."""
    out = collect_checks(_input(tmp_path, CHECKS_ALL, traces=False))
    assert out["check:answer-done"].value is None and out["check:answer-done"].reason
    assert out["check:used-bash"].status == "unknown" and "no saved agent trace" in str(out["check:used-bash"].reason)
    assert out["check:patch-guided"].value == 1 and out["check:readme"].value == 1
    assert out["checks_score"].value is None
    bad = collect_checks(_input(tmp_path / "b", CHECKS_ALL[-3:], patch=PATCH.replace("new file mode", "deleted file mode")))
    assert bad["check:answer-file"].value is None and "does not apply" in str(bad["check:answer-file"].reason)


@pytest.mark.parametrize(("check", "needle"), [
    ({"name": "x", "kind": "regex", "target": "answer", "pattern": "("}, "not a valid regular expression"),
    ({"name": "x", "kind": "regex", "target": "stdout", "pattern": "a"}, "target"),
    ({"name": "x", "kind": "tool_used", "tool": "Bash", "skill": "s"}, "exactly one of tool, skill, subagent"),
    ({"name": "x", "kind": "tool_order", "tools": ["Bash"]}, "at least two"),
    ({"name": "x", "kind": "file_exists", "path": "../etc/passwd"}, "relative to the workspace"),
    ({"name": "Bad Name", "kind": "file_exists", "path": "a"}, "lowercase"),
    ({"name": "x", "kind": "llm_rubric"}, "kind"),
])
def test_bad_check_syntax_is_refused_naming_the_field(tmp_path: Path, check: dict, needle: str) -> None:
    """`pluginbench check` refuses a malformed check with exit 2, naming measurement_settings.checks[0]."""
    config = edit(write_config(tmp_path), measurements=["tokens", "time", "lines", "checks"],
                  measurement_settings={"checks": [check]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "measurement_settings.checks[0]", needle)


def test_checks_register_beside_correctness() -> None:
    """`checks` is an opt-in registered measure whose values are columns of their own, never the outcome."""
    assert not CHECKS.default and CHECKS.families[0].metric == "check:"
    assert [c.metric for c in CHECKS.columns] == ["checks_score"]
