"""Whole evaluations on the ray backend over a real local cluster (a head and worker nodes
a and b on loopback): the same results as the local backend, spread over both nodes, with
the Supervisor on the head as the one writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .runs import assert_no_duplicates_none_lost, cli, config, events, results_without_backend

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.mark.parametrize("harness", ["nop", "oracle", "simulated"])
def test_whole_evaluation_matches_the_local_backend(cluster, tmp_path: Path, harness: str) -> None:
    """The same evaluation and seed give the same results.json on two worker nodes as on the local backend, and both nodes coded."""
    local, ray = tmp_path / "local", tmp_path / "ray"
    cli("run", str(config(tmp_path / "l", address=None, harness=harness)), "--output", str(local), "--foreground")
    cli("run", str(config(tmp_path / "r", address=cluster.address, harness=harness)), "--output", str(ray),
        "--foreground")
    assert results_without_backend(ray) == results_without_backend(local)
    evs = events(ray)
    started = [e for e in evs if e["type"] == "run.started"]
    assert started[-1]["nodes"] == [{"name": "a", "jobs": 2}, {"name": "b", "jobs": 2}]
    nodes = {e["node"] for e in evs if e["type"] == "agent.launched"}
    assert nodes == {"a", "b"}, "attempts should be spread over both worker nodes"
    st = assert_no_duplicates_none_lost(ray)
    assert st["backend"] == "ray" and st["nodes"] == [{"name": "a", "jobs": 2}, {"name": "b", "jobs": 2}]
    assert {a["node"] for a in st["attempts"]} == {"a", "b"}


def test_evidence_lands_in_the_run_directory_as_recorded(cluster, tmp_path: Path) -> None:
    """Each attempt's model.patch and verifier reward came back from its node into the head's run directory, matching the sha256 the log recorded."""
    import hashlib

    run = tmp_path / "run"
    cli("run", str(config(tmp_path, address=cluster.address, harness="simulated")), "--output", str(run),
        "--foreground")
    captured = {e["attempt_id"]: e["patch_sha256"] for e in events(run) if e["type"] == "submission.captured"}
    assert captured
    for attempt, digest in captured.items():
        folder = run / "evidence" / "attempts" / attempt
        assert hashlib.sha256((folder / "model.patch").read_bytes()).hexdigest() == digest
        assert (folder / "grading" / "verifier" / "reward.txt").is_file()
        assert json.loads((folder / "invocation.json").read_text())["attempt_id"] == attempt


def test_status_shows_nodes_and_doctor_checks_the_cluster(cluster, tmp_path: Path) -> None:
    """`status` names each worker node with its jobs; a config whose cluster has no reachable head is refused with exit 2."""
    run = tmp_path / "run"
    cli("run", str(config(tmp_path, address=cluster.address, harness="nop", tasks=None)), "--output", str(run),
        "--foreground")
    text = cli("status", str(run)).stdout
    assert "node a (2 jobs)" in text and "node b (2 jobs)" in text
    bad = cli("run", str(config(tmp_path / "bad", address="127.0.0.1:1")), "--output", str(tmp_path / "no"),
              "--foreground", check=False)
    assert bad.returncode == 2, bad.stderr
    assert "environment.settings.address" in bad.stderr + bad.stdout
    assert not (tmp_path / "no").exists()
