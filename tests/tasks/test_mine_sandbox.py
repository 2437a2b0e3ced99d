"""Mining the bundled repository for real: tests run in bubblewrap sandboxes, and an admitted task passes check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from pluginbench.environments import bwrap_available
from tests._prereq import require

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "mine" / "calc-history.bundle"
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": "/nonexistent"}


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache"), "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=600,
                          env=env)


def test_mining_admits_the_merged_pull_request_rejects_the_rest_and_the_task_passes_check(tmp_path: Path) -> None:
    """History up to the merge, after 'Add subtract': the merge is admitted with its fail-to-pass tests, each other
    candidate is rejected with its reason, a red seeded bug is admitted, and check's readiness passes the admitted
    tasks (oracle 1, nop 0)."""
    require(bwrap_available(), "bubblewrap")
    repo = tmp_path / "calc"
    _git("clone", "--quiet", str(BUNDLE), str(repo), cwd=tmp_path)
    subjects = dict(line.split(" ", 1) for line in _git("log", "--first-parent", "--format=%H %s", cwd=repo).splitlines())
    by_subject = {s: h for h, s in subjects.items()}
    _git("reset", "--quiet", "--hard", by_subject["Merge pull request #2 from feature/divide"], cwd=repo)
    out = tmp_path / "mined"
    done = _cli(tmp_path, "tasks", "mine", str(repo), "--out", str(out), "--since", by_subject["Add subtract"], "--json",
                "--mutants", "1", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    got = {row["subject"]: (row["admitted"], row["code"]) for row in report["candidates"]}
    assert got == {
        "Describe calc in the README": (False, "no_test_change"),
        "Name the sum in add": (False, "no_test_change"),
        "Test add with negative numbers": (False, "no_source_change"),
        "Add in the other order and test zero": (False, "tests_pass_before"),
        "Merge pull request #2 from feature/divide": (True, None),
        "Seeded bug: comparison_flip at calc.py:11": (True, None),
    }
    assert (report["examined"], report["admitted"]) == (6, 2)
    merge, mutant = (row for row in report["candidates"] if row["admitted"])
    assert mutant["mutation"] == "comparison_flip at calc.py:11" and (mutant["f2p"], mutant["p2p"]) == (2, 5)
    assert "if b != 0:" in (out / mutant["task"] / "workspace" / "calc.py").read_text()
    assert "tests.test_divide.DivideTest.test_divide" in (out / mutant["task"] / "instruction.md").read_text()
    assert merge["merge"] and (merge["f2p"], merge["p2p"]) == (2, 5)
    assert json.loads((out / "mining.json").read_text())["candidates"] == report["candidates"]
    task = out / merge["task"]
    assert sorted(p.name for p in out.iterdir()) == sorted([merge["task"], mutant["task"], "mining.json"])
    config = json.loads((task / "tests" / "config.json").read_text())
    assert config["f2p"] == ["tests.test_divide.DivideTest.test_divide", "tests.test_divide.DivideTest.test_divide_by_zero"]
    assert not (task / "workspace" / "tests" / "test_divide.py").exists()  # the hidden tests stay hidden
    assert "divide" not in (task / "workspace" / "calc.py").read_text()
    assert "merge commit message as its author wrote it" in (task / "instruction.md").read_text().splitlines()[0]
    evaluation = tmp_path / "evaluation.yaml"
    evaluation.write_text(yaml.safe_dump({
        "name": "mined", "tasks": {"source": str(out), "ids": [merge["task"], mutant["task"]]}, "runner": {"harness": "oracle"},
        "repeats": 1, "jobs": 1, "timeout_seconds": 120, "environment": {"isolation": "bubblewrap"},
        "measurements": [],
    }))
    checked = _cli(tmp_path, "check", str(evaluation), "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rows = {(r["task"] == merge["task"], r["control"]): (r["ok"], r["reward"])
            for r in json.loads(checked.stdout)["readiness"]}
    assert rows == {(True, "oracle"): (True, 1.0), (True, "nop"): (True, 0.0),
                    (False, "oracle"): (True, 1.0), (False, "nop"): (True, 0.0)}
