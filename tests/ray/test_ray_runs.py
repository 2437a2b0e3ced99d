"""Whole evaluations on the ray backend over a real local cluster (a head and worker nodes
a and b on loopback): the same results as the local backend, spread over both nodes, with
the Supervisor on the head as the one writer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..actors.test_sequential_runs import GUIDANCE, _config, _expected_decision_task, _tasks
from .runs import assert_no_duplicates_none_lost, cli, config, events, results_without_backend

pytestmark = [pytest.mark.ray, pytest.mark.slow]


#: nop submits nothing, the simulated agent's candidates (seed 3) pass or submit nothing (asserted); the oracle's solution on Ray
#: is graded by the kill and join tests (test_ray_faults, test_ray_join)
@pytest.mark.parametrize("harness", ["nop", "simulated"])
def test_whole_evaluation_matches_the_local_backend(cluster, tmp_path: Path, harness: str) -> None:
    """The same evaluation and seed give the same results.json on two worker nodes as on the local backend, and both nodes coded."""
    local, ray = tmp_path / "local", tmp_path / "ray"
    cli("run", str(config(tmp_path / "l", address=None, harness=harness)), "--output", str(local), "--foreground")
    cli("run", str(config(tmp_path / "r", address=cluster.address, harness=harness)), "--output", str(ray),
        "--foreground")
    expected = results_without_backend(local)
    assert results_without_backend(ray) == expected
    if harness == "simulated":  # the grades compared include passes (what the oracle case gave) and empties
        assert {a["outcome"] for a in expected["attempts"]} == {"pass", "empty"}
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


def test_a_sequential_run_stops_when_decided_as_on_local(cluster, tmp_path: Path) -> None:
    """A +100 pp sequential run over both worker nodes records the decision after the task the pure rule names, stops as `stop` does with tasks left unrun, and its report says it stopped because it was decided."""
    k = _expected_decision_task()  # 4 at the level those runs use
    pool = k + 2  # two tasks beyond the decision; one coding job per node: the task after it may run, the last one not
    ids = _tasks(tmp_path / "tasks")[:pool]
    path = _config(tmp_path, ids, GUIDANCE, jobs=3, max_tasks=None, name="rayseq")  # readiness 3 tasks at a time
    cfg = yaml.safe_load(path.read_text())
    cfg["environment"] = {"backend": "ray", "settings": {"address": cluster.address, "isolation": "bubblewrap",
                                                          "nodes": {"a": {"jobs": 1}, "b": {"jobs": 1}}}}
    path.write_text(yaml.safe_dump(cfg))
    run = tmp_path / "rayseq"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))  # no other test's vanilla cache
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run), "--foreground"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    evs = events(run)
    records = [e["data"] for e in evs if e["type"] == "extension.recorded" and e["extension"] == "sequential"]
    assert len(records) == 1 and records[0]["decided_after"] == k
    assert [(g["metric"], g["decision"]) for g in records[0]["gates"]] == [("pass_rate", "success")]
    assert evs[-1]["type"] == "run.stopped" and evs[-1]["reason"].startswith(f"decided after {k} complete task")
    coded = {e["attempt_id"] for e in evs if e["type"] == "attempt.started"}
    assert len(coded) < 2 * pool, "nothing new starts after the decision: some planned attempts never ran"
    assert {e["node"] for e in evs if e["type"] == "agent.launched"} <= {"a", "b"}
    seq = json.loads((run / "report" / "results.json").read_text())["sequential"]
    assert seq["decided"] and seq["stopped_by_decision"] and seq["decided_after"] == k
