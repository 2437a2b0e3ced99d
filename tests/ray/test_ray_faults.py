"""Faults on the ray backend, on a real local cluster: the head killed and resumed, a stop
across nodes, and a worker node killed mid-run (kill -9 of its raylet). Attempts are never
launched twice and none is lost. The worker-loss test runs last: it takes node b away."""

from __future__ import annotations

import json
import os
import signal
import tempfile
from pathlib import Path

import pytest

from .runs import assert_no_duplicates_none_lost, cli, config, events, slow_task, status, wait_for

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def _launched(run: Path) -> list[dict]:
    return [e for e in events(run) if e["type"] == "agent.launched"]


def _leftovers(run_id: str) -> list[str]:
    """Sandbox and staging folders of ``run_id`` still on the nodes (they share this machine's temp dir)."""
    tmp = Path(tempfile.gettempdir())
    return sorted(str(p) for p in tmp.glob(f"pluginbench-*{run_id}-*") if p.is_dir())


def _slow_config(tmp_path: Path, address: str, *, repeats: int, seconds: float) -> Path:
    source = tmp_path / "tasks"
    slow_task(source, "slow", seconds)
    return config(tmp_path, address=address, harness="oracle", treatments={}, jobs=1, repeats=repeats,
                  tasks={"source": str(source), "ids": ["slow"]})


def test_head_killed_mid_attempt_then_resumed(cluster, tmp_path: Path) -> None:
    """kill -9 of the head mid-attempt, then resume: launched attempts are discarded and recoded, nothing is left on the nodes, none lost, none twice."""
    run = tmp_path / "rayhead"
    cli("run", str(_slow_config(tmp_path, cluster.address, repeats=2, seconds=6)), "--output", str(run))
    wait_for("an agent launch", lambda: _launched(run))
    owner = json.loads((run / "run.lock").read_text())
    os.kill(owner["pid"], signal.SIGKILL)
    wait_for("the head to be gone", lambda: not status(run)["active"], 30)
    killed = {e["attempt_id"] for e in _launched(run)}
    cli("run", str(run), "--foreground")
    st = assert_no_duplicates_none_lost(run)
    discarded = {d["id"] for d in st["discarded"]}
    captured = {e["attempt_id"] for e in events(run) if e["type"] == "submission.captured"}
    assert killed - captured <= discarded and discarded, (killed, discarded)
    assert all(a["outcome"] == "pass" for a in st["attempts"])
    assert _leftovers(run.name) == []


def test_stop_works_across_nodes(cluster, tmp_path: Path) -> None:
    """`pluginbench stop` mid-run: attempts running on both nodes finish and are kept, nothing new starts, the run ends stopped."""
    run = tmp_path / "raystop"
    cli("run", str(_slow_config(tmp_path, cluster.address, repeats=4, seconds=4)), "--output", str(run))
    wait_for("attempts running on both nodes", lambda: {e.get("node") for e in _launched(run)} >= {"a", "b"})
    cli("stop", str(run))
    wait_for("the run to stop", lambda: status(run)["phase"] == "stopped", 180)
    st = status(run)
    launched = {e["attempt_id"] for e in _launched(run)}
    kept = {a["id"] for a in st["attempts"] if a["state"] == "complete"}
    assert launched and launched == kept, (launched, kept)
    assert any(a["state"] == "pending" for a in st["attempts"])
    assert _leftovers(run.name) == []


def test_worker_node_killed_mid_run_is_recoded(cluster, tmp_path: Path) -> None:
    """kill -9 of worker b's raylet mid-attempt: its attempt is discarded and recoded on node a in the same run; 0 lost, 0 duplicates."""
    run = tmp_path / "raylost"
    cli("run", str(_slow_config(tmp_path, cluster.address, repeats=3, seconds=8)), "--output", str(run))
    on_b = wait_for("an attempt launched on node b", lambda: [e for e in _launched(run) if e.get("node") == "b"])
    cluster.kill_worker("b")
    lost = on_b[0]["attempt_id"]
    wait_for("the run to finish", lambda: status(run)["phase"] in ("complete", "failed", "stopped"), 300)
    st = assert_no_duplicates_none_lost(run)
    discarded = {d["id"]: d for d in st["discarded"]}
    assert lost in discarded and "lost" in discarded[lost]["reason"]
    replacement = discarded[lost]["replaced_by"]
    row = next(a for a in st["attempts"] if a["id"] == replacement)
    assert row["outcome"] == "pass" and row["node"] == "a"
    assert all(a["outcome"] == "pass" for a in st["attempts"])
    assert not any(e["type"] == "run.failed" for e in events(run))
