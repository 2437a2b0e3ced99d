"""Simulated sequential runs: what a decision is expected to cost before anything is paid. Pure.

One simulated experiment draws each task's vanilla pass probability from Beta(2, 2) (the
spread :func:`._power.assumed_sd` assumes), the treatment's as that plus the assumed effect
(clipped to [0, 1]), each arm's repeats as Bernoulli draws, and feeds the per-task
differences to :func:`._sequential.sequential_state` (the pass-rate gate, the function the
run itself decides with). It stops where the run would: when decided, else at ``max_tasks``
(or the pool). Seeded: the same arguments give the same numbers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

from ._sequential import StoppingRule, TaskValues, sequential_state

#: The assumed effects the plan shows (pass-rate fractions).
PLAN_EFFECTS = (0.0, 0.05, 0.10, 0.20)
#: 100 runs: the mean tasks to a decision within about ±10 tasks (95%) at a 300-task pool, in
#: under 20 s there (the betting fold costs about 0.2 ms per task and run; 200 took twice that)
PLAN_SIMULATIONS = 100
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


def one_run(rule: StoppingRule, repeats: int, effect: float, pool: int, rng: random.Random) -> tuple[int, str]:
    """Tasks used and the ending (``success``/``failure``/``futility``/``undecided``) of one
    simulated run with one treatment."""
    cap = min(pool, rule.max_tasks) if rule.max_tasks is not None else pool
    rows = []
    for i in range(cap):
        p = rng.betavariate(2, 2)
        q = min(1.0, max(0.0, p + effect))
        v = sum(rng.random() < p for _ in range(repeats)) / repeats
        t = sum(rng.random() < q for _ in range(repeats)) / repeats
        rows.append(TaskValues(task=str(i), pass_rate={"t": t - v}, tokens={"t": None}))
    state = sequential_state(rule, ["t"], rows, until_decided=True)
    if state.decided and state.decided_after is not None:
        return state.decided_after, state.gates[0].decision or "undecided"
    return cap, "undecided"


def expected(rule: StoppingRule, *, arms: int, repeats: int, pool: int, effect: float,
             simulations: int = PLAN_SIMULATIONS, seed: int = SIM_SEED) -> Expected:
    """The mean tasks and attempts (tasks × ``arms`` × ``repeats``) to a decision at ``effect``."""
    rng = random.Random(f"{seed}:{effect!r}")
    ends = {"success": 0, "failure": 0, "futility": 0, "undecided": 0}
    tasks = 0
    for _ in range(simulations):
        n, end = one_run(rule, repeats, effect, pool, rng)
        tasks += n
        ends[end] += 1
    mean = tasks / simulations
    return Expected(effect=effect, simulations=simulations, mean_tasks=round(mean, 2),
                    mean_attempts=round(mean * arms * repeats, 1),
                    **{k: round(v / simulations, 4) for k, v in ends.items()})


def plan_expectations(rule: StoppingRule, *, arms: int, repeats: int, pool: int,
                      effects: Sequence[float] = PLAN_EFFECTS, simulations: int = PLAN_SIMULATIONS) -> list[Expected]:
    """:func:`expected` at each of the plan's assumed effects."""
    return [expected(rule, arms=arms, repeats=repeats, pool=pool, effect=e, simulations=simulations) for e in effects]
