"""judge prepare on runs that a real reviewer phase reviewed: the diffs come from the runs' own
review packets (the labelled simulated reviewer writes them through the same packet code as a
real one), and they present exactly the submissions the snapshots hold."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runs_helpers import write_config

pytestmark = pytest.mark.slow


def _pb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def _origins(node: Any) -> list[str]:
    """Every ``diff_origin`` recorded anywhere in key.json."""
    if isinstance(node, dict):
        found = [node["diff_origin"]] if isinstance(node.get("diff_origin"), str) else []
        return found + [o for value in node.values() for o in _origins(value)]
    if isinstance(node, list):
        return [o for value in node for o in _origins(value)]
    return []


def _prepare(tmp: Path, runs: list[Path], out: str) -> Path:
    criteria = tmp / "criteria.md"
    criteria.write_text("# Review standard\n\nCorrect, minimal, tested.\n")
    done = _pb("judge", "prepare", f"{runs[0]}=testing-discipline", f"{runs[1]}=vanilla", "--criteria",
               str(criteria), "--seed", "5", "--output", str(tmp / out), cwd=tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / out


def test_prepare_reads_the_review_packets_of_reviewed_runs(tmp_path: Path) -> None:
    """Two runs reviewed by the run's reviewer phase are judged from their review packets, and the
    presented pair diffs are the same as those built from the saved snapshots once the packets are gone."""
    runs = []
    for name in ("r1", "r2"):
        folder = tmp_path / f"cfg-{name}"
        folder.mkdir()
        config = write_config(folder, tasks=["roman-numerals"], repeats=2, name=name,
                              reviewer={"harness": "simulated"})
        done = _pb("run", str(config), "--output", str(tmp_path / name), "--foreground", "--yes", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert any((tmp_path / name / "evidence" / "review-packets").iterdir())
        runs.append(tmp_path / name)

    from_packets = _prepare(tmp_path, runs, "from-packets")
    origins = _origins(json.loads((from_packets / "key.json").read_text()))
    assert origins and set(origins) == {"review-packet"}, origins

    for run in runs:
        packets = run / "evidence" / "review-packets"
        packets.rename(run / "evidence" / "review-packets-moved")
    from_snapshots = _prepare(tmp_path, runs, "from-snapshots")
    assert set(_origins(json.loads((from_snapshots / "key.json").read_text()))) == {"snapshot"}

    diffs = sorted(p.relative_to(from_packets) for p in from_packets.glob("task-*/*.diff"))
    assert diffs, list(from_packets.rglob("*"))
    for rel in diffs:
        assert (from_packets / rel).read_bytes() == (from_snapshots / rel).read_bytes(), rel
