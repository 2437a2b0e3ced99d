"""A worker node that joins a running evaluation raises its coding capacity in the same
run (no resume): the head records ``cluster.changed`` and codes on the new node too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .cluster import LocalCluster, local_cluster
from .runs import assert_no_duplicates_none_lost, cli, config, events, slow_task, wait_for

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A head and ONE worker node (a); the test adds node c while a run is coding."""
    with local_cluster(("a",)) as started:
        yield started


def _overlapping(evs: list[dict]) -> bool:
    """Whether two attempts' agents ran at the same time (from the log's own order)."""
    running: set[str] = set()
    for e in evs:
        if e["type"] == "agent.launched":
            running.add(e["attempt_id"])
            if len(running) > 1:
                return True
        elif e["type"] in ("agent.exited", "attempt.discarded", "attempt.reset"):
            running.discard(e.get("attempt_id", ""))
    return False


def test_a_node_joining_mid_run_raises_coding_capacity_without_resume(cluster, tmp_path: Path) -> None:
    """Node c joins while the run codes one attempt at a time on node a: the run records cluster.changed with both
    nodes, codes on c, runs two attempts at once from then on, and ends complete with one run.started."""
    source = tmp_path / "tasks"
    slow_task(source, "slow", 4)
    cfg = config(tmp_path, address=cluster.address, harness="oracle", treatments={}, jobs=1, repeats=8,
                 tasks={"source": str(source), "ids": ["slow"]})
    run = tmp_path / "run"
    cli("run", str(cfg), "--output", str(run))
    first = wait_for("the first attempt on node a (or an end)", lambda: [
        e for e in events(run) if e["type"] in ("agent.launched", "run.failed", "run.stopped")])
    assert first[0]["type"] == "agent.launched", [(e["type"], e.get("error")) for e in events(run)]
    cluster.add_worker("c")
    wait_for("the run to finish", lambda: any(e["type"] in ("run.finished", "run.failed") for e in events(run)), 600)
    evs = events(run)
    assert [e["nodes"] for e in evs if e["type"] == "run.started"] == [[{"name": "a", "jobs": 1}]]
    changed = [e["nodes"] for e in evs if e["type"] == "cluster.changed"]
    assert [{"name": "a", "jobs": 1}, {"name": "c", "jobs": 1}] in changed, changed
    assert "c" in {e["node"] for e in evs if e["type"] == "agent.launched"}
    assert _overlapping(evs), "after the join two attempts should code at once"
    st = assert_no_duplicates_none_lost(run)
    assert st["nodes"] == [{"name": "a", "jobs": 1}, {"name": "c", "jobs": 1}]
    assert all(a["outcome"] == "pass" for a in st["attempts"])
