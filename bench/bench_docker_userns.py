"""What user-namespace remapping costs a docker sandbox: two engines side by side.

``--plain`` is an engine without remapping, ``--remapped`` one started with
``--userns-remap=default`` (tools/start-docker.sh; a second engine beside the machine's
own: ``PLUGINBENCH_DOCKER_ROOT=/var/lib/docker-b DOCKER_HOST=unix:///var/run/docker-b.sock
[PLUGINBENCH_DOCKER_USERNS=off] tools/start-docker.sh``, then tools/build-base-image.sh
with the same DOCKER_HOST). Both need the base image. Each round, interleaved so drift hits
both alike, times on each engine:

* ``bare``: ``docker run --rm --network none <base> true`` through the Docker CLI (the anchor);
* ``sandbox``: one sandbox of the docker backend (create, start, copy a small workspace in,
  base commit), ``exec true``, removal.

It prints per engine the median wall seconds of each, the sandbox/bare ratio, the
remapped/plain ratio of each, and the CPU seconds (user+sys) the engine's own processes
(dockerd, containerd, and the shims and runc they reaped) spent per round, read from
``/proc`` before and after (so use engines nothing else is using); the one-minute load
before and after. Run:

    .venv/bin/python bench/bench_docker_userns.py --plain unix:///var/run/docker-a.sock \\
        --remapped unix:///var/run/docker-b.sock [--rounds 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio

from pluginbench.environments import SandboxSpec
from pluginbench.environments._docker import DockerEnvironment
from pluginbench.environments._docker_images import BASE_IMAGE

_TICK = os.sysconf("SC_CLK_TCK")


def _engine_pids(host: str) -> list[int]:
    """dockerd listening on ``host`` and its containerd (by command line and parent)."""
    sock = host.removeprefix("unix://")
    stats: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        stats[int(entry.name)] = (ppid, " ".join(a.decode(errors="replace") for a in args))
    default = sock == "/var/run/docker.sock"
    daemons = [pid for pid, (_, cmd) in stats.items() if cmd.startswith("dockerd ")
               and ((f"unix://{sock}" in cmd) or (default and " -H " not in cmd and "--host" not in cmd))]
    if len(daemons) != 1:
        raise SystemExit(f"cannot tell which dockerd serves {host}: {daemons}")
    return daemons + [pid for pid, (ppid, cmd) in stats.items() if ppid == daemons[0] and cmd.startswith("containerd")]


def _cpu(pids: list[int]) -> float:
    """User+sys seconds of ``pids`` and of the children they reaped."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / _TICK


def _workspace(root: Path) -> Path:
    ws = root / "workspace"
    (ws / "src").mkdir(parents=True)
    for i in range(20):
        (ws / "src" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    return ws


def _bare(host: str) -> float:
    t = time.perf_counter()
    subprocess.run(["docker", "run", "--rm", "--network", "none", BASE_IMAGE, "true"], check=True,
                   env={**os.environ, "DOCKER_HOST": host}, capture_output=True, timeout=120)
    return time.perf_counter() - t


async def _sandbox(env: DockerEnvironment, spec: SandboxSpec) -> float:
    t = time.perf_counter()
    async with env.sandbox(spec) as sb:
        r = await sb.exec(["true"])
        assert r.exit_code == 0, r
    return time.perf_counter() - t


async def _image(env: DockerEnvironment) -> str:
    from pluginbench.environments._docker_engine import engine
    from pluginbench.environments._docker_images import image_id

    async with engine(env.docker_host) as docker:
        found = await image_id(docker, BASE_IMAGE)
    if found is None:
        raise SystemExit(f"{BASE_IMAGE} is not on {env.docker_host}: tools/build-base-image.sh with that DOCKER_HOST")
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plain", required=True, help="unix:// socket of an engine without remapping")
    ap.add_argument("--remapped", required=True, help="unix:// socket of an engine with --userns-remap")
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    engines = {"plain": args.plain, "remapped": args.remapped}
    envs = {k: DockerEnvironment(docker_host=h, allow_host_root=True) for k, h in engines.items()}
    namespaces = {k: anyio.run(e.info).user_namespace for k, e in envs.items()}
    if namespaces != {"plain": "none", "remapped": "userns"}:
        raise SystemExit(f"expected a plain and a remapped engine, got {namespaces}")
    pids = {k: _engine_pids(h) for k, h in engines.items()}
    load0 = os.getloadavg()[0]
    wall: dict[tuple[str, str], list[float]] = {(k, w): [] for k in engines for w in ("bare", "sandbox")}
    cpu: dict[tuple[str, str], float] = {(k, w): 0.0 for k in engines for w in ("bare", "sandbox")}
    with tempfile.TemporaryDirectory() as tmp:
        ws = _workspace(Path(tmp))
        specs = {k: SandboxSpec("bench", f"userns-{k}", "coding", "bench", workspace=ws, image=anyio.run(_image, e))
                 for k, e in envs.items()}
        for k in engines:  # warm-up, untimed
            _bare(engines[k])
            anyio.run(_sandbox, envs[k], specs[k])
        for i in range(args.rounds):
            order = list(engines) if i % 2 == 0 else list(reversed(engines))
            for k in order:
                c = _cpu(pids[k])
                wall[(k, "bare")].append(_bare(engines[k]))
                c2 = _cpu(pids[k])
                wall[(k, "sandbox")].append(anyio.run(_sandbox, envs[k], specs[k]))
                c3 = _cpu(pids[k])
                cpu[(k, "bare")] += c2 - c
                cpu[(k, "sandbox")] += c3 - c2
    load1 = os.getloadavg()[0]
    med = {key: statistics.median(v) for key, v in wall.items()}
    for k in engines:
        print(f"{k:9s} bare {med[(k, 'bare')]:.3f} s  sandbox {med[(k, 'sandbox')]:.3f} s  "
              f"sandbox/bare {med[(k, 'sandbox')] / med[(k, 'bare')]:.2f}  engine CPU per round: "
              f"bare {cpu[(k, 'bare')] / args.rounds:.3f} s, sandbox {cpu[(k, 'sandbox')] / args.rounds:.3f} s")
    for w in ("bare", "sandbox"):
        cpu_ratio = cpu[("remapped", w)] / cpu[("plain", w)] if cpu[("plain", w)] else float("nan")
        print(f"remapped/plain {w}: wall {med[('remapped', w)] / med[('plain', w)]:.2f}, engine CPU {cpu_ratio:.2f}")
    print(f"rounds {args.rounds}, load {load0:.2f} -> {load1:.2f}")


if __name__ == "__main__":
    main()
