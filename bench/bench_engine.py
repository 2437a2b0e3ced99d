"""Engine overhead per attempt, event append latency, folding 100,000 events, ``status --json`` (issue 2).

Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_engine.py [--attempts 200] [--isolation none|bubblewrap]

1. Engine overhead per attempt: a whole run with the ``nop`` harness and a trivial
   verifier (jobs 1) against the same attempts driven directly through the attempt
   pipeline (same sandboxes, same processes, no Supervisor, log, ledger or actors).
   The difference is what the engine adds beyond the processes it starts (target ≤ 50 ms).
2. Appending one event with fsync: median and p95 over 2,000 appends.
3. Rebuilding status from 100,000 events: fold time (target ≤ 1 s) and peak memory.
4. ``status --json`` on a 10,000-attempt run (target ≤ 0.3 s), from the ledger and from
   the log, whole process and in-process, wall and CPU time (``--status-only`` runs just
   this part).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import anyio
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pluginbench.actors import create_run, run_worker  # noqa: E402
from pluginbench.actors._pipeline import code_attempt, grade_patch  # noqa: E402
from pluginbench.config import load  # noqa: E402
from pluginbench.config._load import MAX_REPEATS  # noqa: E402
from pluginbench.environments import LocalEnvironment  # noqa: E402
from pluginbench.events import (  # noqa: E402
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptGraded,
    AttemptStarted,
    CodingStarted,
    EventLog,
    MeasuresCollected,
    RunCreated,
    RunStarted,
    RunStopping,
    SlotPlan,
    SubmissionCaptured,
    Usage,
    read_events,
)
from pluginbench.harnesses import FrozenTreatment, make_harness  # noqa: E402
from pluginbench.measures import count_lines  # noqa: E402
from pluginbench.projections import Ledger, fold  # noqa: E402
from pluginbench.status import status_snapshot  # noqa: E402
from pluginbench.tasks import load_task  # noqa: E402


def _trivial_tasks(root: Path, n: int) -> Path:
    source = root / "tasks"
    for i in range(n):
        t = source / f"t{i}"
        (t / "workspace").mkdir(parents=True)
        (t / "tests").mkdir()
        (t / "solution").mkdir()
        (t / "workspace" / "a.txt").write_text("a\n")
        (t / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 30\n')
        (t / "instruction.md").write_text("nothing\n")
        test = t / "tests" / "test.sh"
        test.write_text('#!/bin/sh\nmkdir -p "$LOGS_DIR/verifier"; if [ -f "$APP_DIR/b.txt" ]; then echo 1; else echo 0; fi > "$LOGS_DIR/verifier/reward.txt"\n')
        test.chmod(0o755)
        solve = t / "solution" / "solve.sh"
        solve.write_text('#!/bin/sh\necho b > "$APP_DIR/b.txt"\n')
        solve.chmod(0o755)
    return source


def _git_shim(root: Path) -> Path:
    """A ``git`` first on PATH that logs each call's arguments, then runs the real git."""
    real = shutil.which("git")
    assert real is not None, "git is not installed"
    shim = root / "shim"
    shim.mkdir()
    log = root / "git-calls.log"
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    (shim / "git").chmod(0o755)
    os.environ["PATH"] = f"{shim}{os.pathsep}{os.environ['PATH']}"
    return log


def _git_verb(line: str) -> str:
    words = line.split()
    return next((w for w in words if not w.startswith("-") and "=" not in w), "?")


def bench_overhead(attempts: int, isolation: str) -> None:
    with tempfile.TemporaryDirectory(prefix="pb-bench-") as tmp:
        root = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(root / "cache")
        git_log = _git_shim(root)
        # ``repeats`` is at most MAX_REPEATS: more attempts are more tasks.
        n_tasks = max(4, -(-attempts // MAX_REPEATS))
        source = _trivial_tasks(root, n_tasks)
        cfg = {
            "tasks": {"source": str(source), "ids": [f"t{i}" for i in range(n_tasks)]},
            "treatments": {},
            "runner": {"harness": "nop"},
            "repeats": max(1, attempts // n_tasks),
            "jobs": 1,
            "environment": {"isolation": isolation},
        }
        (root / "evaluation.yaml").write_text(yaml.safe_dump(cfg))
        rd = create_run(load(root / "evaluation.yaml"), root / "run")
        from pluginbench.actors._writer import RunWriter

        bookkeeping = [0.0, 0]
        original = RunWriter.record  # every event: append+fsync, step (fold, decide), ledger

        def timed_record(self: RunWriter, event: object) -> object:
            t = time.perf_counter()
            try:
                return original(self, event)  # type: ignore[arg-type]
            finally:
                bookkeeping[0] += time.perf_counter() - t
                bookkeeping[1] += 1

        RunWriter.record = timed_record  # type: ignore[method-assign,assignment]
        t0 = time.perf_counter()
        try:
            state = run_worker(rd.root, handle_signals=False)
        finally:
            RunWriter.record = original  # type: ignore[method-assign]
        engine_total = time.perf_counter() - t0
        assert state.finished
        run_git = git_log.read_text().splitlines() if git_log.exists() else []
        events = read_events(rd.events)
        coding_started = next(e for e in events if type(e).__name__ == "CodingStarted")
        first = events.index(coding_started)
        n = len(state.live)
        # Time from coding.started to the last attempt.completed, per attempt.
        import datetime as dt

        def ts(e: object) -> float:
            return dt.datetime.fromisoformat(e.at.replace("Z", "+00:00")).timestamp()  # type: ignore[attr-defined]

        last_done = max(ts(e) for e in events[first:] if type(e).__name__ == "AttemptCompleted")
        engine_per = (last_done - ts(coding_started)) / n

        env = LocalEnvironment(isolation=isolation)
        harness = make_harness("nop")
        vanilla = FrozenTreatment("vanilla", None, (), (), (), "0")
        task = load_task(source / "t0", "t0")

        async def direct() -> float:
            async def launched(argv: object) -> None:
                return None

            t = time.perf_counter()
            for i in range(n):
                out = root / "direct" / str(i)
                res = await code_attempt(
                    environment=env, harness=harness, run_id="b", attempt_id=f"a{i}", task=task,
                    starting_source=task.workspace_dir, treatment=vanilla, attempt_dir=out, model=None,
                    reasoning=None, seed=0, timeout=60, hidden=(), launched=launched,
                )
                assert res.patch is not None
                await grade_patch(
                    environment=env, run_id="b", attempt_id=f"a{i}", task=task, starting_source=task.workspace_dir,
                    patch_path=res.patch.path, empty=res.patch.empty, out_dir=out / "grading", hidden=(),
                )
                count_lines(res.patch.path.read_text())
            return (time.perf_counter() - t) / n

        direct_per = anyio.run(direct, backend="asyncio")
        print(f"[overhead] isolation={isolation} attempts={n} (nop, trivial verifier, jobs 1)")
        print(f"  whole run wall (incl. preparation + report): {engine_total:.2f} s")
        print(f"  engine, per attempt (coding.started -> last completion): {engine_per * 1000:.1f} ms")
        print(f"  direct pipeline, per attempt (same processes, no engine): {direct_per * 1000:.1f} ms")
        print(f"  engine minus direct: {(engine_per - direct_per) * 1000:.1f} ms per attempt "
              "(negative: the engine overlaps grading with the next attempt); "
              f"ratio engine/direct {engine_per / direct_per:.2f} (anchor: the direct pipeline, same run); "
              f"load {os.getloadavg()[0]:.1f}")
        print(f"  Supervisor bookkeeping (append+fsync, fold, ledger, decide): {bookkeeping[1]} events, "
              f"{bookkeeping[0] / n * 1000:.1f} ms per attempt (target <= 50 ms)")
        verbs = collections.Counter(_git_verb(line) for line in run_git)
        print(f"  git processes started by the whole run: {len(run_git) / n:.1f} per attempt ("
              + ", ".join(f"{v} {c / n:.1f}" for v, c in sorted(verbs.items())) + ")")


def bench_append(n: int = 2000) -> None:
    with tempfile.TemporaryDirectory(prefix="pb-bench-") as tmp:
        log = EventLog(Path(tmp) / "events.jsonl")
        times = []
        for i in range(n):
            t = time.perf_counter()
            log.append(RunStopping(reason=f"r{i}"))
            times.append(time.perf_counter() - t)
        log.close()
        times.sort()
        print(f"[append] {n} appends with fsync: median {statistics.median(times) * 1e3:.3f} ms, "
              f"p95 {times[int(n * 0.95)] * 1e3:.3f} ms")


def _synthetic_run(root: Path, attempts: int) -> Path:
    """A run directory whose log holds ``attempts`` complete attempts (~7 events each)."""
    (root / "evidence").mkdir(parents=True)
    (root / "evaluation.json").write_text("{}")
    (root / "evaluation-binding.json").write_text("{}")
    slots = [SlotPlan(slot=i, task=f"t{i % 100}", arm="vanilla" if i % 2 else "core", repeat=i // 200 + 1,
                      attempt_id=f"a{i}") for i in range(attempts)]
    usage = Usage(status="exact", input_tokens=1000, cached_input_tokens=100, uncached_input_tokens=900,
                  output_tokens=50, total_tokens=1050)
    clock = "2026-01-01T00:00:00.000Z"
    with open(root / "events.jsonl", "wb") as fh:
        from pluginbench.events import encode, stamp

        seq = 0

        def put(e: object) -> None:
            nonlocal seq
            seq += 1
            fh.write(encode(stamp(e, seq=seq, at=clock)) + b"\n")  # type: ignore[arg-type]

        put(RunCreated(name="bench", evaluation_sha256="0" * 64, harness="nop", model="nop", reasoning=None,
                       backend="local", isolation="none", tasks=[f"t{i}" for i in range(100)], arms=["vanilla", "core"],
                       repeats=1, jobs=2, seed=0, timeout_seconds=60, slots=slots))
        put(RunStarted(pid=1, pgid=1, resumed=False))
        put(CodingStarted())
        for s in slots:
            put(AttemptStarted(attempt_id=s.attempt_id, slot=s.slot, task=s.task, arm=s.arm, repeat=s.repeat))
            put(AgentLaunched(attempt_id=s.attempt_id, argv=["true"]))
            put(AgentExited(attempt_id=s.attempt_id, exit_code=0, timed_out=False, coding_seconds=1.0, usage=usage))
            put(SubmissionCaptured(attempt_id=s.attempt_id, patch_sha256="x", empty=False, files_changed=1))
            put(AttemptGraded(attempt_id=s.attempt_id, outcome="pass", reward=1.0))
            put(MeasuresCollected(attempt_id=s.attempt_id, measures={}))
            put(AttemptCompleted(attempt_id=s.attempt_id))
    return root


def bench_fold(events_target: int = 100_000) -> None:
    with tempfile.TemporaryDirectory(prefix="pb-bench-") as tmp:
        root = _synthetic_run(Path(tmp) / "run", events_target // 7)
        n_events = (root / "events.jsonl").read_bytes().count(b"\n")
        times = []
        for _ in range(3):
            t = time.perf_counter()
            state = fold(read_events(root / "events.jsonl"))
            times.append(time.perf_counter() - t)
        elapsed = statistics.median(times)
        assert state.all_complete
        tracemalloc.start()  # a separate pass: tracing slows the fold several times over
        fold(read_events(root / "events.jsonl"))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"[fold] {n_events} events read + folded in {elapsed:.3f} s (target <= 1 s); "
              f"peak traced memory {peak / 2**20:.1f} MiB")
        t = time.perf_counter()
        snap = status_snapshot(root)
        print(f"[fold] status_snapshot from the log ({snap['states_source']}): {time.perf_counter() - t:.3f} s")


def bench_status_json(attempts: int = 10_000, repeats: int = 5) -> None:
    with tempfile.TemporaryDirectory(prefix="pb-bench-") as tmp:
        root = _synthetic_run(Path(tmp) / "run", attempts)
        ledger = Ledger(root / "evidence" / "ledger.sqlite")
        ledger.rebuild(fold(read_events(root / "events.jsonl")))
        ledger.close()
        for label in ("ledger", "log"):
            if label == "log":
                (root / "evidence" / "ledger.sqlite").unlink()
            runs, cpus = [], []
            for _ in range(repeats):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                out = subprocess.run([sys.executable, "-m", "pluginbench", "status", str(root), "--json"],
                                     capture_output=True, text=True, check=True, cwd=REPO)
                runs.append(time.perf_counter() - t)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            snap = json.loads(out.stdout)
            walls, in_cpus = [], []
            for _ in range(repeats):
                t, c = time.perf_counter(), time.process_time()
                status_snapshot(root)
                walls.append(time.perf_counter() - t)
                in_cpus.append(time.process_time() - c)
            # CPU time is printed beside wall time: on a shared, loaded machine the wall
            # time mostly measures the queue for a core.
            print(f"[status --json] {attempts} attempts from the {label} ({snap['states_source']}): "
                  f"process median {statistics.median(runs):.3f} s wall, {statistics.median(cpus):.3f} s CPU "
                  f"(includes interpreter start); in-process median {statistics.median(walls):.3f} s wall, "
                  f"{statistics.median(in_cpus):.3f} s CPU (target <= 0.3 s); load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attempts", type=int, default=200)
    parser.add_argument("--isolation", default="bubblewrap", choices=["none", "bubblewrap"])
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--status-only", action="store_true", help="run only part 4 (status --json on 10,000 attempts)")
    parser.add_argument("--overhead-only", action="store_true", help="run only part 1 (engine overhead per attempt)")
    args = parser.parse_args()
    if args.overhead_only:
        bench_overhead(args.attempts, args.isolation)
        return
    if args.status_only:
        bench_status_json()
        return
    bench_append()
    bench_fold()
    bench_status_json()
    if not args.skip_overhead:
        bench_overhead(args.attempts, args.isolation)


if __name__ == "__main__":
    main()
