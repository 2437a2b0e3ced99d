"""The ray backend's overhead and recovery on a real local cluster (issue 15). Prints; asserts nothing.

    .venv/bin/python bench/bench_ray.py [--attempts 60]

1. ``--attempts`` nop attempts (the quickstart's two tasks × vanilla and two arms) on the local
   backend, on the ray backend with one worker node, and with two worker nodes; each
   with ``jobs`` 2 per node. Printed: coding wall time (``coding.started`` to the last
   ``attempt.completed``, from the log's own timestamps) and seconds per attempt. This
   machine has 2 cores, so the number to read is the scheduling overhead per attempt
   over the local backend, not a speedup.
2. Worker loss: an oracle task that sleeps 8 s, jobs 1 per node on two nodes; kill -9 of
   node b's raylet as soon as an attempt launched there. Printed: seconds from the kill
   to its ``attempt.discarded`` (the recode decision) and to the replacement's
   ``agent.launched``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.ray.cluster import local_cluster  # noqa: E402
from tests.ray.runs import cli, config, events, slow_task, wait_for  # noqa: E402
from tests.runs_helpers import QUICKSTART  # noqa: E402


def _at(event: dict) -> float:
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()


def coding_seconds(run: Path) -> float:
    evs = events(run)
    start = next(_at(e) for e in evs if e["type"] == "coding.started")
    end = max(_at(e) for e in evs if e["type"] == "attempt.completed")
    return end - start


def nop_run(tmp: Path, address: str | None, attempts: int, label: str) -> float:
    run = tmp / label
    guidance = [str(QUICKSTART / "guidance" / "testing-discipline.md")]
    arms = {"g1": {"guidance": guidance}, "g2": {"guidance": guidance}}  # 3 arms × 2 tasks × repeats
    cfg = config(tmp / f"cfg-{label}", address=address, harness="nop", treatments=arms, jobs=2,
                 repeats=attempts // 6)
    cli("run", str(cfg), "--output", str(run), "--foreground", timeout=3600)
    return coding_seconds(run)


def loss_to_recode(tmp: Path, cluster) -> tuple[float, float]:
    source = tmp / "tasks"
    slow_task(source, "slow", 8)
    cfg = config(tmp / "cfg-loss", address=cluster.address, harness="oracle", treatments={}, jobs=1, repeats=3,
                 tasks={"source": str(source), "ids": ["slow"]})
    run = tmp / "loss"
    cli("run", str(cfg), "--output", str(run))
    on_b = wait_for("a launch on node b", lambda: [e for e in events(run)
                                                 if e["type"] == "agent.launched" and e.get("node") == "b"], 600)
    killed_at = time.time()
    cluster.kill_worker("b")
    lost = on_b[0]["attempt_id"]
    discarded = wait_for("the discard", lambda: [e for e in events(run)
                                                if e["type"] == "attempt.discarded" and e["attempt_id"] == lost], 600)[0]
    relaunch = wait_for("the replacement's launch", lambda: [e for e in events(run) if e["type"] == "agent.launched"
                                                            and e["attempt_id"] == discarded["replaced_by"]], 600)[0]
    wait_for("the run to end", lambda: json.loads(cli("status", str(run), "--json").stdout)["phase"]
             in ("complete", "failed", "stopped"), 600)
    return _at(discarded) - killed_at, _at(relaunch) - killed_at


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=60, help="6 to 60, a multiple of 6 (3 arms x 2 tasks x repeats)")
    args = ap.parse_args()
    if not (6 <= args.attempts <= 60 and args.attempts % 6 == 0):
        ap.error(f"--attempts must be a multiple of 6 from 6 to 60 (3 arms x 2 tasks x 1-10 repeats), got {args.attempts}")
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as scratch:  # runs, configs and caches go with it
        tmp = Path(scratch)
        rows = [("local backend (jobs 2)", nop_run(tmp, None, args.attempts, "local"))]
        with local_cluster(("a",)) as one:
            rows.append(("ray, 1 worker node (jobs 2)", nop_run(tmp, one.address, args.attempts, "ray1")))
        with local_cluster(("a", "b")) as two:
            rows.append(("ray, 2 worker nodes (jobs 2 each)", nop_run(tmp, two.address, args.attempts, "ray2")))
            to_discard, to_relaunch = loss_to_recode(tmp, two)
        base = rows[0][1]
        print(f"{args.attempts} nop attempts (coding phase, from the log's timestamps)")
        print(f"{'where':<36} {'seconds':>8} {'s/attempt':>10} {'overhead s/attempt vs local':>28}")
        for label, seconds in rows:
            print(f"{label:<36} {seconds:8.1f} {seconds / args.attempts:10.3f} {(seconds - base) / args.attempts:28.3f}")
        print()
        print("worker node lost (kill -9 of its raylet) mid-attempt")
        print(f"  seconds to attempt.discarded (recode decided): {to_discard:.2f}")
        print(f"  seconds to the replacement's agent.launched:   {to_relaunch:.2f}")


if __name__ == "__main__":
    main()
