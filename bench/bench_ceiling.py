"""Time of one cost-ceiling check (``within_ceiling``) on a folded run of N finished attempts.

The Supervisor asks it before every start when ``cost_ceiling`` is set, so its time per
call is loop time per started attempt. Prints N, the median of 20 calls, and the run total
(N calls) in seconds. Usage: ``.venv/bin/python bench/bench_ceiling.py [N ...]``.
"""

from __future__ import annotations

import statistics
import sys
import time

from pluginbench.actors._ceiling import within_ceiling
from pluginbench.events import (
    AgentExited,
    AttemptStarted,
    CodingStarted,
    RunCreated,
    SlotPlan,
    Usage,
)
from pluginbench.projections._state import RunState
from pluginbench.stats._cost import parse_prices

PRICES = parse_prices({"as_of": "2026-11-01", "models": {"m": {
    "input_per_million": 3.0, "cached_input_per_million": 0.3, "output_per_million": 15.0}}}, "prices.json")


def state_of(n: int) -> RunState:
    slots = [SlotPlan(slot=i, task=f"t{i % 100}", arm="vanilla", repeat=i // 100 + 1, attempt_id=f"a{i}") for i in range(n)]
    s = RunState()
    created = RunCreated(name="b", evaluation_sha256="x", harness="claude", model="m", reasoning=None, backend="local",
                         isolation="none", tasks=[f"t{i}" for i in range(100)], arms=["vanilla"], repeats=n // 100,
                         jobs=2, seed=0, timeout_seconds=60, slots=slots, cost_ceiling=1e9, max_tokens_per_attempt=10**6)
    seq = 0
    for e in [created, CodingStarted()]:
        seq += 1
        s.apply(e.__class__(**{**{f: getattr(e, f) for f in e.__struct_fields__ if f not in ("seq", "at")}, "seq": seq, "at": "t"}))
    usage = Usage(status="exact", input_tokens=50_000, cached_input_tokens=40_000, output_tokens=3_000)
    for i in range(n - 1):
        seq += 1
        s.apply(AttemptStarted(attempt_id=f"a{i}", slot=i, task=f"t{i % 100}", arm="vanilla", repeat=i // 100 + 1, seq=seq, at="t"))
        seq += 1
        s.apply(AgentExited(attempt_id=f"a{i}", exit_code=0, timed_out=False, coding_seconds=1.0, usage=usage, error=None, seq=seq, at="t"))
    return s


def main(sizes: list[int]) -> None:
    print(f"{'attempts':>9} {'median s/check':>15} {'run total s':>12}")
    for n in sizes:
        s = state_of(n)
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            check = within_ceiling(s, PRICES, None, 1)
            times.append(time.perf_counter() - t0)
        assert check.allowed == 1
        med = statistics.median(times)
        print(f"{n:>9} {med:>15.5f} {med * n:>12.1f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000, 10000])
