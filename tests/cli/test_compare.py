"""``pluginbench compare`` through the CLI: exit codes, DIR=ARM selection, refusals, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pluginbench.cli import app
from tests.cli._results_synth import identity, write_run

runner = CliRunner()
TASKS = [f"task-{i}" for i in range(6)]
GATES = {
    "count_overlap_passes": True,
    "splits": {"first-two": TASKS[:2]},
    "gates": [
        {"name": "passes", "correctness": "passes", "against": "vanilla", "direction": "higher"},
        {"name": "tokens", "metrics": ["Input tokens", "Output tokens"], "statistic": "mean_of_task_medians",
         "against": "vanilla", "direction": "lower", "factor": 1.3},
    ],
}


def gates_file(tmp_path: Path, data: dict | None = None) -> Path:
    p = tmp_path / "gates.yaml"
    p.write_text(yaml.safe_dump(data or GATES))
    return p


def cli(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, ["compare", *args])
    return res.exit_code, res.output


def always(outcome: str):
    return lambda t, a, r: outcome


def test_two_runs_that_pass_every_gate_exit_zero(tmp_path: Path) -> None:
    """A treatment from one run against vanilla from another, passing every gate, exits 0 and prints each split."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, arm, r: "pass" if arm == "docs" or r == 1 else "fail")
    b = write_run(tmp_path / "b", ["vanilla"], TASKS, always("fail"))
    code, out = cli(f"{a}=docs", f"{b}=vanilla", "--gates", str(gates_file(tmp_path)))
    assert code == 0, out
    assert "first-two: 2 task(s)" in out and "all: 6 task(s)" in out
    assert "verdict: pass (exit 0)" in out
    assert "Paired · all · docs vs vanilla" in out
    # the paired lines: the verdict with the exact test's p and the range that assumes no symmetry, then the p each way
    assert "docs is better than vanilla: +100.0 pp pass rate over 6 task(s), sign-flip test at 0: p = 0.016 " \
           "[90% range, no symmetry assumed: +7.3 pp to +100.0 pp]" in out
    assert "direction: one-sided sign-flip test at 0, p = 0.016 (better), 1.00 (worse)" in out


def test_a_failing_gate_exits_one(tmp_path: Path) -> None:
    """More tokens than factor × vanilla fails the token gate: exit 1."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, always("pass"),
                  tokens=lambda t, arm, r: (3000, 300) if arm == "docs" else (1000, 100))
    code, out = cli(str(a), "--gates", str(gates_file(tmp_path)))
    assert code == 1, out
    assert "verdict: fail (exit 1)" in out


def test_an_undetermined_gate_exits_three(tmp_path: Path) -> None:
    """An attempt without token counts makes the token gate undetermined: exit 3, naming the metrics and counts."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, always("pass"),
                  tokens=lambda t, arm, r: None if (arm, t, r) == ("docs", "task-0", 2) else (1000, 100))
    code, out = cli(str(a), "--gates", str(gates_file(tmp_path)), "--json")
    assert code == 3, out
    doc = json.loads(out)
    assert doc["status"] == "undetermined" and doc["exit_code"] == 3
    tokens_all = [g for g in doc["splits"][1]["gates"] if g["gate"] == "tokens"][0]
    assert tokens_all["status"] == "undetermined"
    assert "docs measured 17 of 18 assigned attempts" in tokens_all["detail"]


def test_json_output_has_every_split_table_and_paired_section(tmp_path: Path) -> None:
    """--json prints one object: packages, and per split the measure rows, gates and paired sections."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, always("pass"))
    code, out = cli(str(a), "--gates", str(gates_file(tmp_path)), "--json")
    doc = json.loads(out)
    assert code == 0
    assert [s["name"] for s in doc["splits"]] == ["first-two", "all"]
    all_split = doc["splits"][1]
    assert len(all_split["measures"]) == 12
    paired = all_split["paired"][0]
    assert (paired["candidate"], paired["against"]) == ("docs", "vanilla")
    assert paired["pass_rate"]["status"] == "ok" and paired["pass_rate"]["draws"] == 10_000


def test_identity_mismatch_is_refused_naming_runs_tasks_and_fields(tmp_path: Path) -> None:
    """Runs whose comparison_identity differs are refused (exit 2): both runs, the tasks, each field with both values."""
    a = write_run(tmp_path / "a", ["docs"], TASKS, always("pass"))
    long_caps = {"subagents": False, "note": "x" * 80}
    b = write_run(
        tmp_path / "b", ["vanilla"], TASKS, always("pass"),
        ident=identity(runner__model="other-model", capabilities=long_caps,
                       tasks={t: f"sha256:{t}" for t in TASKS},
                       task_limits={t: {"effective": {"agent_timeout_seconds": 600 if t == "task-3" else 120}} for t in TASKS}),
    )
    code, out = cli(str(a), str(b), "--gates", str(gates_file(tmp_path)))
    assert code == 2, out
    assert f"{a} and {b} differ on tasks task-0, task-1" in out
    assert "runner.model: simulated-1" in out and "other-model" in out
    assert "task_limits.task-3.effective.agent_timeout_seconds: 120" in out and "600" in out
    assert "capabilities:" in out and "sha256:" in out  # the long value as a short hash
    assert "x" * 80 not in out


def test_fields_one_run_saved_and_old_runs_are_named(tmp_path: Path) -> None:
    """A field only one run saved is not compared but named in a Run identity line; a run without identity compares unchecked."""
    ident = identity(tasks={t: f"sha256:{t}" for t in TASKS}, reviewer={"model": "claude-x"})
    a = write_run(tmp_path / "a", ["docs"], TASKS, always("pass"), ident=ident)
    b = write_run(tmp_path / "b", ["vanilla"], TASKS, always("pass"))
    c = write_run(tmp_path / "c", ["other"], TASKS, always("pass"), ident=None)
    code, out = cli(str(a), str(b), str(c), "--gates", str(gates_file(tmp_path)))
    assert code == 0, out
    assert "Run identity: saved by only one run, not compared: reviewer.model" in out
    assert f"compared unchecked: {c}" in out


def test_same_package_and_task_from_two_inputs_is_refused(tmp_path: Path) -> None:
    """The same package and task may come from only one input: otherwise exit 2 with the fix DIR=ARM,ARM."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, always("pass"))
    b = write_run(tmp_path / "b", ["vanilla"], TASKS, always("pass"))
    code, out = cli(str(a), str(b), "--gates", str(gates_file(tmp_path)))
    assert code == 2, out
    assert "package 'vanilla'" in out and "DIR=ARM,ARM" in out


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ("gates: [", ["not valid YAML", "gates.yaml"]),
        ("gates: []\n", ["count_overlap_passes is required", "field: count_overlap_passes"]),
        (yaml.safe_dump({**GATES, "gates": [{**GATES["gates"][0], "against": "nobody"}]}), ["no input provides", "field: gates[0].against"]),
    ],
)
def test_bad_gates_file_exits_two(tmp_path: Path, content: str, needles: list[str]) -> None:
    """A bad gates file is exit 2 with the file, the field and the fix; no traceback."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, always("pass"))
    p = tmp_path / "gates.yaml"
    p.write_text(content)
    code, out = cli(str(a), "--gates", str(p))
    assert code == 2, out
    assert out.startswith("error: ") and "fix:" in out
    for n in needles:
        assert n in out
    assert "Traceback" not in out


def test_missing_report_and_unknown_arm_exit_two(tmp_path: Path) -> None:
    """A missing folder, a folder that is not a run, a run without report/results.json, or an arm the run lacks, is bad input with a fix."""
    code, out = cli(str(tmp_path / "nothing"), "--gates", str(gates_file(tmp_path)))
    assert code == 2 and "nothing does not exist" in out and "pluginbench report" not in out
    (tmp_path / "plain").mkdir()
    code, out = cli(str(tmp_path / "plain"), "--gates", str(gates_file(tmp_path)))
    assert code == 2 and "plain is not a run directory" in out and "pluginbench report" not in out
    unreported = tmp_path / "unreported"
    unreported.mkdir()
    (unreported / "evaluation.json").write_text("{}")
    (unreported / "evaluation-binding.json").write_text("{}")
    code, out = cli(str(unreported), "--gates", str(gates_file(tmp_path)))
    assert code == 2 and f"pluginbench report {unreported}" in out
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, always("pass"))
    code, out = cli(f"{a}=vanilla,ghost", "--gates", str(gates_file(tmp_path)))
    assert code == 2 and "no arm 'ghost'" in out and "docs" in out


def test_calibrate_prints_rates_next_to_nominal(tmp_path: Path) -> None:
    """calibrate resamples a finished run's vanilla attempts and prints each gate's false-positive rate and nominal level."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, arm, r: "pass" if (r + len(t)) % 2 else "fail",
                  tokens=lambda t, arm, r: (1000 + 37 * r * len(t), 100 + r))
    bound = {"name": "ceiling", "metrics": ["Input tokens", "Output tokens"], "against": "docs",
             "direction": "lower", "bound": "upper", "factor": 1.3}
    g = gates_file(tmp_path, {**GATES, "gates": [*GATES["gates"], bound]})
    res = runner.invoke(app, ["calibrate", str(a), "--gates", str(g), "--seeds", "20", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert (doc["seeds"], doc["tasks"], doc["vanilla_attempts"]) == (20, 6, 18)
    rows = {(r["split"], r["gate"]): r for r in doc["gates"]}
    assert rows[("all", "ceiling")]["nominal"] == 0.05
    assert rows[("all", "passes")]["nominal"] is None
    assert all(r["determined"] + r["undetermined"] == 20 for r in doc["gates"])
    text = runner.invoke(app, ["calibrate", str(a), "--gates", str(g), "--seeds", "20"]).output
    assert "False-positive rate per gate" in text and "nominal" in text
    assert ("Calibrated rate exceeds nominal for:" in text) or ("No calibrated gate's rate exceeds" in text)


def test_calibrate_refuses_an_unfinished_run(tmp_path: Path) -> None:
    """A run whose vanilla attempts are not all complete cannot be calibrated: exit 2 with the fix."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, arm, r: None if r == 3 else "pass")
    res = runner.invoke(app, ["calibrate", str(a), "--gates", str(gates_file(tmp_path))])
    assert res.exit_code == 2
    assert "not finished" in res.output and "pluginbench run" in res.output


def test_calibrate_names_gates_it_could_not_calibrate(tmp_path: Path) -> None:
    """A gate undetermined in every seed (here a split of tasks the run lacks) is named as not calibrated, never summed up as within its level."""
    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, arm, r: "pass" if (r + len(t)) % 2 else "fail")
    g = gates_file(tmp_path, {**GATES, "splits": {"typo": ["no-such-task"]}})
    text = runner.invoke(app, ["calibrate", str(a), "--gates", str(g), "--seeds", "5"]).output
    flat = " ".join(text.split())
    assert "Not calibrated (undetermined in all 5 seeds; compare says why): " in flat, text
    named = flat.split("compare says why): ", 1)[1]
    assert "(typo)" in named and "(all)" not in named
    assert "No calibrated gate's rate exceeds its nominal level." in flat


def test_a_results_file_of_an_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    """results.json with schema_version 99 is refused (exit 2, the file, the field, the fix), never read as the current schema."""
    import json

    a = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, always("pass"))
    results = a / "report" / "results.json"
    doc = json.loads(results.read_text())
    doc["schema_version"] = 99
    results.write_text(json.dumps(doc))
    code, out = cli(str(a), "--gates", str(gates_file(tmp_path)))
    assert code == 2, out
    assert "schema_version 99" in out and "results.json" in out and "fix:" in out and "Traceback" not in out


def test_candidate_decides_alone(tmp_path: Path) -> None:
    """compare --candidate v2: v1 failing against vanilla is shown but exit 0 when v2 passes; v1 as candidate exits 1; an unknown candidate exits 2."""
    a = write_run(tmp_path / "a", ["vanilla", "v1", "v2"], TASKS,
                  lambda t, arm, r: "fail" if (arm, t, r) == ("v1", "task-0", 1) else "pass")
    g = gates_file(tmp_path, {"count_overlap_passes": True, "gates": [
        {"name": "passes", "correctness": "passes", "against": "vanilla", "direction": "higher"},
        {"name": "v2 vs v1", "correctness": "passes", "against": "v1", "direction": "higher"},
    ]})
    code, out = cli(str(a), "--gates", str(g))
    assert code == 1, out
    code, out = cli(str(a), "--gates", str(g), "--candidate", "v2")
    assert code == 0, out
    assert "verdict for candidate v2: pass (exit 0)" in out and "(context, not deciding)" in out
    assert cli(str(a), "--gates", str(g), "--candidate", "v1")[0] == 1
    code, out = cli(str(a), "--gates", str(g), "--candidate", "v3")
    assert code == 2 and "not one of the compared packages" in out
