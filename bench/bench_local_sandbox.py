"""Local sandbox lifecycle and per-command cost. Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_local_sandbox.py [--n 50] [--execs 40] [--tree PATH]

For each isolation mode (bubblewrap when usable, none) it times N sandboxes through
create (copy + base commit) -> exec(true) -> stop -> export_workspace -> close, and
prints the median and p95 of the whole cycle and of each phase, in milliseconds (create
also in CPU time), and the
ratio of the cycle to its anchor measured in the same rounds: a bare ``true`` process
(``bwrap --ro-bind / / --unshare-all true`` for the bubblewrap modes), with the load.
``bubblewrap+egress`` is the same with a probe egress policy (the host proxy thread and
the in-sandbox forwarder every command starts behind: what a coding sandbox pays).

Per command (the bubblewrap modes): in one sandbox, ``--execs`` times ``exec(["true"])``
interleaved with its anchor, ``bwrap <the very options that exec passes> -- true`` run
bare from the host, and prints per command the median wall time and the CPU time
(user+sys of this process and of every process under it, the sandbox's included: the
bench adopts bubblewrap's orphaned sandbox init as a child subreaper and reaps it), and
both as ratios to the anchor. As root, also the per-sandbox cost of the mount namespace a
sandbox run as its own uid gets (made and let go, against ``true``). ``--tree PATH`` measures the pluginbench of another
checkout (say ``main`` in a second worktree) with this same bench, for a before/after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

_TREE = sys.argv[sys.argv.index("--tree") + 1] if "--tree" in sys.argv[:-1] else None
sys.path.insert(0, str(Path(_TREE).resolve() if _TREE else Path(__file__).resolve().parents[1]))

from pluginbench.environments import LocalEnvironment, SandboxSpec, bwrap_available  # noqa: E402

PHASES = ("create", "exec", "stop", "export", "close", "total")


def _workspace(folder: Path) -> Path:
    for i in range(20):
        path = folder / f"pkg{i % 4}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{i}(x):\n    return x + {i}\n" * 20)
    return folder


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _cycle(
    env: LocalEnvironment, spec: SandboxSpec, scratch: Path, i: int
) -> dict[str, float]:
    t: dict[str, float] = {}
    cpu, start = _cpu(), time.perf_counter()
    cm = env.sandbox(spec._replace(attempt_id=f"a{i}"))
    sb = await cm.__aenter__()
    try:
        t["create"] = time.perf_counter() - start
        t["create_cpu"] = _cpu() - cpu  # this process and its waited-for children (git, the uid's mount namespace)
        mark = time.perf_counter()
        result = await sb.exec(["true"])
        assert result.exit_code == 0, result
        t["exec"] = time.perf_counter() - mark
        mark = time.perf_counter()
        await sb.stop()
        t["stop"] = time.perf_counter() - mark
        mark = time.perf_counter()
        await sb.export_workspace(scratch / f"export-{i}")
        t["export"] = time.perf_counter() - mark
    finally:
        mark = time.perf_counter()
        await cm.__aexit__(None, None, None)
        t["close"] = time.perf_counter() - mark
    t["total"] = time.perf_counter() - start
    return t


async def _bench(mode: str, n: int) -> None:
    isolation, _, egress = mode.partition("+")
    with tempfile.TemporaryDirectory(prefix="pluginbench-bench-") as tmp:
        scratch = Path(tmp)
        spec = SandboxSpec(
            run_id="bench", attempt_id="a", role="coding", task="bench",
            workspace=_workspace(scratch / "ws"),
        )  # fmt: skip
        if egress:
            from pluginbench.environments import Egress

            spec = spec._replace(egress=Egress("probe", port=40009))  # nothing need answer: exec(true) never dials
        env = LocalEnvironment(isolation, root=scratch / "boxes")  # type: ignore[arg-type]
        await _cycle(env, spec, scratch, -1)  # warm-up (probe, page cache)
        bare_argv = ([shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"]
                     if isolation == "bubblewrap" else ["true"])
        load = os.getloadavg()[0]
        rows, bare = [], []
        for i in range(n):  # interleaved, so the load hits both alike
            rows.append(await _cycle(env, spec, scratch, i))
            mark = time.perf_counter()
            subprocess.run(bare_argv, check=True)
            bare.append(time.perf_counter() - mark)
    print(f"isolation={mode}  n={n}  (milliseconds)")
    for phase in PHASES:
        values = [r[phase] * 1000 for r in rows]
        print(f"  {phase:<7} median {statistics.median(values):8.1f}   p95 {_p95(values):8.1f}")
    cpus = [r["create_cpu"] * 1000 for r in rows]
    print(f"  create CPU (user+sys, children waited for) median {statistics.median(cpus):6.1f}   p95 {_p95(cpus):6.1f}")
    cycle, anchor = statistics.median(r["total"] for r in rows), statistics.median(bare)
    paired = statistics.median(r["total"] / b for r, b in zip(rows, bare, strict=True))
    print(f"  anchor  {' '.join(bare_argv[-1:] if isolation != 'bubblewrap' else ['bwrap', 'true'])}: median "
          f"{anchor * 1000:.1f}; cycle/anchor {cycle / anchor:.1f} (median paired {paired:.1f}); "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")


def _subreaper() -> bool:
    """Adopt orphaned descendants (bubblewrap's sandbox init outlives bwrap), so their CPU
    time reaches RUSAGE_CHILDREN once :func:`_reap` has waited for them."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap(limit: float = 2.0) -> None:
    """Wait for every child left (only between measured calls: nothing else is running)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.002)


def _cpu() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _anchor_argv(sb: object, fds: list[int]) -> list[str]:
    """``bwrap`` with the options ``exec`` passes (/etc copies and seccomp included) and ``true``."""
    from pluginbench.environments import _seccomp

    cwd = sb.paths.app  # type: ignore[attr-defined]
    # As bwrap run bare by root: host paths, no user namespace (not as the sandbox's own uid, see _local_binds).
    binds, uid = getattr(sb, "_binds", None), getattr(sb, "uid", None)
    sb._binds, sb.uid = None, None  # type: ignore[attr-defined]
    try:
        try:
            from pluginbench.environments._local_launch import bwrap_options
        except ImportError:  # an older checkout: the options were a sandbox method
            options = sb._bwrap_prefix(cwd, fds)  # type: ignore[attr-defined]
        else:
            options = bwrap_options(sb, cwd, fds)  # type: ignore[arg-type]
    finally:
        sb._binds, sb.uid = binds, uid  # type: ignore[attr-defined]
    if _seccomp.supported():
        fd = os.memfd_create("bench-seccomp")
        os.write(fd, _seccomp.program_bytes())
        os.lseek(fd, 0, os.SEEK_SET)
        fds.append(fd)
        options += ["--seccomp", str(fd)]
    return [sb._bwrap, *options, "--", "true"]  # type: ignore[attr-defined]


async def _bench_exec(mode: str, n: int) -> None:
    _, _, egress = mode.partition("+")
    with tempfile.TemporaryDirectory(prefix="pluginbench-bench-") as tmp:
        scratch = Path(tmp)
        spec = SandboxSpec(
            run_id="bench", attempt_id="x", role="coding", task="bench",
            workspace=_workspace(scratch / "ws"),
        )  # fmt: skip
        if egress:
            from pluginbench.environments import Egress

            spec = spec._replace(egress=Egress("probe", port=40009))
        env = LocalEnvironment("bubblewrap", root=scratch / "boxes")
        async with env.sandbox(spec) as sb:
            await sb.exec(["true"])  # warm-up (layout read, page cache)
            load = os.getloadavg()[0]
            walls: dict[str, list[float]] = {"exec": [], "anchor": []}
            cpus: dict[str, float] = {"exec": 0.0, "anchor": 0.0}
            for _ in range(n):
                _reap()
                cpu, mark = _cpu(), time.perf_counter()
                result = await sb.exec(["true"])
                assert result.exit_code == 0, result
                walls["exec"].append(time.perf_counter() - mark)
                _reap()
                cpus["exec"] += _cpu() - cpu
                fds: list[int] = []
                argv = _anchor_argv(sb, fds)
                cpu, mark = _cpu(), time.perf_counter()
                subprocess.run(argv, check=True, cwd=str(sb.root), pass_fds=fds, env={"PATH": os.defpath})
                walls["anchor"].append(time.perf_counter() - mark)
                for fd in fds:
                    os.close(fd)
                _reap()
                cpus["anchor"] += _cpu() - cpu
    wall = {k: statistics.median(v) * 1000 for k, v in walls.items()}
    cpu_ms = {k: v / n * 1000 for k, v in cpus.items()}
    paired = statistics.median(e / a for e, a in zip(walls["exec"], walls["anchor"], strict=True))
    print(f"per command, isolation={mode}  n={n}  (milliseconds; CPU = user+sys, sandbox included)")
    print(f"  exec(true)            wall median {wall['exec']:7.1f}   CPU {cpu_ms['exec']:6.1f}")
    print(f"  bwrap same args true  wall median {wall['anchor']:7.1f}   CPU {cpu_ms['anchor']:6.1f}")
    print(f"  exec/anchor: wall {wall['exec'] / wall['anchor']:.2f} (median paired {paired:.2f}), "
          f"CPU {cpu_ms['exec'] / cpu_ms['anchor']:.2f}; load {load:.1f} -> {os.getloadavg()[0]:.1f}")


def _bench_uid_namespace(n: int) -> None:
    """As root: the mount namespace a sandbox run as its own uid gets at its start (see
    ``_local_binds``), made and let go ``n`` times, interleaved with the anchor ``true``."""
    try:
        from pluginbench.environments._local_binds import BindNamespace
    except ImportError:
        print("uid mount namespace: not in this checkout (sandboxes run as host root)")
        return
    with tempfile.TemporaryDirectory(prefix="pluginbench-bench-") as tmp:
        tool = Path(tmp) / "tool"
        tool.mkdir()
        load = os.getloadavg()[0]
        walls: dict[str, list[float]] = {"ns": [], "anchor": []}
        cpus: dict[str, float] = {"ns": 0.0, "anchor": 0.0}
        for i in range(n):
            box = Path(tmp) / f"box{i}"
            box.mkdir()
            cpu, mark = _cpu(), time.perf_counter()
            BindNamespace.create(box, [str(tool)], []).close()
            walls["ns"].append(time.perf_counter() - mark)
            cpus["ns"] += _cpu() - cpu
            cpu, mark = _cpu(), time.perf_counter()
            subprocess.run(["true"], check=True)
            walls["anchor"].append(time.perf_counter() - mark)
            cpus["anchor"] += _cpu() - cpu
    wall = {k: statistics.median(v) * 1000 for k, v in walls.items()}
    cpu_ms = {k: v / n * 1000 for k, v in cpus.items()}
    print(f"uid mount namespace per sandbox (one tool folder)  n={n}  (milliseconds; CPU = user+sys)")
    print(f"  made and let go       wall median {wall['ns']:7.1f}   CPU {cpu_ms['ns']:6.1f}")
    print(f"  anchor true           wall median {wall['anchor']:7.1f}   CPU {cpu_ms['anchor']:6.1f}")
    print(f"  ratio: wall {wall['ns'] / wall['anchor']:.1f}, CPU {cpu_ms['ns'] / cpu_ms['anchor']:.1f}; "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="sandbox cycles per mode (0: none)")
    parser.add_argument("--execs", type=int, default=40, help="commands per bubblewrap mode (0: none)")
    parser.add_argument("--tree", help="the checkout whose pluginbench is measured (default: this one)")
    args = parser.parse_args()
    modes = ["bubblewrap", "bubblewrap+egress", "none"] if bwrap_available() else ["none"]
    print(f"pluginbench from {sys.path[0]}")
    if "bubblewrap" not in modes:
        print("bubblewrap: unavailable here (not measured)")
    if args.execs and "bubblewrap" in modes:
        if not _subreaper():
            print("(no child subreaper here: the sandbox side's CPU is not counted)")
        for mode in ("bubblewrap", "bubblewrap+egress"):
            anyio.run(_bench_exec, mode, args.execs)
        if os.geteuid() == 0:
            _bench_uid_namespace(args.execs)
    for mode in modes if args.n else []:
        anyio.run(_bench, mode, args.n)


if __name__ == "__main__":
    main()
