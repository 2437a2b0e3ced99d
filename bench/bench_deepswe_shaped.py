"""Outcomes of the DeepSWE-shaped task per case on docker, and the seconds the source-only
grade adds per attempt.

Builds the task image ``pluginbench-test/deepswe-calc:v1`` from
``tests/data/deepswe-shaped/calc-clamp/environment`` (FROM the local base image), then runs,
through the real CLI on the docker backend: the oracle and nop controls on the task, an
oracle that leaves its own ``model.patch`` artifact (``artifact``), and the simulated agent
applying the ``overlap`` and ``agent-test-fails`` patches (``tests/data/deepswe-shaped/cases``).
Prints one table row per case (outcome, reward, native grading, source-only reward, what the
source-only grade removed, the seconds it added) and the median seconds added per attempt
that needed a verifier replay. Needs a running engine (tools/start-docker.sh) and the base
image (tools/build-base-image.sh). Run:

    .venv/bin/python bench/bench_deepswe_shaped.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHAPED = ROOT / "tests" / "data" / "deepswe-shaped"
TASK = SHAPED / "calc-clamp"
CASES = SHAPED / "cases"


def _variant(source: Path, name: str, candidate: str | None = None, solve: str | None = None) -> None:
    dest = source / name
    shutil.copytree(TASK, dest)
    toml = dest / "task.toml"  # each copy is its own task (two tasks may not share a [task] name)
    toml.write_text(toml.read_text().replace('name = "pluginbench-test/calc-clamp"', f'name = "pluginbench-test/{name}"'))
    if candidate:
        (dest / "simulated").mkdir()
        shutil.copyfile(CASES / candidate, dest / "simulated" / candidate)
        (dest / "simulated" / "candidates.toml").write_text(
            f'keywords = []\n[[candidates]]\nname = "{name}"\npatch = "{candidate}"\nexpect = "pass"\n'
            'weight = 1\nguided_weight = 1\nsummary = "scripted"\n')
    if solve:
        shutil.copyfile(CASES / solve, dest / "solution" / "solve.sh")
        (dest / "solution" / "solve.sh").chmod(0o755)


def _run(tmp: Path, name: str, harness: str, tasks: list[str], source: Path) -> list[dict]:
    cfg = tmp / f"{name}.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": name, "tasks": {"source": str(source), "ids": tasks}, "treatments": {},
        "runner": {"harness": harness, "model": "simulated-1" if harness == "simulated" else None},
        "repeats": 1, "jobs": 2, "seed": 3, "timeout_seconds": 300, "environment": {"backend": "docker"},
    }))
    out = tmp / name
    subprocess.run([sys.executable, "-m", "pluginbench", "run", str(cfg), "--output", str(out), "--foreground"],
                   check=True, capture_output=True, timeout=1800)
    return json.loads((out / "report" / "results.json").read_text())["attempts"]


def main() -> None:
    subprocess.run(["docker", "build", "-q", "-t", "pluginbench-test/deepswe-calc:v1", str(TASK / "environment")],
                   check=True, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="bench-deepswe-") as tmp_name:
        tmp = Path(tmp_name)
        source = tmp / "tasks"
        source.mkdir()
        shutil.copytree(TASK, source / "calc-clamp")
        _variant(source, "artifact", solve="artifact-solve.sh")
        _variant(source, "overlap", candidate="overlap.patch")
        _variant(source, "agent-test-fails", candidate="agent-test-fails.patch")
        rows = []
        for name, harness, tasks in (("oracle", "oracle", ["calc-clamp", "artifact"]), ("nop", "nop", ["calc-clamp"]),
                                     ("agent", "simulated", ["overlap", "agent-test-fails"])):
            for a in _run(tmp, name, harness, tasks, source):
                label = {"calc-clamp": name, "artifact": "agent model.patch artifact"}.get(a["task"], a["task"])
                rows.append((label, a))
    print("| case | outcome | reward | native grading | source-only reward | removed | source-only s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    added = []
    for label, a in rows:
        native = a.get("native_grading") or {}
        g = a.get("source_only_grading") or {}
        counts = (f"f2p {native.get('f2p_passed', 0):g}/{native.get('f2p_total', 0):g}, "
                  f"p2p {native.get('p2p_passed', 0):g}/{native.get('p2p_total', 0):g}") if native else "-"
        seconds = g.get("seconds")
        if g and not g.get("native_result_reused") and seconds is not None:
            added.append(seconds)
        print(f"| {label} | {a['outcome']} | {a['reward']} | {counts} | {a.get('source_only_reward')} | "
              f"{', '.join(g.get('removed_test_files') or []) or '-'} | {seconds if seconds is not None else '-'} |")
    if added:
        print(f"\nsource-only grade: median {statistics.median(added):.2f} s added per attempt with a verifier replay "
              f"({len(added)} replays; reused native results add ~0 s)")


if __name__ == "__main__":
    main()
