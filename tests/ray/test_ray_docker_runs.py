"""Whole evaluations on Ray worker nodes with docker sandboxes: each worker node has its
own real Docker Engine, the head prepares and freezes the task images, and the run gives
the same results.json as the docker backend on one machine (same seed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from .node_engines import NodeEngine, node_engines
from .runs import assert_no_duplicates_none_lost, cli, config, events, results_without_backend
from .test_ray_docker import base_id  # noqa: F401 - the module fixture (requires the base image)

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def engines(base_id: str) -> Iterator[dict[str, NodeEngine]]:  # noqa: F811
    with node_engines(("a", "b")) as started:
        yield started


def _with_backend(path: Path, environment: dict[str, object]) -> Path:
    cfg = yaml.safe_load(path.read_text())
    cfg["environment"] = environment
    path.write_text(yaml.safe_dump(cfg))
    return path


#: nop submits nothing, the simulated agent's candidates (seed 3) pass or submit nothing (asserted); the oracle's solution on Ray
#: is graded by the kill and join tests (test_ray_faults, test_ray_join, and the head-kill test below)
@pytest.mark.parametrize("harness", ["nop", "simulated"])
def test_whole_evaluation_matches_the_docker_backend(cluster, engines, base_id, tmp_path: Path,  # noqa: F811
                                                     harness: str) -> None:
    """The same evaluation and seed give the same results.json with docker sandboxes on two Ray worker nodes as on
    the docker backend; both nodes coded, each from the frozen image loaded into its own engine."""
    local, ray = tmp_path / "docker", tmp_path / "ray"
    cli("run", str(_with_backend(config(tmp_path / "d", address=None, harness=harness), {"backend": "docker"})),
        "--output", str(local), "--foreground")
    settings = {"address": cluster.address, "sandbox": "docker",
                "nodes": {name: {"docker_host": e.host} for name, e in engines.items()}}
    cli("run", str(_with_backend(config(tmp_path / "r", address=cluster.address, harness=harness),
                                 {"backend": "ray", "settings": settings})),
        "--output", str(ray), "--foreground")
    expected = results_without_backend(local)
    assert results_without_backend(ray) == expected
    if harness == "simulated":  # the grades compared include passes (what the oracle case gave) and empties
        assert {a["outcome"] for a in expected["attempts"]} == {"pass", "empty"}
    evs = events(ray)
    assert next(e for e in evs if e["type"] == "run.created")["isolation"] == "ray-docker"
    frozen = {e["task"]: e["image"] for e in evs if e["type"] == "task.prepared"}
    assert frozen and all(img.startswith("sha256:") for img in frozen.values())
    assert {e["node"] for e in evs if e["type"] == "agent.launched"} == {"a", "b"}
    for name, engine in engines.items():
        assert set(frozen.values()) <= engine.image_ids(), f"node {name}'s own engine should hold the frozen images"
        assert engine.docker("ps", "-aq").stdout.strip() == "", f"containers left on node {name}"
    st = assert_no_duplicates_none_lost(ray)
    assert {a["node"] for a in st["attempts"]} == {"a", "b"}


def test_head_killed_then_resumed_stops_containers_left_on_nodes(cluster, engines, tmp_path: Path) -> None:  # noqa: F811
    """kill -9 of the head while a docker sandbox codes on a node: its container is left running on that node's
    engine; the resume stops it there, removes the run's exited and never-started containers on its node,
    recodes the launched attempt, and ends complete with none lost or twice."""
    import json
    import os
    import signal

    from .runs import slow_task, status, wait_for

    source = tmp_path / "tasks"
    slow_task(source, "slow", 8)
    cfg = config(tmp_path, address=cluster.address, harness="oracle", treatments={}, jobs=1, repeats=2,
                 tasks={"source": str(source), "ids": ["slow"]})
    settings = {"address": cluster.address, "sandbox": "docker",
                "nodes": {name: {"docker_host": e.host} for name, e in engines.items()}}
    run = tmp_path / "run"
    cli("run", str(_with_backend(cfg, {"backend": "ray", "settings": settings})), "--output", str(run))
    launched = wait_for("an agent launch", lambda: [e for e in events(run) if e["type"] == "agent.launched"], 600)
    node = engines[launched[0]["node"]]

    attempt = launched[0]["attempt_id"]

    def running() -> list[str]:
        return node.docker("ps", "-q", "--filter", f"label=pluginbench.attempt={attempt}").stdout.split()

    assert running(), "the attempt's container should run on its node's engine"
    os.kill(json.loads((run / "run.lock").read_text())["pid"], signal.SIGKILL)
    wait_for("the head to be gone", lambda: not status(run)["active"], 60)
    assert running(), "a killed head leaves the node's container running"
    labels = node.docker("inspect", "-f", '{{index .Config.Labels "pluginbench.run"}} {{.Config.Image}}',
                         running()[0]).stdout.split()
    left = []
    for state in ("created", "exited"):  # what earlier kills left stopped: one never started, one exited
        made = node.docker("create", "--label", "pluginbench.owner=pluginbench", "--label", f"pluginbench.run={labels[0]}",
                           "--label", f"pluginbench.attempt=left-{state}", labels[1], "true").stdout.strip()
        assert made, f"could not create a {state} container on the node"
        if state == "exited":
            node.docker("start", "-a", made)
        left.append(made)
    cli("run", str(run), "--foreground")
    for made in left:
        assert node.docker("ps", "-aq", "--filter", f"id={made}").stdout.strip() == "", \
            "the resume should have removed a container the killed head left stopped"
    st = assert_no_duplicates_none_lost(run)
    assert st["discarded"] and all(a["outcome"] == "pass" for a in st["attempts"])
    assert running() == [], "the resume should have stopped the killed head's container on its node"
    for engine in engines.values():
        assert engine.docker("ps", "-q", "--filter", "label=pluginbench.owner=pluginbench").stdout.strip() == ""
