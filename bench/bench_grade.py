"""Grading one attempt on the local backend (bubblewrap): ``grade_patch`` alone, before/after (issue 27).

    .venv/bin/python bench/bench_grade.py [--rounds 7] [--n 5] [--before /tmp/before-checkout] [--after <checkout>]

Each round runs, for each tree (``--before``, then this one; the order alternates by
round), a child process with that tree first on ``PYTHONPATH`` that builds one fixture task
(40 source files, a patch that changes two and adds one, a ``test.sh`` that runs ``sh`` and
writes the reward), grades it once to warm the kept base repository, then grades it ``--n``
times. Before each timed grading the child calls the environment's ``prestart`` of the
attempt's verifier spec when the tree has one (what runs while the agent codes; its CPU is
counted apart). It prints per grading: wall and CPU (user+sys of the child and every
process it waited for) on the critical path (``grade_patch`` itself), the pre-start's CPU,
and the anchor measured in the same child: a bare ``bwrap --ro-bind / / --unshare-all true``.
The parent prints medians, ratios after/before, ratios to the anchor, and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_PATCH_FILES = 40


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _fixture(root: Path) -> tuple[Path, Path]:
    """A task folder and an applying patch."""
    task = root / "task"
    for sub in ("workspace/src", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    for i in range(_PATCH_FILES):
        (task / "workspace" / "src" / f"m{i}.py").write_text("".join(f"x{j} = {j}\n" for j in range(30)))
    (task / "task.toml").write_text('version = "1.0"\n[verifier]\ntimeout_sec = 60\n')
    (task / "instruction.md").write_text("Fix it.\n")
    (task / "tests" / "test.sh").write_text(
        '#!/bin/sh\nif [ -f src/new.py ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n')
    (task / "tests" / "test.sh").chmod(0o755)
    work = root / "edited"
    shutil.copytree(task / "workspace", work)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-C", str(work)]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *argv], check=True, capture_output=True)
    for i in (1, 2):
        (work / "src" / f"m{i}.py").write_text((work / "src" / f"m{i}.py").read_text() + "y = 1\n")
    (work / "src" / "new.py").write_text("z = 2\n")
    subprocess.run([*git, "add", "-A"], check=True)
    text = subprocess.run([*git, "diff", "--cached", "--binary"], check=True, capture_output=True, text=True).stdout
    (root / "model.patch").write_text(text)
    return task, root / "model.patch"


def child(n: int) -> None:
    import anyio

    from pluginbench.actors._pipeline import grade_patch, verifier_spec
    from pluginbench.environments import LocalEnvironment
    from pluginbench.tasks import load_task

    root = Path(tempfile.mkdtemp(prefix="pb-bench-grade-"))
    tempfile.tempdir = str(root)  # the kept base repository lives (and goes) with it
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "prestart_cpu": [], "anchor_wall": [], "anchor_cpu": []}
    bare = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"]

    async def main() -> None:
        task_dir, patch = _fixture(root)
        task = load_task(task_dir)
        env = LocalEnvironment("bubblewrap", root=root / "boxes")
        prestart = getattr(env, "prestart", None)
        for i in range(n + 1):
            aid = f"a{i}"
            c0 = _cpu()
            if prestart is not None:
                await prestart(verifier_spec("bench", aid, task, task.workspace_dir, ()))
            c1, t1 = _cpu(), time.perf_counter()
            grade = await grade_patch(environment=env, run_id="bench", attempt_id=aid, task=task,
                                      starting_source=task.workspace_dir, patch_path=patch, empty=False,
                                      out_dir=root / aid, hidden=())
            t2, c2 = time.perf_counter(), _cpu()
            assert grade.outcome == "pass", grade
            a0, ac0 = time.perf_counter(), _cpu()
            subprocess.run(bare, check=True)
            a1, ac1 = time.perf_counter(), _cpu()
            if i == 0:
                continue  # the warm-up builds the kept base repository
            out["wall"].append(t2 - t1)
            out["cpu"].append(c2 - c1)
            out["prestart_cpu"].append(c1 - c0)
            out["anchor_wall"].append(a1 - a0)
            out["anchor_cpu"].append(ac1 - ac0)

    try:
        anyio.run(main)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))


def _run(tree: Path, n: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, "--child", "--n", str(n)], env=env, capture_output=True,
                          text=True, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"the child for {tree} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path, help="measure this checkout as the after side instead of this tree")
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.n)
        return
    here = args.after or Path(__file__).resolve().parents[1]
    sides = {"before": args.before, "after": here} if args.before else {"after": here}
    got: dict[str, dict[str, list[float]]] = {k: {} for k in sides}
    load0 = os.getloadavg()[0]
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for side in order:
            for key, values in _run(sides[side], args.n).items():
                got[side].setdefault(key, []).extend(values)
    load1 = os.getloadavg()[0]
    med = {s: {k: statistics.median(v) * 1000 for k, v in d.items()} for s, d in got.items()}
    print(f"grade_patch on the local backend (bubblewrap), {args.rounds} rounds x {args.n} gradings per side; "
          f"load {load0:.2f} -> {load1:.2f} (uptime: {os.cpu_count()} cores)")
    for s, m in med.items():
        print(f"  {s:6}  wall {m['wall']:6.1f} ms  CPU {m['cpu']:6.1f} ms (critical path)  "
              f"pre-start CPU {m['prestart_cpu']:6.1f} ms  anchor bwrap true wall {m['anchor_wall']:5.1f} ms  "
              f"-> wall {m['wall'] / m['anchor_wall']:.1f}x anchor, CPU {m['cpu'] / m['anchor_cpu']:.1f}x anchor")
    if "before" in med:
        b, a = med["before"], med["after"]
        print(f"  after/before: wall {a['wall'] / b['wall']:.2f}, critical-path CPU {a['cpu'] / b['cpu']:.2f}, "
              f"total CPU (with pre-start) {(a['cpu'] + a['prestart_cpu']) / (b['cpu'] + b['prestart_cpu']):.2f}")


if __name__ == "__main__":
    main()
