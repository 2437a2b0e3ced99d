"""Per-attempt container overhead of the docker backend beside a bare ``docker run --rm``.

One attempt cycle is what the engine does around an agent: create and start a container
from the base image, copy a small workspace in and make its base commit, ``exec true``,
``docker stop`` (confirmed), export the working tree, remove the container. The bare
baseline is ``docker run --rm <same image> true`` through the Docker CLI. Both run
``--rounds`` times (default 10), interleaved so drift hits both alike; the script prints
each phase's median, both medians, their ratio (target: <= 1.5), the median of the
per-round (paired) ratios and the one-minute load before and after.

``--mode egress`` gives the sandbox a probe egress policy (the host proxy and the
in-container forwarder a coding sandbox pays for); ``--mode prestarted`` times what
grading pays when the container was pre-started while the agent coded (``prestart``,
untimed, first; the timed cycle takes it), against the same bare ``docker run``.

Needs a running engine (tools/start-docker.sh), the base image
(tools/build-base-image.sh) and the ``docker`` CLI. Run:

    .venv/bin/python bench/bench_docker_overhead.py [--rounds 10] [--mode plain|egress|prestarted]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from pluginbench.environments import NO_EGRESS, Egress, SandboxSpec
from pluginbench.environments._docker import DockerEnvironment
from pluginbench.environments._docker_images import BASE_IMAGE

PHASES = ("create+start+copy-in+base", "exec true", "stop", "export", "remove")


def _workspace(root: Path) -> Path:
    ws = root / "workspace"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("bench\n")
    for i in range(20):
        (ws / "src" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    return ws


async def _cycle(env: DockerEnvironment, spec: SandboxSpec, out: Path, mode: str = "plain") -> dict[str, float]:
    times: dict[str, float] = {}
    if mode == "prestarted":
        assert await env.prestart(spec), "nothing was pre-started (check_capacity found no room)"
    t0 = time.perf_counter()
    async with env.sandbox(spec) as sb:
        t1 = time.perf_counter()
        r = await sb.exec(["true"])
        assert r.exit_code == 0, r
        t2 = time.perf_counter()
        await sb.stop()
        t3 = time.perf_counter()
        await sb.export_workspace(out)
        t4 = time.perf_counter()
    t5 = time.perf_counter()
    for name, (a, b) in zip(
        PHASES, ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5)), strict=True
    ):
        times[name] = b - a
    times["total"] = t5 - t0
    return times


def _bare(image: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(["docker", "run", "--rm", image, "true"], check=True, capture_output=True)
    return time.perf_counter() - t0


async def main(rounds: int, mode: str) -> int:
    env = DockerEnvironment()
    await env.check()
    await env.check_capacity(1, None, None)
    image_id = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Id}}", BASE_IMAGE],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    cycles: list[dict[str, float]] = []
    bare: list[float] = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        ws = _workspace(Path(tmp))
        _bare(image_id)  # warm both paths once, unmeasured
        await _cycle(
            env,
            SandboxSpec("bench", "warm", "coding", "bench", workspace=ws, image=image_id),
            Path(tmp) / "w",
        )
        egress = Egress("probe", port=40009) if mode == "egress" else NO_EGRESS  # exec(true) never dials
        for i in range(rounds):
            spec = SandboxSpec("bench", f"a{i}", "coding", "bench", workspace=ws, image=image_id, egress=egress)
            cycles.append(await _cycle(env, spec, Path(tmp) / f"export-{i}", mode))
            bare.append(await anyio.to_thread.run_sync(_bare, image_id))
    print(f"mode: {mode}   rounds: {rounds}   image: {BASE_IMAGE} ({image_id[:19]})")
    for name in (*PHASES, "total"):
        print(
            f"  attempt {name:<28} median {statistics.median(c[name] for c in cycles) * 1000:8.1f} ms"
        )
    cycle_median = statistics.median(c["total"] for c in cycles)
    bare_median = statistics.median(bare)
    print(f"  bare docker run --rm true           median {bare_median * 1000:8.1f} ms")
    paired = statistics.median(c["total"] / b for c, b in zip(cycles, bare, strict=True))
    print(f"ratio attempt/bare: {cycle_median / bare_median:.2f} (target <= 1.5); median paired ratio "
          f"{paired:.2f}; load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--mode", choices=("plain", "egress", "prestarted"), default="plain")
    args = parser.parse_args()
    sys.exit(anyio.run(main, args.rounds, args.mode, backend="asyncio"))
