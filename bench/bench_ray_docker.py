"""Docker sandboxes on Ray worker nodes: image shipping and per-attempt overhead. Prints; asserts nothing.

    .venv/bin/python bench/bench_ray_docker.py [--attempts 24]

Needs root, ``dockerd`` and the base image: each worker node of the local cluster gets its
own Docker Engine (``tests/ray/node_engines.py``), so images really travel.

1. Export + load: the base task image (``pluginbench/base:bookworm``) is not on node a's
   engine; opening a sandbox there makes the head ``docker save`` it, hash and chunk it into
   Ray's object store, and node a write, check and ``docker load`` it. Then node b loads
   the same export (already made). Printed: bytes, export seconds, load seconds per node,
   and the first sandbox's open with and without the transfer.
2. ``--attempts`` nop attempts (the quickstart's two tasks × vanilla and two arms), jobs 2,
   on the docker backend and on ray with docker sandboxes on one worker node (its engine
   loaded during preparation, so the coding phase holds no transfer). Printed: coding wall
   time (``coding.started`` to the last ``attempt.completed``, the log's timestamps) and
   the overhead per attempt of docker-on-ray over docker locally.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_ray import coding_seconds  # noqa: E402
from tests.ray.cluster import local_cluster  # noqa: E402
from tests.ray.node_engines import node_engines  # noqa: E402
from tests.ray.runs import cli, config  # noqa: E402
from tests.runs_helpers import QUICKSTART  # noqa: E402


def _base_id() -> str:
    return subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", "pluginbench/base:bookworm"],
                          capture_output=True, text=True, check=True).stdout.strip()


def shipping(address: str, engines: dict, tmp: Path) -> list[tuple[str, float]]:
    from pluginbench.environments._ray import RayEnvironment
    from tests.environments.contract import EnvironmentContract, write_workspace

    env = RayEnvironment(address, jobs=2, root=str(tmp / "nodes"), sandbox="docker",
                         docker_hosts={n: e.host for n, e in engines.items()})
    env.connect()
    image = _base_id()
    spec = EnvironmentContract().make_spec
    ws = write_workspace(tmp / "ws")
    rows: list[tuple[str, float]] = []

    async def open_on(name: str, attempt: str) -> float:
        nodes = env.nodes()
        for n in nodes:  # fill the other nodes so the sandbox lands on ``name``
            env._busy[n.node_id] = 0 if n.name == name else n.jobs
        started = time.perf_counter()
        async with env.sandbox(spec(tmp, workspace=ws, attempt_id=attempt, image=image)):
            seconds = time.perf_counter() - started
        for n in nodes:
            env._busy[n.node_id] = 0
        return seconds

    async def main() -> None:
        rows.append(("open on node a, image loaded first (s)", await open_on("a", "s1")))
        rows.append(("open on node a, image already there (s)", await open_on("a", "s2")))
        rows.append(("open on node b, export reused, loaded (s)", await open_on("b", "s3")))

    anyio.run(main, backend="asyncio")
    for t in env.image_timings():
        rows.append((f"node {t['node']}: export on the head (s) [{t['bytes'] / 1e6:.0f} MB]", t["export_seconds"]))
        rows.append((f"node {t['node']}: transfer + hash + docker load (s)", t["load_seconds"]))
    return rows


def nop_run(tmp: Path, environment: dict, attempts: int, label: str) -> float:
    run = tmp / label
    guidance = [str(QUICKSTART / "guidance" / "testing-discipline.md")]
    arms = {"g1": {"guidance": guidance}, "g2": {"guidance": guidance}}
    path = config(tmp / f"cfg-{label}", address=None, harness="nop", treatments=arms, jobs=2, repeats=attempts // 6)
    cfg = yaml.safe_load(path.read_text())
    cfg["environment"] = environment
    path.write_text(yaml.safe_dump(cfg))
    cli("run", str(path), "--output", str(run), "--foreground", timeout=3600)
    return coding_seconds(run)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=24)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-raydocker-") as scratch:  # runs, configs and caches go with it
        tmp = Path(scratch)
        with node_engines(("a", "b")) as engines, local_cluster(("a", "b")) as cluster:
            ship = shipping(cluster.address, engines, tmp)
        local = nop_run(tmp, {"backend": "docker"}, args.attempts, "docker")
        with node_engines(("a",)) as engines, local_cluster(("a",)) as cluster:
            settings = {"address": cluster.address, "sandbox": "docker", "nodes": {"a": {"docker_host": engines["a"].host}}}
            ray = nop_run(tmp, {"backend": "ray", "settings": settings}, args.attempts, "ray")
        print("image shipping (base task image, head -> node's own Docker engine)")
        for label, seconds in ship:
            print(f"  {label:<58} {seconds:8.2f}")
        print()
        print(f"{args.attempts} nop attempts, jobs 2 (coding phase, from the log's timestamps)")
        print(f"  {'where':<40} {'seconds':>8} {'s/attempt':>10} {'overhead s/attempt':>19}")
        for label, seconds in (("docker backend (one machine)", local), ("ray, docker sandboxes, 1 node", ray)):
            print(f"  {label:<40} {seconds:8.1f} {seconds / args.attempts:10.3f} {(seconds - local) / args.attempts:19.3f}")


if __name__ == "__main__":
    main()
