"""The deterministic graders beside the hidden verifier: each kind passes, fails and cannot run; config
syntax errors are refused naming the field (exit 2); a check never changes correctness."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import yaml

from pluginbench.errors import TaskError
from pluginbench.measures._checks import Check, LlmCheck
from pluginbench.measures._checks_llm import majority, parse_vote
from pluginbench.measures._checks_spec import CHECKS, task_checks
from pluginbench.measures._checks_spec import collect_checks as _collect_async
from pluginbench.measures._port import CollectorInput
from tests.cli._cli_helpers import assert_refused, edit, run_cli
from tests.runs_helpers import write_config


def collect_checks(inp: CollectorInput) -> dict:
    return anyio.run(_collect_async, inp)


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
    ({"name": "x", "kind": "regex", "target": "answer", "pattern": "a", "weight": float("inf")},
     "field: measurement_settings.checks[0].weight"),
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
    assert [c.metric for c in CHECKS.columns] == ["checks_score", "checks_grader_tokens"]


@pytest.mark.parametrize(("check", "needle"), [
    ({"name": "x", "kind": "llm", "rubric": "r", "votes": 2}, "odd number"),
    ({"name": "x", "kind": "llm", "rubric": "  "}, "rubric must say"),
    ({"name": "x", "kind": "llm", "rubric": "r"}, "has no reviewer"),
])
def test_bad_llm_check_is_refused_naming_the_field(tmp_path: Path, check: dict, needle: str) -> None:
    """An llm check with an even vote count, an empty rubric or no reviewer CLI is refused with exit 2."""
    config = edit(write_config(tmp_path), measurements=["tokens", "time", "lines", "checks"],
                  measurement_settings={"checks": [check]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "measurement_settings.checks[0]", needle)
    simulated = edit(config, reviewer={"harness": "simulated"})
    if needle == "has no reviewer":
        code, out = run_cli("check", str(simulated), "--no-readiness")
        assert_refused(code, out, "measurement_settings.checks[0].kind", "needs a real reviewer CLI")


@pytest.mark.parametrize(("text", "want"), [
    ('{"verdict": "pass", "reason": "ok"}', (True, "ok")),
    ('Here:\n```json\n{"verdict": "fail", "reason": "no"}\n```', (False, "no")),
    ('I think {"verdict": "pass", "reason": "r"} fits', (True, "r")),
    ("Looks fine.", "no JSON object"),
    ('{"verdict": "maybe", "reason": "?"}', "not a valid vote"),
    ('{"verdict": "pass", "reason": "r", "score": 3}', "not a valid vote"),
    ("", "no final message"),
])
def test_a_vote_is_read_or_malformed(text: str, want: object) -> None:
    """A vote is a pass/fail JSON object (bare, fenced or inside prose); anything else is malformed."""
    if isinstance(want, tuple):
        assert parse_vote(text) == want
    else:
        with pytest.raises(ValueError, match=str(want)):
            parse_vote(text)


def _v(*verdicts: str | None) -> list[dict]:
    return [{"vote": i + 1, "verdict": v, "reason": "r" if v else "malformed"} for i, v in enumerate(verdicts)]


@pytest.mark.parametrize(("votes", "n", "want"), [
    (_v("pass", "pass", "fail"), 3, True),
    (_v("pass", None, "pass"), 3, True),
    (_v("fail", "fail", None), 3, False),
    (_v("pass", "fail", None), 3, None),
    (_v("pass", None, None), 3, None),
    (_v("pass"), 1, True),
    (_v("pass", "pass", None, None, "fail"), 5, None),
])
def test_the_majority_of_all_votes_decides(votes: list, n: int, want: bool | None) -> None:
    """More than half of all votes (unknown ones included in the count) decide; otherwise unknown naming each
    unknown vote."""
    passed, reason = majority(votes, n)
    assert passed is want
    if want is None:
        assert reason is not None and reason.startswith(f"no majority of {n} votes")
        assert all(f"vote {v['vote']}: malformed" in reason for v in votes if v["verdict"] is None)


def test_an_llm_check_without_a_bound_reviewer_is_unknown(tmp_path: Path) -> None:
    """Where no reviewer CLI is bound (readiness), an llm check is unknown with the reason and costs no call."""
    inp = _input(tmp_path, CHECKS_ALL[:1])
    inp = inp._replace(settings={"checks": [*inp.settings["checks"], LlmCheck(name="rubric", rubric="r")]})
    out = collect_checks(inp)
    assert out["check:answer-done"].value == 1
    assert out["check:rubric"].status == "unknown" and "no reviewer CLI is bound" in str(out["check:rubric"].reason)


def test_checks_declared_in_the_task_folder_apply_to_its_attempts(tmp_path: Path) -> None:
    """A task's checks.toml adds its checks beside the evaluation's, each its own check:<name>."""
    inp = _input(tmp_path, CHECKS_ALL[:1])
    (tmp_path / "checks.toml").write_text(
        '[[checks]]\nname = "task-readme"\nkind = "file_exists"\npath = "README.md"\n\n'
        '[[checks]]\nname = "task-bash"\nkind = "tool_used"\ntool = "Bash"\nweight = 2\n')
    got = _values(collect_checks(inp))
    assert got == {"check:answer-done": 1, "check:task-readme": 1, "check:task-bash": 1, "checks_score": 1.0}


@pytest.mark.parametrize(("text", "field", "needle"), [
    ('[[checks]]\nname = "x"\nkind = "regex"\ntarget = "answer"\npattern = "("\n', "checks[0].pattern", "regular expression"),
    ('[[checks]]\nname = "x"\nkind = "tool_used"\ntool = "A"\nweight = inf\n', "checks[0].weight", "finite number"),
    ('[[checks]]\nname = "x"\nkind = "tool_used"\ntool = "A"\nweight = nan\n', "checks[0].weight", "finite number"),
    ('[[checks]]\nname = "x"\nkind = "file_exists"\npath = "a\\u0000b"\n', "checks[0].path", "control character"),
    ('[[checks]]\nname = "X"\nkind = "tool_used"\ntool = "A"\n', "checks[0].name", "lowercase"),
    ('[[checks]]\nname = "x"\nkind = "nope"\n', "checks[0].kind", "kind"),
    ('[[checks]]\nname = "x"\nkind = "tool_used"\ntool = "A"\n[[checks]]\nname = "x"\nkind = "tool_used"\n'
     'tool = "B"\n', "checks[1].name", "declared twice"),
    ('checks = 3\n', "checks", "no [[checks]]"),
    ('[[checks]\n', "checks", "does not parse"),
    ('other = 1\n', "other", "unknown key"),
])
def test_a_malformed_task_checks_file_names_its_field(tmp_path: Path, text: str, field: str, needle: str) -> None:
    """A malformed checks.toml raises a TaskError naming the file and the field."""
    (tmp_path / "checks.toml").write_text(text)
    with pytest.raises(TaskError) as caught:
        task_checks(tmp_path)
    assert caught.value.field == field and needle in str(caught.value)
    assert caught.value.file == str(tmp_path / "checks.toml")


def test_a_checks_toml_folder_is_refused_not_ignored(tmp_path: Path) -> None:
    """checks.toml made a folder by mistake is refused naming it (the task's checks were silently missing)."""
    (tmp_path / "checks.toml").mkdir()
    with pytest.raises(TaskError) as caught:
        task_checks(tmp_path)
    assert caught.value.field == "checks" and "is a folder" in str(caught.value)


def test_check_refuses_a_bad_task_checks_file(tmp_path: Path) -> None:
    """`pluginbench check` refuses a task whose checks.toml is malformed or repeats an evaluation check's name,
    exit 2 naming checks.toml and the field."""
    from tests.runs_helpers import QUICKSTART
    tasks = tmp_path / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / "word-wrap", tasks / "word-wrap")
    config = write_config(tmp_path, tasks=["word-wrap"])
    data = yaml.safe_load(config.read_text())
    data["tasks"]["source"] = str(tasks)
    data["measurements"] = ["tokens", "time", "lines", "checks"]
    data["measurement_settings"] = {"checks": [{"name": "dup", "kind": "regex", "target": "patch", "pattern": "a"}]}
    config.write_text(yaml.safe_dump(data))
    (tasks / "word-wrap" / "checks.toml").write_text('[[checks]]\nname = "dup"\nkind = "file_exists"\npath = "a"\n')
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "checks.toml", "checks[0].name", "also declared")
    (tasks / "word-wrap" / "checks.toml").write_text('[[checks]]\nname = "x"\nkind = "file_exists"\npath = "/etc"\n')
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "checks.toml", "checks[0]", "relative to the workspace")


def test_a_pattern_that_backtracks_on_the_agents_text_is_unknown_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    """A regex check whose pattern backtracks catastrophically on text the agent wrote is stopped
    after the time limit and is unknown with the reason; the collector never hangs on it."""
    from pluginbench.measures import _checks

    monkeypatch.setattr(_checks, "SEARCH_SECONDS", 0.2)
    check = msgspec.convert({"kind": "regex", "name": "slow", "target": "answer", "pattern": r"(x+x+)+y"}, Check)
    evidence = _checks.Evidence(answer="x" * 5000, transcript=None, patch="", calls=None, files=None)
    passed, why = _checks.decide(check, evidence)
    assert passed is None
    assert why is not None and "more than 0.2 s" in why and "simplify the pattern" in why
    fast = msgspec.convert({"kind": "regex", "name": "fast", "target": "answer", "pattern": r"^x+$"}, Check)
    assert _checks.decide(fast, evidence) == (True, None)


@pytest.mark.parametrize(("usages", "value", "needle"), [
    ([{"status": "exact", "total_tokens": 820}, {"status": "exact", "total_tokens": 805}], 1625, None),
    ([{"status": "exact", "total_tokens": 820}, {"status": "unknown", "reason": "provider stop"}], None, "provider stop"),
    ([{"status": "lower_bound", "total_tokens": 700}], None, "at least 700 tokens"),
    ([{"status": "exact", "total_tokens": None}], None, "vote 1 of llm check 'c'"),
    ([{}], None, "not recorded"),
])
def test_grader_tokens_sum_only_exact_totals(usages: list, value: int | None, needle: str | None) -> None:
    """The llm checks' grader tokens are the sum of the votes' totals only when every one is exact; otherwise
    unknown naming the vote and why, never a partial sum or a floor passed off as the total."""
    from pluginbench.measures._checks_spec import grader_tokens

    got = grader_tokens([{"vote": i + 1, "check": "c", "usage": u} for i, u in enumerate(usages)])
    assert got.value == value and got.unit == "tokens"
    if needle is None:
        assert got.status == "measured"
    else:
        assert got.status == "unknown" and needle in (got.reason or "")


def test_the_report_counts_grader_tokens_per_arm_apart_from_coding() -> None:
    """results.json checks.grader sums each arm's grader tokens over the attempts that had an llm check, is
    unknown with the reason when one total is unknown, and is absent when no attempt had an llm check."""
    from pluginbench.projections._report_checks import checks_html, checks_section

    def row(arm: str, grader: dict | None) -> dict:
        measures = {"check:c": {"value": 1, "status": "measured"}}
        if grader is not None:
            measures["checks_grader_tokens"] = grader
        return {"state": "complete", "arm": arm, "measures": measures}

    rows = [row("vanilla", {"value": 100, "status": "measured"}), row("vanilla", {"value": 50, "status": "measured"}),
            row("pkg", {"value": None, "status": "unknown", "reason": "vote 2 of an llm check has no exact token total"}),
            row("pkg", {"value": 70, "status": "measured"})]
    sec = checks_section(rows, ["vanilla", "pkg"], ["checks"])
    assert sec is not None and sec["grader"] == {
        "vanilla": {"attempts": 2, "total_tokens": 150, "unknown_reasons": []},
        "pkg": {"attempts": 2, "total_tokens": None,
                "unknown_reasons": ["vote 2 of an llm check has no exact token total"]}}
    html = checks_html({"checks": sec, "arms": ["vanilla", "pkg"]})
    assert "llm grader tokens" in html and "150 (2 attempts)" in html and ">unknown<" in html
    plain = checks_section([row("vanilla", None)], ["vanilla"], ["checks"])
    assert plain is not None and "grader" not in plain
