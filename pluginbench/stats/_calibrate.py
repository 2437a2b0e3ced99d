"""A/A calibration of a gates file: how often each gate passes a treatment it should not pass.

From a finished run's vanilla attempts, each seed builds two packages with identical
content: ``vanilla`` and the treatment :data:`AA_TREATMENT`, each drawing, on every task,
as many attempts as vanilla has there, with replacement, from that task's vanilla
attempts (``random.Random(seed)``; no model call). Every gate (with ``against`` set to
vanilla) is then decided by its own rule — the same function ``compare`` uses:

* a **bound gate** is a one-sided test at ``alpha = (1 − level) / 2``: its nominal error is
  alpha. A/A data has a true difference of 0, so each seed's per-task values are moved onto
  the gate's own limit — the least favourable truth under which passing is wrong: pass-rate
  differences ``x · (1 − |margin|) + margin``, which keeps them within ±1 (a non-inferiority
  gate with margin −5 pp sees a treatment that is exactly 5 pp worse; at margin 0 they are
  unchanged), token ratios ``× factor`` — and the gate's decision
  (:func:`bound_decision`, margin, direction and bound kind) is taken on them; a false
  positive is a seed where it passes;
* a **cost_ratio gate** is the same one-sided test on dollars: the treatment's dollars are
  multiplied by the gate's factor, and a false positive is a seed where it passes;
* a **count**, **metric** or **cost_per_pass gate** states no level (its tolerance or factor sets one): the
  observed rate is how often it fails a treatment identical to its comparator.

Each rate is over the seeds where the gate was determined, with its Monte Carlo 95% Wilson
interval; a rate exceeds nominal only when that interval lies wholly above it.
"""

import random

import msgspec

from ._cost_gate import cost_gate
from ._decide import alpha_of
from ._gate_eval import FAILED, PASSED, UNDETERMINED, bound_decision, count_gate, metric_gate
from ._gates import GatesFile
from ._intervals import wilson_interval
from ._paired import task_pair
from ._permutation import min_tasks
from ._records import DOLLARS, AttemptRecord, Package

AA_TREATMENT = "aa-treatment"
DEFAULT_SEEDS = 200


class GateCalibration(msgspec.Struct, frozen=True, kw_only=True):
    """One gate in one split over every seed."""

    split: str
    gate: str
    kind: str
    seeds: int
    determined: int
    undetermined: int
    false_positives: int
    false_positive_rate: float | None
    #: Monte Carlo 95% Wilson interval of the rate over the determined seeds.
    rate_low: float | None
    rate_high: float | None
    nominal: float | None
    exceeds_nominal: bool | None
    definition: str


class Calibration(msgspec.Struct, frozen=True, kw_only=True):
    """Every gate's calibration, and which gates' observed rate exceeds their nominal level."""

    run: str
    seeds: int
    tasks: int
    vanilla_attempts: int
    gates: list[GateCalibration]
    exceeding: list[str]


def aa_packages(vanilla: Package, seed: int) -> tuple[Package, Package]:
    """Two identical-content packages resampled from ``vanilla``'s attempts, task by task."""
    rng = random.Random(seed)
    rand = rng.random
    sides: tuple[list[AttemptRecord], list[AttemptRecord]] = ([], [])
    for task in sorted(vanilla.tasks()):
        rows = vanilla.on(task)
        n = len(rows)
        for side, label in zip(sides, ("a", "b"), strict=True):
            for k in range(n):
                src = rows[int(rand() * n)]
                side.append(src._replace(attempt_id=f"{src.attempt_id}~{label}{k}"))
    return (
        Package(vanilla.name, vanilla.run, tuple(sides[0]), prices=vanilla.prices),
        Package(AA_TREATMENT, vanilla.run, tuple(sides[1]), prices=vanilla.prices),
    )


DEFINITIONS = {
    "correctness_bound": "gate passes a treatment whose true pass-rate difference sits on its margin",
    "token_bound": "gate passes a treatment whose true token ratio sits on its factor",
    "count": "fails an identical treatment",
    "metric": "fails an identical treatment",
    "cost_ratio": "gate passes a treatment whose true dollars-per-attempt ratio sits on its factor",
    "cost_per_pass": "fails an identical treatment",
    "rate": ("not an A/A question: a fixed threshold on one package's rate is a one-sample exact binomial "
             "test (false pass <= alpha at the threshold; bench/bench_rate_gate.py), so every seed is undetermined"),
}


def _scaled_dollars(pkg: Package, factor: float) -> Package:
    """``pkg`` with every known dollar figure multiplied by ``factor`` (the gate's limit)."""
    rows = tuple(a._replace(metrics={**a.metrics, DOLLARS: None if a.metrics.get(DOLLARS) is None
                                     else (a.metrics[DOLLARS] or 0.0) * factor})
                 for a in pkg.attempts)
    return Package(pkg.name, pkg.run, rows, references=pkg.references, prices=pkg.prices)


def _bound_seed(kind: str, limit: float, level: float, tasks: list[str], a: Package, b: Package,
                overlap: bool) -> bool | None:
    """One seed of a bound gate: a false positive, or ``None`` when the gate is undetermined."""
    pairs = [task_pair(t, b, a, overlap) for t in tasks]
    if kind == "correctness_bound":
        if any(p.pass_rate_difference is None for p in pairs):
            return None
        shrink = 1.0 - abs(limit)  # onto the margin, still within [-1, 1] (a pass-rate difference's range)
        values = [p.pass_rate_difference * shrink + limit for p in pairs if p.pass_rate_difference is not None]
    else:
        if any(p.token_ratio is None for p in pairs):
            return None
        values = [p.token_ratio * limit for p in pairs if p.token_ratio is not None]
    if len(values) < min_tasks(alpha_of(level)):
        return None
    return bound_decision(kind, values, limit, level)[0]


def calibrate(vanilla: Package, gates: GatesFile, *, seeds: int = DEFAULT_SEEDS) -> Calibration:
    """A/A calibration of every gate in every split of ``gates``; see the module docstring."""
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    level = gates.confidence_level
    overlap = gates.count_overlap_passes
    all_tasks = sorted(vanilla.tasks())
    splits = [*((n, list(t)) for n, t in gates.splits.items()), ("all", all_tasks)]
    tallies: dict[tuple[str, str], list[int]] = {}  # determined, undetermined, false positives
    order = [(name, g.name) for name, _ in splits for g in gates.gates]
    for key in order:
        tallies[key] = [0, 0, 0]
    for seed in range(seeds):
        a, b = aa_packages(vanilla, seed)
        for split, tasks in splits:
            for g in gates.gates:
                g = msgspec.structs.replace(g, against=vanilla.name)
                if g.rate is not None:
                    fp = None
                elif g.bound is not None:
                    limit = (g.margin or 0.0) if g.kind == "correctness_bound" else (g.factor or 1.0)
                    fp = _bound_seed(g.kind, limit, level, tasks, a, b, overlap)
                elif g.cost == "cost_ratio":
                    res = cost_gate(g, _scaled_dollars(b, g.factor or 1.0), a, tasks, overlap, level)
                    fp = None if res.status == UNDETERMINED else res.status == PASSED
                else:
                    res = (count_gate(g, b, a, tasks, overlap) if g.correctness is not None
                           else cost_gate(g, b, a, tasks, overlap, level) if g.cost is not None
                           else metric_gate(g, b, a, tasks))
                    fp = None if res.status == UNDETERMINED else res.status == FAILED
                t = tallies[(split, g.name)]
                if fp is None:
                    t[1] += 1
                else:
                    t[0] += 1
                    t[2] += int(fp)
    kinds = {g.name: (g.cost if g.cost is not None else g.kind) for g in gates.gates}
    rows = []
    for split_name, gate in order:
        determined, undetermined, fps = tallies[(split_name, gate)]
        kind = kinds[gate]
        nominal = alpha_of(level) if kind.endswith("_bound") or kind == "cost_ratio" else None
        rate = fps / determined if determined else None
        w = wilson_interval(fps, determined) if determined else None
        rows.append(
            GateCalibration(
                split=split_name, gate=gate, kind=kind, seeds=seeds, determined=determined,
                undetermined=undetermined, false_positives=fps, false_positive_rate=rate,
                rate_low=w.low if w else None, rate_high=w.high if w else None,
                nominal=nominal,
                exceeds_nominal=None if (nominal is None or w is None) else w.low > nominal,
                definition=DEFINITIONS[kind],
            )
        )
    return Calibration(
        run=vanilla.run,
        seeds=seeds,
        tasks=len(all_tasks),
        vanilla_attempts=len(vanilla.attempts),
        gates=rows,
        exceeding=[f"{r.gate} ({r.split})" for r in rows if r.exceeds_nominal],
    )
