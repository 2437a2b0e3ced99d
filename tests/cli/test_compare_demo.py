"""A whole compare of two real demo runs (simulated agent, local backend) with gates files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

PASSES = {"name": "passes", "correctness": "passes", "against": "vanilla", "direction": "higher", "tolerance": 1}
NON_INFERIOR = {"name": "non-inferior", "correctness": "passes", "against": "vanilla", "direction": "higher",
                "bound": "lower", "margin": -0.05}
TOKENS = {"name": "tokens", "metrics": ["Input tokens", "Output tokens"], "statistic": "mean_of_task_medians",
          "against": "vanilla", "direction": "lower", "factor": 1.1}


def pb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def gates(tmp: Path, name: str, *gate: dict, splits: dict | None = None) -> str:
    p = tmp / f"{name}.yaml"
    p.write_text(yaml.safe_dump({"count_overlap_passes": True, "gates": list(gate), **({"splits": splits} if splits else {})}))
    return str(p)


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two independent demo runs, made at the same time (each mostly waits on its agents and verifiers)."""
    root = tmp_path_factory.mktemp("demos")
    procs = {}
    for name in ("a", "b"):
        with (root / f"demo-{name}.log").open("w") as log:
            procs[name] = subprocess.Popen([sys.executable, "-m", "pluginbench", "demo", "--output", str(root / name)],
                                           cwd=root, stdout=log, stderr=subprocess.STDOUT)
    for name, proc in procs.items():
        assert proc.wait(timeout=600) == 0, (root / f"demo-{name}.log").read_text()
    return root / "a", root / "b"


def test_demo_runs_compare_with_exit_codes(demo_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The treatment of one demo run against the vanilla of another: 0 when gates pass, 1 on a failing token
    gate or a -5 pp non-inferiority gate six tasks cannot establish (the bounded-mean test), 3 when a two-task split
    cannot give a bound; the identical identities are accepted."""
    a, b = demo_runs
    inputs = (f"{a}=testing-discipline", f"{b}=vanilla")
    ok = pb("compare", *inputs, "--gates", gates(tmp_path, "ok", PASSES), cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "verdict: pass (exit 0)" in ok.stdout
    assert "Paired · all · testing-discipline vs vanilla" in ok.stdout
    assert "Run identity" not in ok.stdout  # both runs saved the same identity

    failing = pb("compare", *inputs, "--gates", gates(tmp_path, "fail", PASSES, TOKENS), cwd=tmp_path)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    ni = pb("compare", *inputs, "--gates", gates(tmp_path, "ni", PASSES, NON_INFERIOR), cwd=tmp_path)
    assert ni.returncode == 1 and "by the betting test for a bounded mean" in ni.stdout, ni.stdout + ni.stderr

    ceiling = {"name": "ceiling", "metrics": ["Input tokens", "Output tokens"], "against": "vanilla",
               "direction": "lower", "bound": "upper", "factor": 2.0}
    split = gates(tmp_path, "undetermined", ceiling, splits={"two": ["roman-numerals", "word-wrap"]})
    undetermined = pb("compare", *inputs, "--gates", split, "--json", cwd=tmp_path)
    assert undetermined.returncode == 3, undetermined.stdout + undetermined.stderr
    doc = json.loads(undetermined.stdout)
    assert [(s["name"], s["gates"][0]["status"]) for s in doc["splits"]] == [("two", "undetermined"), ("all", "pass")]


def test_demo_runs_refuse_the_same_package_twice(demo_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Both whole demo runs give vanilla and the treatment on the same tasks twice: exit 2, nothing compared."""
    a, b = demo_runs
    done = pb("compare", str(a), str(b), "--gates", gates(tmp_path, "g", PASSES), cwd=tmp_path)
    assert done.returncode == 2
    assert "may come from only one input" in done.stderr


def test_demo_run_calibrates(demo_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """A/A calibration of a demo run (simulated agent, zero true difference by construction) reports every gate."""
    a, _ = demo_runs
    done = pb("calibrate", str(a), "--gates", gates(tmp_path, "cal", PASSES, NON_INFERIOR, TOKENS),
              "--seeds", "50", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["seeds"], doc["tasks"], doc["vanilla_attempts"]) == (50, 6, 18)
    ni = [r for r in doc["gates"] if r["gate"] == "non-inferior"][0]
    assert ni["nominal"] == 0.05 and ni["determined"] == 50
    assert ni["exceeds_nominal"] == (ni["false_positive_rate"] > 0.05)
