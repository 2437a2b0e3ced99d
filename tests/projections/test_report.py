"""The report projection: results.json, results.csv and report.html from a run directory."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pluginbench import stats
from pluginbench.errors import RunDirError
from pluginbench.events import EventLog
from pluginbench.events._types import (
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptDiscarded,
    AttemptGraded,
    AttemptInterrupted,
    AttemptStarted,
    Measure,
    MeasuresCollected,
    ModelRecord,
    RunCreated,
    SlotPlan,
    TaskPrepared,
    Usage,
)
from pluginbench.projections._report import build_report
from pluginbench.projections._results_schema import validate as validate_results

CLOCK = "2026-01-01T00:00:00.000Z"
SIMULATED_TEXT = (
    "SIMULATED AGENT: these numbers come from PluginBench's deterministic stand-in agent, "
    "not a real coding agent"
)


def exact(inp: int, out: int, total: int | None = None) -> Usage:
    return Usage(
        status="exact",
        input_tokens=inp,
        output_tokens=out,
        total_tokens=inp + out if total is None else total,
    )


UNKNOWN_USAGE = Usage(status="unknown", reason="session transcript missing")


class RunBuilder:
    """Writes evaluation.json and events.jsonl for a synthetic run, without any engine."""

    def __init__(
        self,
        root: Path,
        tasks: Sequence[str],
        *,
        treatments: Sequence[str] = ("guided",),
        repeats: int = 1,
        harness: str = "simulated",
        backend: str = "local",
        isolation: str = "none",
        probe: bool = False,
        name: str = "demo",
        model: str = "model-x",
    ) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        config = {
            "name": name,
            "runner": {
                "harness": harness,
                "model": model,
                "reasoning": "high",
                "cli_version": "1.2.3",
                "probe": "scenario.yaml" if probe else None,
            },
            "environment": {"backend": backend, "isolation": isolation},
            "repeats": repeats,
            "jobs": 2,
            "seed": 5,
            "treatments": {t: {"guidance": [f"{t}.md"]} for t in treatments},
            "tasks": {"source": "tasks", "ids": list(tasks)},
        }
        (root / "evaluation.json").write_text(json.dumps(config), encoding="utf-8")
        settings_sha256 = hashlib.sha256((root / "evaluation.json").read_bytes()).hexdigest()
        arms = ["vanilla", *treatments]
        self.slots = [
            SlotPlan(slot=i, task=t, arm=a, repeat=r, attempt_id=f"{t}.{a}.{r}")
            for i, (t, a, r) in enumerate(
                (t, a, r) for t in tasks for a in arms for r in range(repeats)
            )
        ]
        self.log = EventLog(root / "events.jsonl", clock=lambda: CLOCK)
        self.log.append(
            RunCreated(
                name=name,
                evaluation_sha256=settings_sha256,
                harness=harness,
                model=model,
                reasoning="high",
                backend=backend,
                isolation=isolation,
                tasks=list(tasks),
                arms=arms,
                repeats=repeats,
                jobs=2,
                seed=5,
                timeout_seconds=600,
                slots=self.slots,
                simulated=harness == "simulated",
                probe=probe,
                pluginbench_version="0.1.0",
            )
        )

    def slot(self, task: str, arm: str, repeat: int = 0) -> SlotPlan:
        return next(s for s in self.slots if (s.task, s.arm, s.repeat) == (task, arm, repeat))

    def start(self, s: SlotPlan, attempt_id: str | None = None) -> str:
        aid = attempt_id or s.attempt_id
        self.log.append(
            AttemptStarted(attempt_id=aid, slot=s.slot, task=s.task, arm=s.arm, repeat=s.repeat)
        )
        self.log.append(AgentLaunched(attempt_id=aid, argv=["agent"]))
        return aid

    def complete(
        self,
        task: str,
        arm: str,
        outcome: str,
        usage: Usage,
        *,
        repeat: int = 0,
        lines: int | None = 3,
        reason: str | None = None,
        attempt_id: str | None = None,
        model_record: ModelRecord | None = None,
    ) -> str:
        aid = self.start(self.slot(task, arm, repeat), attempt_id)
        self.log.append(
            AgentExited(
                attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=12.5, usage=usage,
                model_record=model_record,
            )
        )
        reward = None if outcome in ("unknown", "empty") else float(outcome == "pass")
        self.log.append(
            AttemptGraded(attempt_id=aid, outcome=outcome, reward=reward, reason=reason)
        )
        measures = {
            "source_lines_added": Measure(
                value=lines,
                unit="lines",
                status="measured" if lines is not None else "unknown",
                reason=None if lines is not None else "scan failed",
            ),
            "source_lines_removed": Measure(value=1, unit="lines"),
            "test_lines_added": Measure(value=2, unit="lines"),
            "test_lines_removed": Measure(value=0, unit="lines"),
        }
        self.log.append(MeasuresCollected(attempt_id=aid, measures=measures))
        self.log.append(AttemptCompleted(attempt_id=aid))
        return aid

    def close(self) -> Path:
        self.log.close()
        return self.root


def load(root: Path) -> dict[str, Any]:
    """Build the report and read results.json, checked against its typed schema (unknown fields forbidden)."""
    files = build_report(root)
    doc = json.loads(files.results_json.read_text(encoding="utf-8"))
    validate_results(doc)
    return doc


def report_bytes(root: Path) -> tuple[bytes, bytes, bytes]:
    files = build_report(root)
    return tuple(p.read_bytes() for p in files)  # type: ignore[return-value]


def sample_run(root: Path) -> Path:
    """Seven tasks, vanilla vs guided, three repeats, with one unknown grade and unknown tokens."""
    tasks = [f"task-{c}" for c in "abcdefg"]
    b = RunBuilder(root, tasks, repeats=3)
    plan = {  # passes out of 3 for vanilla, guided
        "task-a": (1, 2),
        "task-b": (0, 3),
        "task-c": (0, 3),
        "task-d": (2, 2),
        "task-e": (1, 2),
        "task-f": (2, 2),
        "task-g": (3, 1),
    }
    for t, (pv, pg) in plan.items():
        for arm, passes in (("vanilla", pv), ("guided", pg)):
            for r in range(3):
                outcome = "pass" if r < passes else "fail"
                usage = exact(1000 + 100 * r, 200 if arm == "vanilla" else 260)
                if t == "task-f" and r == 0:
                    usage = UNKNOWN_USAGE
                if t == "task-e" and arm == "guided" and r == 2:
                    outcome = "unknown"
                b.complete(
                    t,
                    arm,
                    outcome,
                    usage,
                    repeat=r,
                    reason="verifier <crashed>" if outcome == "unknown" else None,
                )
    return b.close()


# ---------------------------------------------------------------- determinism and layout


def test_rebuilding_twice_is_byte_identical(tmp_path: Path) -> None:
    """Two builds of the same run give byte-identical results.json, results.csv and report.html."""
    root = sample_run(tmp_path / "run")
    first = report_bytes(root)
    second = report_bytes(root)
    assert first == second
    assert all(len(b) > 100 for b in first)


def test_report_does_not_depend_on_where_the_run_lives(tmp_path: Path) -> None:
    """A run copied to another folder reports the same bytes and no absolute path appears."""
    root = sample_run(tmp_path / "a" / "run")
    first = report_bytes(root)
    moved = tmp_path / "elsewhere" / "deeper" / "run"
    shutil.copytree(root, moved, ignore=shutil.ignore_patterns("report"))
    assert report_bytes(moved) == first
    for blob in first:
        assert str(tmp_path).encode() not in blob


def test_report_files_are_replaced_atomically(tmp_path: Path) -> None:
    """Only the three report files are left in report/, with no temp files beside them."""
    root = sample_run(tmp_path / "run")
    (root / "report").mkdir()
    (root / "report" / "results.json").write_text("stale")
    files = build_report(root)
    assert sorted(p.name for p in (root / "report").iterdir()) == [
        "report.html",
        "results.csv",
        "results.json",
    ]
    assert files.results_json.read_text().startswith("{")


def test_missing_config_is_a_run_dir_error(tmp_path: Path) -> None:
    """A folder without evaluation.json is refused with a RunDirError naming the file."""
    with pytest.raises(RunDirError) as info:
        build_report(tmp_path)
    assert "evaluation.json" in str(info.value)


def test_a_state_without_events_reports_nothing_to_report() -> None:
    """The pure report of a state with no events says there is nothing to report."""
    from pluginbench.projections._report import results_document
    from pluginbench.projections._report_html import render_html
    from pluginbench.projections._state import fold

    doc = results_document({"name": "empty", "treatments": {"g": {}}}, fold([]), fallback_name="empty")
    assert (doc["attempts"], doc["tasks"], doc["arms"]) == ([], [], ["vanilla", "g"])
    assert doc["deltas"]["g"]["summary"]["pass_rate"]["status"] == "no_tasks"
    assert doc["deltas"]["g"]["summary"]["pass_rate"]["sign_test"]["p"] is None
    assert any("nothing to report" in n for n in doc["notes"])
    assert "nothing to report" in render_html(doc)


def test_run_without_events_is_refused(tmp_path: Path) -> None:
    """build_report refuses a run whose log is missing or empty and writes no report."""
    from pluginbench.errors import CorruptLogError

    root = tmp_path / "run"
    root.mkdir()
    (root / "evaluation.json").write_text(json.dumps({"name": "empty", "treatments": {"g": {}}}))
    with pytest.raises(CorruptLogError, match="missing"):
        build_report(root)
    (root / "events.jsonl").write_text("")
    with pytest.raises(CorruptLogError, match="empty"):
        build_report(root)
    assert not (root / "report").exists()


def test_results_json_shape(tmp_path: Path) -> None:
    """results.json has schema version 2, the run identity, sorted tasks and vanilla-first arms."""
    doc = load(sample_run(tmp_path / "run"))
    assert doc["schema_version"] == 2
    assert set(doc) == {
        "schema_version",
        "run",
        "comparison_identity",
        "token_provenance",
        "arms",
        "tasks",
        "attempts",
        "per_task",
        "deltas",
        "missing_values",
        "discarded_attempts",
        "actual_calls",
        "reused_attempts",
        "costs",
        "notes",
        "references",
        "reference_ratios",
        "source_only_index",
        "code_measures",
        "measurement_history",
        "measurement_revisions",
        "not_measured",
        "verdicts",
        "power",
        "treatments",
    }
    run = doc["run"]
    assert (run["name"], run["harness"], run["model"], run["reasoning"], run["cli_version"]) == (
        "demo",
        "simulated",
        "model-x",
        "high",
        "1.2.3",
    )
    assert (run["simulated"], run["probe"], run["isolated"], run["pluginbench_version"]) == (
        True,
        False,
        False,
        "0.1.0",
    )
    assert doc["tasks"] == sorted(doc["tasks"])
    assert doc["arms"] == ["vanilla", "guided"]
    assert len(doc["attempts"]) == 42
    assert doc["attempts"][0]["evidence"] == f"evidence/attempts/{doc['attempts'][0]['attempt_id']}"


def test_comparison_identity_and_token_provenance(tmp_path: Path) -> None:
    """results.json saves what compare checks (runner, CLI version, capabilities, task fingerprints and
    timeouts, measurements) and where token counts stand (counts by status, bound and unknown attempts)."""
    from pluginbench.tasks import fingerprint, scan_tree

    b = RunBuilder(tmp_path / "run", ["task-a", "task-b"])
    prints = {}
    for t in ("task-a", "task-b"):
        frozen = tmp_path / "run" / "evidence" / "frozen" / "tasks" / t  # report checks frozen trees
        frozen.mkdir(parents=True)
        (frozen / "instruction.md").write_text(f"do {t}\n")
        prints[t] = fingerprint(scan_tree(frozen))
        b.log.append(TaskPrepared(task=t, fingerprint=prints[t], files=3, workdir="/app"))
    b.complete("task-a", "vanilla", "pass", exact(10, 5))
    b.complete("task-a", "guided", "pass", UNKNOWN_USAGE)
    doc = load(b.close())
    ident = doc["comparison_identity"]
    assert ident["runner"] == {"harness": "simulated", "model": "model-x", "reasoning": "high"}
    assert ident["harness_version"] == "1.2.3"  # the pinned runner.cli_version
    assert ident["tasks"] == prints
    assert ident["task_limits"]["task-b"] == {"effective": {"agent_timeout_seconds": 600}}
    assert ident["measurement_settings"] == {"measurements": ["tokens", "time", "lines"]}
    prov = doc["token_provenance"]
    assert prov["statuses"]["exact"] == 1 and prov["statuses"]["unknown"] >= 1
    assert "task-a.guided.0" in prov["unknown_attempts"]


def test_results_schema_refuses_an_undescribed_field(tmp_path: Path) -> None:
    """A results.json field the typed schema does not describe fails validation, naming the field."""
    doc = load(sample_run(tmp_path / "run"))
    doc["attempts"][0]["surprise"] = 1
    with pytest.raises(msgspec.ValidationError, match="surprise"):
        validate_results(doc)


def test_arms_follow_config_order_after_vanilla(tmp_path: Path) -> None:
    """Treatments keep their config order (not alphabetical), after vanilla, in JSON and on the page."""
    b = RunBuilder(tmp_path / "run", ["t1"], treatments=("zeta", "alpha"))
    root = b.close()
    doc = load(root)
    assert doc["arms"] == ["vanilla", "zeta", "alpha"]
    assert set(doc["deltas"]) == {"zeta", "alpha"}
    html = (root / "report" / "report.html").read_text()
    html = html[html.index('id="per-task-table"'):]  # the per-task table's arm headers
    assert (
        html.index('<th class="arm" colspan="3">vanilla')
        < html.index(">zeta<")
        < html.index(">alpha<")
    )


# ---------------------------------------------------------------- per task and attempts


def test_per_task_counts_rates_and_wilson(tmp_path: Path) -> None:
    """Per-task pass counts, rate and Wilson 95% interval follow the graded outcomes."""
    doc = load(sample_run(tmp_path / "run"))
    a = doc["per_task"]["task-a"]
    assert (a["vanilla"]["passes"], a["vanilla"]["fails"], a["vanilla"]["complete"]) == (1, 2, 3)
    assert a["guided"]["pass_rate"] == round(2 / 3, 6)
    w = stats.wilson_interval(2, 3)
    assert a["guided"]["wilson_95"] == [round(w.low, 6), round(w.high, 6)]
    e = doc["per_task"]["task-e"]["guided"]
    assert (e["passes"], e["unknowns"], e["pass_rate"]) == (2, 1, 1.0)
    assert a["vanilla"]["median_total_tokens"] == 1300
    assert a["vanilla"]["median_source_lines_added"] == 3


def test_empty_patch_counts_as_failure(tmp_path: Path) -> None:
    """An empty submission is counted under empties and lowers the pass rate."""
    b = RunBuilder(tmp_path / "run", ["t1"], treatments=(), repeats=2)
    b.complete("t1", "vanilla", "pass", exact(10, 5), repeat=0)
    b.complete("t1", "vanilla", "empty", exact(10, 5), repeat=1)
    s = load(b.close())["per_task"]["t1"]["vanilla"]
    assert (s["passes"], s["empties"], s["pass_rate"]) == (1, 1, 0.5)


def test_unknown_tokens_are_null_never_zero(tmp_path: Path) -> None:
    """Unknown usage is null in attempts, nulls the median, and is listed under missing values."""
    doc = load(sample_run(tmp_path / "run"))
    row = next(r for r in doc["attempts"] if r["attempt_id"] == "task-f.vanilla.0")
    assert row["tokens"]["status"] == "unknown"
    assert all(row["tokens"][k] is None for k in ("input", "output", "total", "cached_input"))
    assert doc["per_task"]["task-f"]["vanilla"]["median_total_tokens"] is None
    fields = {(m["attempt_id"], m["field"]) for m in doc["missing_values"]}
    assert ("task-f.vanilla.0", "tokens") in fields
    assert (None, "per_task.median_total_tokens") in fields
    reasons = [m["reason"] for m in doc["missing_values"] if m["attempt_id"] == "task-f.vanilla.0"]
    assert "session transcript missing" in reasons


def test_unknown_outcome_is_listed_with_its_reason(tmp_path: Path) -> None:
    """A complete attempt with unknown correctness is reported as unknown with the verifier's reason."""
    doc = load(sample_run(tmp_path / "run"))
    row = next(r for r in doc["attempts"] if r["attempt_id"] == "task-e.guided.2")
    assert (row["outcome"], row["reward"], row["outcome_reason"]) == (
        "unknown",
        None,
        "verifier <crashed>",
    )
    assert any(
        m["attempt_id"] == "task-e.guided.2" and m["field"] == "outcome"
        for m in doc["missing_values"]
    )


def test_incomplete_attempts_have_no_outcome(tmp_path: Path) -> None:
    """Pending and interrupted attempts report a null outcome and say why."""
    b = RunBuilder(tmp_path / "run", ["t1"], repeats=2)
    b.complete("t1", "vanilla", "pass", exact(10, 5))
    aid = b.start(b.slot("t1", "guided", 0))
    b.log.append(AttemptInterrupted(attempt_id=aid, reason="rate limit", provider_stop=True))
    doc = load(b.close())
    rows = {r["attempt_id"]: r for r in doc["attempts"]}
    assert rows[aid]["outcome"] is None and "rate limit" in rows[aid]["outcome_reason"]
    assert rows["t1.guided.1"]["state"] == "pending" and rows["t1.guided.1"]["outcome"] is None
    assert doc["per_task"]["t1"]["guided"]["pass_rate"] is None
    assert any("Incomplete run" in n for n in doc["notes"])


def test_discarded_attempts_are_listed_apart(tmp_path: Path) -> None:
    """A discarded attempt appears only under discarded_attempts; its replacement is the live one."""
    b = RunBuilder(tmp_path / "run", ["t1"])
    s = b.slot("t1", "vanilla")
    b.start(s)
    b.log.append(
        AttemptDiscarded(
            attempt_id=s.attempt_id,
            slot=s.slot,
            replaced_by="t1.vanilla.0.r1",
            reason="agent launched but never finished",
            usage=UNKNOWN_USAGE,
        )
    )
    b.complete("t1", "vanilla", "pass", exact(10, 5), attempt_id="t1.vanilla.0.r1")
    doc = load(b.close())
    assert [d["attempt_id"] for d in doc["discarded_attempts"]] == [s.attempt_id]
    d = doc["discarded_attempts"][0]
    assert (d["replaced_by"], d["tokens"]["status"], d["tokens"]["total"]) == (
        "t1.vanilla.0.r1",
        "unknown",
        None,
    )
    ids = [r["attempt_id"] for r in doc["attempts"]]
    assert "t1.vanilla.0.r1" in ids and s.attempt_id not in ids
    # Both the discarded session and its replacement were launched: two actual calls of two planned slots.
    assert doc["actual_calls"] == {"coding_sessions": 2, "by_arm": {"vanilla": 2, "guided": 0}, "discarded": 1,
                                   "planned": 2}


# ---------------------------------------------------------------- deltas and exclusions


def six_task_run(root: Path, guided_passes: dict[str, int]) -> Path:
    """Six tasks × 2 repeats; vanilla passes once per task, guided as given; guided uses 1.5× tokens."""
    tasks = sorted(guided_passes)
    b = RunBuilder(root, tasks, repeats=2)
    for t in tasks:
        for r in range(2):
            b.complete(t, "vanilla", "pass" if r < 1 else "fail", exact(800, 200), repeat=r)
            b.complete(
                t, "guided", "pass" if r < guided_passes[t] else "fail", exact(1200, 300), repeat=r
            )
    return b.close()


def test_paired_deltas_with_six_tasks(tmp_path: Path) -> None:
    """Six usable tasks give per-task differences, the bounded-mean interval with the sign-flip p at 0, and an exact sign test."""
    passes = {"t1": 2, "t2": 2, "t3": 1, "t4": 0, "t5": 2, "t6": 2}
    doc = load(six_task_run(tmp_path / "run", passes))
    d = doc["deltas"]["guided"]
    diffs = [(passes[t] - 1) / 2 for t in sorted(passes)]
    assert [d["per_task"][t]["pass_rate_difference"] for t in sorted(passes)] == diffs
    assert all(d["per_task"][t]["token_ratio"] == 1.5 for t in passes)
    s = d["summary"]["pass_rate"]
    expected = stats.difference_interval(diffs)
    assert (s["status"], s["tasks"], s["method"], s["exact"]) == ("ok", 6, expected.method, True)
    assert expected.method.startswith("betting test for a bounded mean")
    assert (s["estimate"], s["low"], s["high"]) == tuple(round(x, 6) for x in (expected.estimate, expected.low, expected.high))
    assert (s["p_greater"], s["p_less"]) == (round(stats.sign_flip_test(diffs, alternative="greater").p, 6),
                                             round(stats.sign_flip_test(diffs, alternative="less").p, 6))
    assert s["sign_test"] == {
        "positives": 4,
        "negatives": 1,
        "ties": 1,
        "p": round(stats.exact_sign_test(4, 1), 6),
    }
    tok = d["summary"]["tokens"]
    assert (tok["status"], tok["estimate"], tok["low"], tok["high"]) == ("ok", 1.5, 1.5, 1.5)
    assert d["excluded"] == {"pass_rate": [], "tokens": []}


def test_fewer_than_five_usable_tasks_is_too_few(tmp_path: Path) -> None:
    """With four tasks no sign pattern can reach a 90% bound: an estimate, no interval, and the page says so."""
    root = six_task_run(tmp_path / "run", {"t1": 2, "t2": 2, "t3": 1, "t4": 0})
    doc = load(root)
    s = doc["deltas"]["guided"]["summary"]["pass_rate"]
    assert (s["status"], s["low"], s["high"], s["tasks"]) == ("too_few_tasks", None, None, 4)
    assert s["estimate"] == round((0.5 + 0.5 + 0 - 0.5) / 4, 6)
    assert "too few tasks (n &lt; 5)" in (root / "report" / "report.html").read_text()


def test_exclusions_are_separate_for_correctness_and_tokens(tmp_path: Path) -> None:
    """Unknown correctness excludes only pass rates; unknown, negative or zero tokens only token ratios."""
    tasks = ["ok", "unknown-grade", "unknown-tokens", "negative-tokens", "zero-tokens", "pending"]
    b = RunBuilder(tmp_path / "run", tasks)
    for t in tasks:
        if t == "pending":
            b.complete(t, "vanilla", "pass", exact(10, 5))
            continue
        usage = {
            "unknown-tokens": UNKNOWN_USAGE,
            "negative-tokens": exact(-10, 5),
            "zero-tokens": exact(0, 0),
        }.get(t, exact(10, 5))
        b.complete(t, "vanilla", "pass", exact(10, 5))
        b.complete(t, "guided", "unknown" if t == "unknown-grade" else "fail", usage)
    d = load(b.close())["deltas"]["guided"]
    pr = {x["task"]: x["reason"] for x in d["excluded"]["pass_rate"]}
    tk = {x["task"]: x["reason"] for x in d["excluded"]["tokens"]}
    assert set(pr) == {"unknown-grade", "pending"}
    assert set(tk) == {"unknown-tokens", "negative-tokens", "zero-tokens", "pending"}
    assert "unknown correctness" in pr["unknown-grade"]
    assert "missing attempts" in pr["pending"] and "missing attempts" in tk["pending"]
    assert "negative" in tk["negative-tokens"] and "not positive" in tk["zero-tokens"]
    assert d["per_task"]["unknown-tokens"]["pass_rate_difference"] == -1.0
    assert d["per_task"]["unknown-grade"]["token_ratio"] == 1.0
    assert d["summary"]["pass_rate"]["tasks"] == 4 and d["summary"]["tokens"]["tasks"] == 2


def test_all_ties_give_sign_test_one(tmp_path: Path) -> None:
    """When every task ties, the sign test p is 1."""
    doc = load(six_task_run(tmp_path / "run", {f"t{i}": 1 for i in range(6)}))
    st_ = doc["deltas"]["guided"]["summary"]["pass_rate"]["sign_test"]
    assert st_ == {"positives": 0, "negatives": 0, "ties": 6, "p": 1.0}


# ---------------------------------------------------------------- notes and HTML


def test_simulated_banner_and_note(tmp_path: Path) -> None:
    """A simulated run says so prominently in results.json and as a banner in report.html."""
    root = sample_run(tmp_path / "run")
    doc = load(root)
    assert doc["notes"][0] == SIMULATED_TEXT
    html = (root / "report" / "report.html").read_text()
    assert 'id="banner-simulated"' in html
    assert "SIMULATED AGENT" in html and "deterministic stand-in agent" in html


def test_real_isolated_run_has_no_banner(tmp_path: Path) -> None:
    """A claude run on docker has no simulated, probe or unisolated banner."""
    b = RunBuilder(
        tmp_path / "run", ["t1"], harness="claude", backend="docker", isolation="container"
    )
    b.complete("t1", "vanilla", "pass", exact(10, 5))
    root = b.close()
    doc = load(root)
    assert not any(n.startswith(("SIMULATED", "PROBE", "UNISOLATED")) for n in doc["notes"])
    assert 'class="banner"' not in (root / "report" / "report.html").read_text()


def test_probe_and_unisolated_banners(tmp_path: Path) -> None:
    """A probe run without isolation carries both banners."""
    b = RunBuilder(tmp_path / "run", ["t1"], harness="codex", probe=True, isolation="none")
    root = b.close()
    doc = load(root)
    assert doc["run"]["probe"] is True and doc["run"]["isolated"] is False
    html = (root / "report" / "report.html").read_text()
    assert 'id="banner-probe"' in html and 'id="banner-unisolated"' in html


def test_html_is_self_contained_and_escaped(tmp_path: Path) -> None:
    """report.html has inline CSS, no script or external asset, and escapes every text."""
    root = sample_run(tmp_path / "run")
    build_report(root)
    html = (root / "report" / "report.html").read_text()
    assert "<style>" in html
    for bad in ("<script", "<link", "src=", "http://", "https://", "verifier <crashed>"):
        assert bad not in html
    assert "verifier &lt;crashed&gt;" in html


def test_html_shows_unknown_not_zero(tmp_path: Path) -> None:
    """A task × arm whose token median is unknown shows 'unknown' in its table cell."""
    root = sample_run(tmp_path / "run")
    build_report(root)
    html = (root / "report" / "report.html").read_text()
    row = html[html.index('<tr data-task="task-f">') :]
    row = row[: row.index("</tr>")]
    assert '<span class="unknown">unknown</span>' in row
    assert "2/3 (67%)" in row
    assert 'id="missing-values-table"' in html and 'id="discarded"' in html


# ---------------------------------------------------------------- CSV


def test_csv_rows_are_attempt_by_measure(tmp_path: Path) -> None:
    """results.csv has a header and one row per attempt × measure; unknown values are empty cells."""
    root = sample_run(tmp_path / "run")
    files = build_report(root)
    rows = list(csv.DictReader(io.StringIO(files.results_csv.read_text())))
    assert list(rows[0]) == [
        "run",
        "attempt_id",
        "task",
        "arm",
        "repeat",
        "outcome",
        "measure",
        "value",
        "unit",
        "status",
        "reason",
        "language",
        "analyzer",
    ]
    per_attempt = {r["measure"] for r in rows if r["attempt_id"] == "task-a.vanilla.0"}
    assert {
        "tokens.input",
        "tokens.total",
        "coding_seconds",
        "reward",
        "measures.source_lines_added",
    } <= per_attempt
    assert len(rows) == 42 * len(per_attempt)
    unknown = [
        r for r in rows if r["attempt_id"] == "task-f.vanilla.0" and r["measure"] == "tokens.total"
    ]
    assert unknown[0]["value"] == "" and unknown[0]["status"] == "unknown"
    known = [
        r for r in rows if r["attempt_id"] == "task-a.vanilla.0" and r["measure"] == "tokens.total"
    ]
    assert known[0]["value"] == "1200"


# ---------------------------------------------------------------- property test

fates = st.sampled_from(
    ["pending", "running", "interrupted", "discarded", "pass", "fail", "empty", "unknown"]
)
counts = st.one_of(st.none(), st.integers(min_value=0, max_value=10_000))
usages = st.one_of(
    st.just(UNKNOWN_USAGE),
    st.builds(
        lambda i, o, c: Usage(
            status="exact",
            input_tokens=i,
            output_tokens=o,
            cached_input_tokens=c,
            total_tokens=None if i is None or o is None else i + o,
        ),
        counts,
        counts,
        counts,
    ),
    st.builds(
        lambda i, o: Usage(
            status="lower_bound",
            input_tokens=i,
            output_tokens=o,
            reason="subagent transcript missing",
        ),
        counts,
        counts,
    ),
)


def _play(b: RunBuilder, plan: Iterable[tuple[SlotPlan, str, Usage]]) -> dict[str, Usage | None]:
    used: dict[str, Usage | None] = {}
    for s, fate, usage in plan:
        if fate == "pending":
            continue
        if fate in ("pass", "fail", "empty", "unknown"):
            used[b.complete(s.task, s.arm, fate, usage, repeat=s.repeat, reason="r")] = usage
            continue
        aid = b.start(s)
        used[aid] = None
        if fate == "interrupted":
            b.log.append(AttemptInterrupted(attempt_id=aid, reason="sandbox failed"))
        elif fate == "discarded":
            b.log.append(
                AttemptDiscarded(
                    attempt_id=aid,
                    slot=s.slot,
                    replaced_by=aid + ".r",
                    reason="resume",
                    usage=usage,
                )
            )
    return used


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_runs_report_deterministically_and_never_zero_unknowns(data: st.DataObject) -> None:
    """Any mix of outcomes, usages and discards rebuilds byte-identically, and unknown usage is never 0."""
    n_tasks = data.draw(st.integers(1, 7), label="tasks")
    tasks = [f"task-{i}" for i in range(n_tasks)]
    with tempfile.TemporaryDirectory() as tmp:
        b = RunBuilder(
            Path(tmp) / "run", tasks, repeats=data.draw(st.integers(1, 2), label="repeats")
        )
        plan = [(s, data.draw(fates), data.draw(usages)) for s in b.slots]
        used = _play(b, plan)
        root = b.close()
        first = report_bytes(root)
        assert report_bytes(root) == first
        doc = json.loads(first[0])
    rows = {r["attempt_id"]: r for r in doc["attempts"]}
    for aid, usage in used.items():
        if aid not in rows:
            continue  # discarded: reported under discarded_attempts
        t = rows[aid]["tokens"]
        if usage is None or usage.status == "unknown":
            assert all(t[k] is None for k in ("input", "output", "total", "cached_input")), t
            assert t["status"] == "unknown"
        else:
            assert t["input"] == usage.input_tokens and t["output"] == usage.output_tokens
            assert t["cached_input"] == usage.cached_input_tokens
    for d in doc["discarded_attempts"]:
        if d["tokens"]["status"] == "unknown":
            assert d["tokens"]["total"] is None
    for task, arms in doc["per_task"].items():
        for arm, s in arms.items():
            done = [
                r
                for r in doc["attempts"]
                if (r["task"], r["arm"], r["state"]) == (task, arm, "complete")
            ]
            if any(r["tokens"]["total"] is None for r in done) or not done:
                assert s["median_total_tokens"] is None
            if any(r["outcome"] == "unknown" for r in done):
                assert task not in {
                    t
                    for t, p in doc["deltas"]["guided"]["per_task"].items()
                    if p["pass_rate_difference"] is not None
                }


def test_changes_table_shows_medians_and_unknown_never_zero() -> None:
    """The time-and-changes table shows each arm's medians, and 'unknown' (not 0) where one is missing."""
    from pluginbench.projections._report_html import _changes

    doc = {
        "arms": ["vanilla"], "tasks": ["t"],
        "per_task": {"t": {"vanilla": {"median_coding_seconds": 1.5, "median_source_lines_added": 7,
                                       "median_source_lines_removed": None, "median_test_lines_added": 3,
                                       "median_test_lines_removed": 0}}},
    }
    html = _changes(doc)
    cells = html.split('data-changes-task="t">')[1].split("</tr>")[0]
    assert cells.count("<td") == 5
    assert '<td class="num">7</td>' in cells and '<td class="num">1.5</td>' in cells
    assert "unknown" in cells and cells.count(">0<") == 1


def test_report_names_what_was_tested(tmp_path: Path) -> None:
    """results.json lists each frozen arm's files with bytes and sha256 of the frozen bytes, and the page shows them."""
    import hashlib

    from pluginbench.events import TreatmentFrozen
    from pluginbench.projections._integrity import _tree_fingerprint

    b = RunBuilder(tmp_path / "run", ["t1"])
    frozen = tmp_path / "run" / "evidence" / "frozen" / "treatments" / "guided" / "guidance"
    frozen.mkdir(parents=True)
    (frozen / "00-x.md").write_text("use tests\n")
    print_ = _tree_fingerprint(frozen.parent)  # the frozen tree's own fingerprint: the report checks it
    assert print_ is not None
    b.log.append(TreatmentFrozen(arm="guided", fingerprint=print_, guidance_bytes=10, skills=[], plugins=[]))
    b.complete("t1", "vanilla", "pass", exact(800, 200))
    b.complete("t1", "guided", "pass", exact(800, 200))
    root = b.close()
    doc = load(root)
    (f,) = doc["treatments"]["guided"]["files"]
    assert (f["path"], f["bytes"], f["sha256"]) == ("guidance/00-x.md", 10, hashlib.sha256(b"use tests\n").hexdigest())
    assert f["sha256"] in (root / "report" / "report.html").read_text()


def test_a_partial_run_colours_no_effect_and_the_page_reads_top_down(tmp_path: Path) -> None:
    """A treatment better on all six tasks, with one attempt still missing: the headline says no verdict yet, and
    neither the verdict, the paired summary nor any per-task delta is coloured; complete, the same run's page is
    coloured; either way the sections run verdict, paired comparison, plots, per-task tables."""
    tasks = [f"t{i}" for i in range(1, 7)]
    b = RunBuilder(tmp_path / "partial", tasks, repeats=2)
    for t in tasks:
        for r in range(2):
            b.complete(t, "vanilla", "pass" if r < 1 else "fail", exact(800, 200), repeat=r)
            if (t, r) != ("t6", 1):
                b.complete(t, "guided", "pass", exact(1200, 300), repeat=r)
    root = b.close()
    doc = load(root)
    assert doc["verdicts"][0]["kind"] == "partial" and "no verdict yet" in doc["verdicts"][0]["headline"]
    html = (root / "report" / "report.html").read_text()
    body = html[html.index("<body>"):]
    assert 'class="good"' not in body and 'class="bad"' not in body and "verdict-better" not in body
    order = [body.index(f'<section id="{s}">') for s in ("verdict", "paired", "plots", "per-task", "cost", "attempts")]
    assert order == sorted(order)
    full = (six_task_run(tmp_path / "full", {t: 2 for t in tasks}) / "report" / "report.html")
    build_report(full.parents[1])
    assert 'class="good"' in full.read_text()


def test_a_summary_is_coloured_only_when_its_interval_decides() -> None:
    """+27.8 pp with a 90% interval from +0.0 to +50.0 pp (undetermined) reads plain, in pp with one decimal like the
    headline; the same estimate with an interval above 0 reads green, and a token ratio whose interval is above ×1 red."""
    from pluginbench.projections._report_html import _interval_text

    s = {"estimate": 0.2778, "low": 0.0, "high": 0.5, "status": "ok", "level": 0.9, "tasks": 6, "min_tasks": 5}
    plain = _interval_text(s, stats.format_pp, higher_is_better=True, centre=0)
    assert 'class="good"' not in plain and "+27.8 pp" in plain and "[+0.0 pp, +50.0 pp]" in plain
    assert 'class="good"' in _interval_text({**s, "low": 0.1}, stats.format_pp, higher_is_better=True, centre=0)
    tok = {**s, "estimate": 1.31, "low": 1.16, "high": 1.5}
    assert 'class="bad"' in _interval_text(tok, stats.format_ratio, higher_is_better=False, centre=1)


def test_tokens_and_dollars_per_attempt_and_per_solved_task(tmp_path: Path) -> None:
    """The Cost section's per-arm table: tokens (input + output) per attempt and per solved task from the same totals
    (vanilla 1,000 per attempt, 6 of 12 pass: 2,000 per solved task; guided 1,500 and 12 passes: 1,500), and a
    dollar figure reads unknown, never 0, without a price row."""
    from pluginbench.projections._report_cost import spend_rows

    doc = load(six_task_run(tmp_path / "run", {f"t{i}": 2 for i in range(1, 7)}))
    rows = {r["arm"]: r for r in spend_rows(doc)}
    assert (rows["vanilla"]["tokens_per_attempt"], rows["vanilla"]["tokens_per_solved"]) == (1000, 2000)
    assert (rows["guided"]["tokens_per_attempt"], rows["guided"]["tokens_per_solved"], rows["guided"]["passes"]) == (
        1500, 1500, 12)
    assert rows["guided"]["usd_per_attempt"] is None
    html = (tmp_path / "run" / "report" / "report.html").read_text()
    assert 'id="spend-per-arm"' in html and "<td class=\"num\">2,000</td>" in html


def test_not_applicable_keeps_its_status_in_results_json_and_csv(tmp_path: Path) -> None:
    """A measure recorded not_applicable reaches results.json's attempt row and results.csv with that status (value
    empty, reason kept) and is not listed under missing_values, while an unknown one is."""
    b = RunBuilder(tmp_path / "run", ["t1"])
    b.complete("t1", "vanilla", "pass", exact(800, 200))
    aid = b.start(b.slot("t1", "guided"))
    b.log.append(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=exact(900, 100)))
    b.log.append(AttemptGraded(attempt_id=aid, outcome="pass", reward=1.0))
    b.log.append(MeasuresCollected(attempt_id=aid, measures={
        "duplicate_groups_added": Measure(value=None, unit="groups", status="not_applicable",
                                          reason="jscpd measures JavaScript/TypeScript; the task has none"),
        "dead_code_candidates_added": Measure(value=None, unit="candidates", status="unknown", reason="vulture failed"),
    }))
    b.log.append(AttemptCompleted(attempt_id=aid))
    root = b.close()
    doc = load(root)
    row = next(r for r in doc["attempts"] if r["attempt_id"] == aid)
    assert row["measures"]["duplicate_groups_added"]["status"] == "not_applicable"
    fields = {m["field"] for m in doc["missing_values"]}
    assert "measures.dead_code_candidates_added" in fields and "measures.duplicate_groups_added" not in fields
    csv_rows = [line.split(",") for line in (root / "report" / "results.csv").read_text().splitlines()]
    na = next(r for r in csv_rows if r[1] == aid and r[6] == "measures.duplicate_groups_added")
    assert (na[7], na[9]) == ("", "not_applicable") and "jscpd" in na[10]
