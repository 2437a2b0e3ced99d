"""Calibration of the rate gate (a fixed threshold on a share of attempts, e.g.
``activation:skill:x`` rate >= 0.8): its false-pass rate when the true rate sits exactly on
the threshold, through the same pure ``rate_gate`` that ``compare`` runs.

Two worlds per setting: every attempt has the threshold's rate (iid), and heterogeneous
tasks whose rates differ but average exactly the threshold (a fixed task set, as compare
sees it; attempts independent given their task). Nominal is alpha = (1 − 0.90) / 2 = 0.05.
Both are computed exactly (the count's binomial / Poisson-binomial distribution, each count
decided by ``rate_decision``) and checked by a Monte-Carlo run of the whole ``rate_gate`` on
simulated packages. It also prints the power at a true rate 0.15 beyond the threshold.

    .venv/bin/python bench/bench_rate_gate.py [--seeds 500]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pluginbench.stats._gates import Gate  # noqa: E402
from pluginbench.stats._rate_gate import rate_decision, rate_gate  # noqa: E402
from pluginbench.stats._records import AttemptRecord, Package  # noqa: E402

METRIC = "activation:skill:x"
LEVEL = 0.90


def _rates(tasks: int, mean: float, hetero: bool, rng: random.Random) -> list[float]:
    if not hetero:
        return [mean] * tasks
    # Spread symmetric pairs around the mean, clipped to [0, 1] with the mean kept exact.
    spread = min(mean, 1 - mean)
    out = []
    for i in range(tasks // 2):
        d = spread * (i + 1) / (tasks // 2 + 1)
        out += [mean + d, mean - d]
    if tasks % 2:
        out.append(mean)
    rng.shuffle(out)
    return out


def _package(rates: list[float], repeats: int, rng: random.Random) -> Package:
    attempts = tuple(
        AttemptRecord(f"t{t}__c__r{r}", f"t{t}", "pass", {METRIC: float(rng.random() < p)})
        for t, p in enumerate(rates) for r in range(repeats))
    return Package("c", "run", attempts)


def false_pass(threshold: float, tasks: int, repeats: int, hetero: bool, seeds: int, shift: float = 0.0) -> float:
    rng = random.Random(f"{threshold}-{tasks}-{repeats}-{hetero}-{shift}")
    g = Gate(name="g", against="v", direction="higher", rate=METRIC, threshold=threshold)
    comp = Package("v", "run", ())
    names = [f"t{t}" for t in range(tasks)]
    passes = 0
    for _ in range(seeds):
        rates = _rates(tasks, min(threshold + shift, 1.0), hetero, rng)
        row = rate_gate(g, _package(rates, repeats, rng), comp, names, LEVEL)
        passes += row.status == "pass"
    return passes / seeds


def exact_pass(threshold: float, tasks: int, repeats: int, hetero: bool, shift: float = 0.0) -> float:
    """P(the gate passes), exactly: the count's distribution (a product of per-attempt Bernoullis) times
    ``rate_decision`` on each count."""
    rates = sorted(_rates(tasks, min(threshold + shift, 1.0), hetero, random.Random(0)))
    dist = [1.0]
    for p in (p for p in rates for _ in range(repeats)):
        nxt = [0.0] * (len(dist) + 1)
        for k, w in enumerate(dist):
            nxt[k] += w * (1 - p)
            nxt[k + 1] += w * p
        dist = nxt
    n = len(dist) - 1
    return sum(w for k, w in enumerate(dist) if rate_decision(k, n, threshold, "higher", LEVEL)[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=500)
    args = ap.parse_args()
    print("rate gate false-pass rate with the true rate on the threshold (nominal <= 0.05), exact;")
    print(f"MC: the whole rate_gate on {args.seeds} simulated heterogeneous packages per cell")
    print(f"{'threshold':>9} {'tasks':>5} {'repeats':>7} {'iid':>7} {'hetero':>7} {'MC hetero':>9} {'power +0.15':>11}")
    worst = 0.0
    for threshold in (0.5, 0.8, 0.9):
        for tasks in (5, 10, 20):
            for repeats in (1, 3):
                iid = exact_pass(threshold, tasks, repeats, False)
                het = exact_pass(threshold, tasks, repeats, True)
                mc = false_pass(threshold, tasks, repeats, True, args.seeds)
                power = exact_pass(threshold, tasks, repeats, False, shift=0.15) if threshold < 0.9 else float("nan")
                worst = max(worst, iid, het)
                print(f"{threshold:>9} {tasks:>5} {repeats:>7} {iid:>7.4f} {het:>7.4f} {mc:>9.4f} {power:>11.3f}")
    print(f"largest exact false-pass rate: {worst:.4f} (nominal 0.05)")


if __name__ == "__main__":
    main()
