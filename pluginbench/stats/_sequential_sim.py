"""Simulated sequential runs: what a decision is expected to cost before anything is paid. Pure.

One simulated experiment draws each task's vanilla pass probability from Beta(2, 2) (the
spread :func:`._power.assumed_sd` assumes), the treatment's as that plus the assumed effect
(clipped to [0, 1]), each arm's repeats as binomial draws, and feeds the per-task
differences, one task at a time, to the fold the run decides with (:class:`._betting.BatchFold`
— all simulated runs of one effect fold together as one batch, each its own row) at the
pass-rate gate's share of the run's error (:func:`._sequential.gate_alpha`, the run's
treatments × gated metrics), and asks :func:`._sequential.gate_decision` after every task
from ``min_tasks``, as :func:`._sequential.sequential_state` does (a test checks the two give
the same ending, run by run). It stops where the run would: when decided, else at
``max_tasks`` (or the pool). Seeded: the same arguments give the same numbers.
"""

import math
from collections.abc import Sequence
from typing import Any

import msgspec

from ._betting import BatchFold
from ._sequential import PASS_RATE, StoppingRule, gate_alpha, gate_decision

#: The assumed effects the plan shows (pass-rate fractions).
PLAN_EFFECTS = (0.0, 0.05, 0.10, 0.20)
#: 200 runs per effect: the mean tasks to a decision within about ±7% (95%) at a 300-task pool;
#: every row of the plan states its own Monte Carlo error (``mean_tasks_error``)
PLAN_SIMULATIONS = 200
SIM_SEED = 20240


class Expected(msgspec.Struct, frozen=True, kw_only=True):
    """Simulated cost of a decision at one assumed effect."""

    effect: float
    simulations: int
    mean_tasks: float
    mean_attempts: float
    #: share of simulated runs ending in each decision, and undecided at the cap
    success: float
    failure: float
    futility: float
    undecided: float
    #: the Monte Carlo error of ``mean_tasks``: half the width of its 95% normal interval
    mean_tasks_error: float = 0.0


def simulated_differences(repeats: int, effect: float, cap: int, simulations: int, seed: int) -> Any:
    """The per-task pass-rate differences (treatment − vanilla) of ``simulations`` runs of
    ``cap`` tasks each: a ``simulations × cap`` array, seeded by ``seed`` and ``effect``."""
    import numpy as np

    rng = np.random.default_rng([seed, round(effect * 1_000_000) + 1_000_000])
    p = rng.beta(2.0, 2.0, size=(simulations, cap))
    q = np.clip(p + effect, 0.0, 1.0)
    vanilla = rng.binomial(repeats, p) / repeats
    treated = rng.binomial(repeats, q) / repeats
    return treated - vanilla


def endings(rule: StoppingRule, differences: Any, treatments: int = 1) -> list[tuple[int, str]]:
    """Tasks used and the ending (``success``/``failure``/``futility``/``undecided``) of each
    simulated run (a row of ``differences``), its pass-rate gate folded as the run folds it."""
    import numpy as np

    diffs = np.asarray(differences, dtype=np.float64)
    runs, cap = diffs.shape
    xs = np.clip((diffs - -1.0) / 2.0, 0.0, 1.0)  # [-1, 1] onto [0, 1], as _sequential._bounded maps it
    fold = BatchFold(gate_alpha(rule, treatments), runs)
    live = np.arange(runs)
    out: list[tuple[int, str]] = [(cap, "undecided")] * runs
    for i in range(1, cap + 1):
        if live.size == 0:
            break
        fold = fold.push(xs[live, i - 1])
        if i < rule.min_tasks:
            continue
        lows = -1.0 + 2.0 * fold.lows()
        highs = np.maximum(lows, -1.0 + 2.0 * fold.highs())
        keep = np.ones(live.size, dtype=bool)
        for k, (row, lo, hi) in enumerate(zip(live.tolist(), lows.tolist(), highs.tolist(), strict=True)):
            decision = gate_decision(PASS_RATE, lo, hi, rule)
            if decision is not None:
                out[row] = (i, decision)
                keep[k] = False
        if not keep.all():
            live, fold = live[keep], fold.select(keep)
    return out


def expected(rule: StoppingRule, *, arms: int, repeats: int, pool: int, effect: float,
             simulations: int = PLAN_SIMULATIONS, seed: int = SIM_SEED) -> Expected:
    """The mean tasks and attempts (tasks × ``arms`` × ``repeats``) to a decision at ``effect``;
    ``arms`` counts vanilla, so the rule's family has ``arms − 1`` treatments."""
    cap = min(pool, rule.max_tasks) if rule.max_tasks is not None else pool
    ends = endings(rule, simulated_differences(repeats, effect, cap, simulations, seed), max(1, arms - 1))
    counts = {"success": 0, "failure": 0, "futility": 0, "undecided": 0}
    for _, end in ends:
        counts[end] += 1
    tasks = [n for n, _ in ends]
    mean = math.fsum(tasks) / simulations
    sd = math.sqrt(math.fsum((n - mean) ** 2 for n in tasks) / (simulations - 1)) if simulations > 1 else 0.0
    return Expected(effect=effect, simulations=simulations, mean_tasks=round(mean, 2),
                    mean_attempts=round(mean * arms * repeats, 1),
                    mean_tasks_error=round(1.96 * sd / math.sqrt(simulations), 2),
                    **{k: round(v / simulations, 4) for k, v in counts.items()})


def plan_expectations(rule: StoppingRule, *, arms: int, repeats: int, pool: int,
                      effects: Sequence[float] = PLAN_EFFECTS, simulations: int = PLAN_SIMULATIONS) -> list[Expected]:
    """:func:`expected` at each of the plan's assumed effects."""
    return [expected(rule, arms=arms, repeats=repeats, pool=pool, effect=e, simulations=simulations) for e in effects]
