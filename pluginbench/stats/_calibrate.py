"""A/A calibration of a gates file: how often each gate is wrong when nothing differs.

From a finished run's vanilla attempts, each seed builds two packages with identical
content: ``vanilla`` and the treatment :data:`AA_TREATMENT`, each drawing, on every task,
as many attempts as vanilla has there, with replacement, from that task's vanilla
attempts (``random.Random(seed)``; no model call). Every gate (with ``against`` set to
vanilla) is then decided exactly as ``compare`` decides it. Over the seeds:

* a **bound gate**'s endpoint is a one-sided 95% bound, so its nominal error is 5%: the
  observed rate is how often the bound falsely excludes the true value (a lower bound of
  the pass-rate difference above 0; an upper bound of the token ratio below 1);
* a **count** or **metric gate** states no level (its tolerance or factor sets one): the
  observed rate is how often it fails a treatment identical to its comparator.

Each rate is over the seeds where the gate was determined; undetermined seeds are counted.
"""

from __future__ import annotations

import random

import msgspec

from ._compare import compare_packages
from ._gate_eval import FAILED, UNDETERMINED
from ._gates import GatesFile
from ._records import AttemptRecord, Package

AA_TREATMENT = "aa-treatment"
NOMINAL_BOUND = 0.05
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
        Package(vanilla.name, vanilla.run, tuple(sides[0])),
        Package(AA_TREATMENT, vanilla.run, tuple(sides[1])),
    )


def _false_positive(kind: str, gate_status: str, low: float | None, high: float | None) -> bool | None:
    """Whether one seed's decision is a false positive; ``None`` when undetermined."""
    if kind == "correctness_bound":
        return None if low is None else low > 0.0
    if kind == "token_bound":
        return None if high is None else high < 1.0
    return None if gate_status == UNDETERMINED else gate_status == FAILED


DEFINITIONS = {
    "correctness_bound": "lower 95% bound of the pass-rate difference is above 0",
    "token_bound": "upper 95% bound of the token ratio is below 1",
    "count": "fails an identical treatment",
    "metric": "fails an identical treatment",
}


def calibrate(vanilla: Package, gates: GatesFile, *, seeds: int = DEFAULT_SEEDS) -> Calibration:
    """A/A calibration of every gate in every split of ``gates``; see the module docstring."""
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    aa_gates = msgspec.structs.replace(
        gates, gates=[msgspec.structs.replace(g, against=vanilla.name) for g in gates.gates]
    )
    tallies: dict[tuple[str, str], list[int]] = {}  # determined, undetermined, false positives
    kinds = {g.name: g.kind for g in gates.gates}
    order: list[tuple[str, str]] = []
    for seed in range(seeds):
        a, b = aa_packages(vanilla, seed)
        result = compare_packages([a, b], aa_gates, {vanilla.run: None})
        for split in result.splits:
            paired = split.paired[0]
            for g in split.gates:
                key = (split.name, g.gate)
                if key not in tallies:
                    tallies[key] = [0, 0, 0]
                    order.append(key)
                iv = paired.pass_rate if kinds[g.gate] == "correctness_bound" else paired.tokens
                fp = _false_positive(kinds[g.gate], g.status, iv.low if iv.status == "ok" else None,
                                     iv.high if iv.status == "ok" else None)
                t = tallies[key]
                if fp is None:
                    t[1] += 1
                else:
                    t[0] += 1
                    t[2] += int(fp)
    rows = []
    for split_name, gate in order:
        determined, undetermined, fps = tallies[(split_name, gate)]
        kind = kinds[gate]
        nominal = NOMINAL_BOUND if kind.endswith("_bound") else None
        rate = fps / determined if determined else None
        rows.append(
            GateCalibration(
                split=split_name, gate=gate, kind=kind, seeds=seeds, determined=determined,
                undetermined=undetermined, false_positives=fps, false_positive_rate=rate,
                nominal=nominal,
                exceeds_nominal=None if (nominal is None or rate is None) else rate > nominal,
                definition=DEFINITIONS[kind],
            )
        )
    return Calibration(
        run=vanilla.run,
        seeds=seeds,
        tasks=len(vanilla.tasks()),
        vanilla_attempts=len(vanilla.attempts),
        gates=rows,
        exceeding=[f"{r.gate} ({r.split})" for r in rows if r.exceeds_nominal],
    )
