"""Local sandbox lifecycle cost. Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_local_sandbox.py [--n 50]

For each isolation mode (bubblewrap when usable, none) it times N sandboxes through
create (copy + base commit) -> exec(true) -> stop -> export_workspace -> close, and
prints the median and p95 of the whole cycle and of each phase, in milliseconds, and the
ratio of the cycle to its anchor measured in the same rounds: a bare ``true`` process
(``bwrap --ro-bind / / --unshare-all true`` for the bubblewrap modes), with the load.
``bubblewrap+egress`` is the same with a probe egress policy (the host proxy thread and
the in-sandbox forwarder every command starts behind: what a coding sandbox pays).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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
    start = time.perf_counter()
    cm = env.sandbox(spec._replace(attempt_id=f"a{i}"))
    sb = await cm.__aenter__()
    try:
        t["create"] = time.perf_counter() - start
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
    cycle, anchor = statistics.median(r["total"] for r in rows), statistics.median(bare)
    paired = statistics.median(r["total"] / b for r, b in zip(rows, bare, strict=True))
    print(f"  anchor  {' '.join(bare_argv[-1:] if isolation != 'bubblewrap' else ['bwrap', 'true'])}: median "
          f"{anchor * 1000:.1f}; cycle/anchor {cycle / anchor:.1f} (median paired {paired:.1f}); "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    args = parser.parse_args()
    modes = ["bubblewrap", "bubblewrap+egress", "none"] if bwrap_available() else ["none"]
    if "bubblewrap" not in modes:
        print("bubblewrap: unavailable here (not measured)")
    for mode in modes:
        anyio.run(_bench, mode, args.n)


if __name__ == "__main__":
    main()
