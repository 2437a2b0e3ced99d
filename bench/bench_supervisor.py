"""The Supervisor's bookkeeping per event at any size (issue 27). Prints numbers; asserts nothing.

    .venv/bin/python bench/bench_supervisor.py [--sizes 100,1000,10000,100000] [--window 200]

For each run size N (attempts), a synthetic run is folded up to its last ``window``
attempts (events applied directly, O(1) each), then those last attempts are driven to the
end of the run through the Supervisor's real path: ``RunWriter.record`` (append to
``events.jsonl`` with fsync, fold, decide), ``settle`` (schedule, starts) and the SQLite
ledger update, with simulated actors answering each command at once (agent launched and
exited, submission captured, graded, measured; the source-only round; the report). The
number is CPU seconds per recorded event in that window (``time.process_time``; fsync
waits are not CPU), so the bookkeeping at size N is measured without driving N attempts.
``coding only`` leaves out the worker's start (a resume looks at every attempt once) and
the run's end (the source-only round and the report look at every attempt once): what each
attempt's events cost in the middle of a run of that size.

The anchor, measured in the same run: the CPU of appending the same number of events to a
bare log (encode, write, fsync), which the engine cannot avoid. ``ratio`` is bookkeeping
per event over that anchor; flat ratios across sizes mean constant work per event.

``--count`` also prints how many attempts ``RunState.live_attempts`` yielded per event
(the scans the issue measured: 41.7 million for 7,408 events at 10,000 attempts).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pluginbench.actors._decide import (  # noqa: E402
    BuildReport,
    Grade,
    GradeSourceOnly,
    Measure,
    Prepare,
    SelectSourceOnly,
    Start,
)
from pluginbench.actors._step import settle  # noqa: E402
from pluginbench.actors._writer import RunWriter  # noqa: E402
from pluginbench.events import (  # noqa: E402
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptGraded,
    AttemptStarted,
    CodingStarted,
    Event,
    EventLog,
    MeasuresCollected,
    ReportBuilt,
    RunCreated,
    RunStarted,
    SlotPlan,
    SourceOnlyGraded,
    SourceOnlySelected,
    SubmissionCaptured,
    Usage,
    encode,
    stamp,
)
from pluginbench.plan import attempt_id  # noqa: E402
from pluginbench.projections import Ledger, RunState  # noqa: E402

USAGE = Usage(status="exact", input_tokens=10, output_tokens=2, total_tokens=12)
ARMS = ("vanilla", "core", "full")


def created(n_attempts: int, jobs: int) -> RunCreated:
    """A plan of ``n_attempts`` slots: tasks × 3 arms × 7 repeats (the issue's 142,857 attempts
    at 1,000,000 events are 7 events an attempt)."""
    repeats = 7
    n_tasks = max(1, -(-n_attempts // (len(ARMS) * repeats)))
    slots: list[SlotPlan] = []
    for t in range(n_tasks):
        for arm in ARMS:
            for r in range(1, repeats + 1):
                if len(slots) < n_attempts:
                    slots.append(SlotPlan(slot=len(slots), task=f"t{t}", arm=arm, repeat=r,
                                          attempt_id=attempt_id(f"t{t}", arm, r)))
    return RunCreated(
        name="bench", evaluation_sha256="0" * 64, harness="nop", model="nop", reasoning=None, backend="local",
        isolation="none", tasks=[f"t{t}" for t in range(n_tasks)], arms=list(ARMS), repeats=repeats,
        jobs=jobs, seed=0, timeout_seconds=60, slots=slots,
    )


def coded(slot: SlotPlan, reward: float | None) -> list[Event]:
    """One attempt's events from start to completion, as a run records them."""
    aid = slot.attempt_id
    return [
        AttemptStarted(attempt_id=aid, slot=slot.slot, task=slot.task, arm=slot.arm, repeat=slot.repeat),
        AgentLaunched(attempt_id=aid, argv=["nop"]),
        AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE),
        SubmissionCaptured(attempt_id=aid, patch_sha256="p" * 64, empty=False, files_changed=1),
        AttemptGraded(attempt_id=aid, outcome="pass" if reward else "unknown", reward=reward,
                      reason=None if reward else "bench"),
        MeasuresCollected(attempt_id=aid, measures={}),
        AttemptCompleted(attempt_id=aid),
    ]


def answers(command: object) -> list[Event]:
    """What a simulated actor sends back for ``command``, at once."""
    match command:
        case Prepare():
            return [CodingStarted()]
        case Start(attempt_id=aid):
            return [
                AgentLaunched(attempt_id=aid, argv=["nop"]),
                AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE),
                SubmissionCaptured(attempt_id=aid, patch_sha256="p" * 64, empty=False, files_changed=1),
            ]
        case Grade(attempt_id=aid):
            return [AttemptGraded(attempt_id=aid, outcome="pass", reward=1.0)]
        case Measure(attempt_id=aid):
            return [MeasuresCollected(attempt_id=aid, measures={})]
        case GradeSourceOnly(attempt_id=aid):
            from pluginbench.measures import FILTER_REVISION

            return [SourceOnlyGraded(attempt_id=aid, filter=FILTER_REVISION, status="graded", reward=1.0)]
        case SelectSourceOnly():
            from pluginbench.measures import FILTER_REVISION

            return [SourceOnlySelected(filter=FILTER_REVISION, index="i.json", index_sha256="0" * 64, grades=1)]
        case BuildReport():
            return [ReportBuilt(path="report/report.html")]
    return []


def fast_forward(plan: RunCreated, done: int) -> Iterator[Event]:
    """run.created, a worker's start, preparation, then ``done`` attempts coded to completion
    (with no reward, so the source-only round at the end covers only the driven ones)."""
    yield plan
    yield RunStarted(pid=1, pgid=1, resumed=False)
    yield CodingStarted()
    for slot in plan.slots[:done]:
        yield from coded(slot, None)


def drive(state: RunState, record: Callable[[Event], list[object]], first: Event,
          marks: list[float] | None = None) -> int:
    """Settle ``first`` and every answer to what follows, to the end of the run; returns the
    number of events reacted to. ``marks`` gets the CPU time after the first reaction and
    when every attempt is complete (the steady coding part lies between)."""
    inbox: deque[Event] = deque([first])
    n = 0
    while inbox and not state.finished:
        for command in settle(state, inbox.popleft(), record):  # type: ignore[arg-type]
            inbox.extend(answers(command))
        n += 1
        if marks is not None and (n == 1 or (len(marks) == 1 and state.all_complete)):
            marks.append(time.process_time())
    return n


def measure(n_attempts: int, window: int, jobs: int, count: bool) -> dict[str, float]:
    plan = created(n_attempts, jobs)
    window = min(window, n_attempts)
    with tempfile.TemporaryDirectory(prefix="pb-bench-sup-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        root = Path(tmp)
        log_path = root / "events.jsonl"
        state = RunState()
        with log_path.open("wb") as fh:
            for seq, event in enumerate(fast_forward(plan, n_attempts - window), start=1):
                stamped = stamp(event, seq=seq, at="2026-01-01T00:00:00Z")
                state.apply(stamped)
                fh.write(encode(stamped) + b"\n")
        log = EventLog(log_path)
        ledger = Ledger(root / "ledger.sqlite")
        writer = RunWriter(log, state, ledger)  # rebuilds the ledger from the fold (not timed)
        recorded = [0]
        scanned = [0]
        original = RunState.live_attempts

        def counting(self: RunState) -> Iterator[object]:
            for a in original(self):
                scanned[0] += 1
                yield a

        if count:
            RunState.live_attempts = counting  # type: ignore[method-assign,assignment]

        counts: list[int] = []
        marks: list[float] = []

        def record(event: Event) -> list[object]:
            recorded[0] += 1
            if len(counts) < len(marks):
                counts.append(recorded[0])
            return writer.record(event)  # type: ignore[return-value]

        try:
            cpu = time.process_time()
            wall = time.perf_counter()
            drive(state, record, RunStarted(pid=2, pgid=2, resumed=True), marks)
            cpu = time.process_time() - cpu
            wall = time.perf_counter() - wall
        finally:
            RunState.live_attempts = original  # type: ignore[method-assign]
        assert state.finished, "the synthetic run did not finish"
        # Anchor: the same number of bare appends (encode, write, fsync) to a log.
        anchor_path = root / "anchor.jsonl"
        fd = os.open(anchor_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sample = stamp(AttemptCompleted(attempt_id=plan.slots[0].attempt_id), seq=1, at="2026-01-01T00:00:00Z")
        anchor = time.process_time()
        for _ in range(recorded[0]):
            os.write(fd, encode(sample) + b"\n")
            os.fsync(fd)
        anchor = time.process_time() - anchor
        os.close(fd)
        ledger.close()
        log.close()
    steady = (marks[1] - marks[0]) / max(1, counts[1] - counts[0]) if len(counts) == 2 else float("nan")
    return {"events": recorded[0], "cpu_ms": 1000 * cpu / recorded[0], "wall_ms": 1000 * wall / recorded[0],
            "steady_ms": 1000 * steady,
            "anchor_ms": 1000 * anchor / recorded[0], "scanned": scanned[0] / recorded[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000,10000,100000", help="run sizes in attempts, comma-separated")
    ap.add_argument("--window", type=int, default=200, help="attempts driven through the Supervisor's path at the end")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--count", action="store_true", help="also count attempts live_attempts() yields per event")
    args = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} on {os.cpu_count()} cpus")
    print(f"{'attempts':>9} {'events':>7} {'cpu ms/event':>13} {'coding only':>12} {'wall ms/event':>14} "
          f"{'anchor ms':>10} {'ratio':>7}"
          + (f" {'scanned/event':>14}" if args.count else ""))
    for size in (int(s) for s in args.sizes.split(",")):
        r = measure(size, args.window, args.jobs, args.count)
        ratio = r["cpu_ms"] / r["anchor_ms"] if r["anchor_ms"] > 0 else float("nan")
        print(f"{size:>9} {r['events']:>7.0f} {r['cpu_ms']:>13.3f} {r['steady_ms']:>12.3f} {r['wall_ms']:>14.3f} "
              f"{r['anchor_ms']:>10.3f} {ratio:>7.1f}"
              + (f" {r['scanned']:>14.1f}" if args.count else ""), flush=True)


if __name__ == "__main__":
    main()
