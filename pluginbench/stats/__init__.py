"""Statistics for paired arm comparisons: pure functions, no I/O.

* :func:`wilson_interval` — Wilson score interval for a pass rate (``None`` for 0 trials).
* :func:`exact_sign_test` — two-sided exact sign test over task-level differences.
* :func:`mean_interval` / :func:`ratio_interval` — the one decision method: mean over tasks
  (geometric mean for ratios) with the sign-flip permutation interval at one level
  (``_decide``, ``_permutation``: exact up to 2^20 sign patterns, seeded Monte Carlo above).
* :func:`difference_interval` — the pass-rate difference shown: its mean with the betting
  interval for a bounded mean (no symmetry assumed) and the sign-flip p at 0 that decides.
* :func:`bound_decision` — a bound gate's rule (margin / factor, direction) as that test.
* :func:`plan` — power before spending (``_power``): MDE and tasks needed.
* :func:`paired_bootstrap` / :func:`geometric_mean_ratio` — the previous percentile
  bootstrap, kept only so ``bench/bench_aa_gates.py`` can show its A/A error beside the new one.
* :func:`median`, :func:`percentile`.
* :func:`sequential_state` — sequential stopping (``_sequential``): anytime-valid (hedged betting)
  confidence sequences per gate, folded a task at a time (:class:`BettingFold`) and the decision; :func:`plan_expectations` — its simulated cost.
* :func:`parse_gates` — the gates file of ``compare``; :func:`compare_packages` — splits,
  measure and gate tables, paired sections and the exit status (``_compare.py``).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy
from ..errors import CompareRefused

if TYPE_CHECKING:
    from ._betting import BettingFold
    from ._bootstrap import (
        DRAWS,
        MIN_TASKS,
        NO_TASKS,
        OK,
        SEED,
        TOO_FEW_TASKS,
        BootstrapResult,
        geometric_mean_ratio,
        paired_bootstrap,
        percentile,
    )
    from ._calibrate import DEFAULT_SEEDS, Calibration, calibrate
    from ._compare import (
        ALL,
        EXIT_BAD_INPUT,
        EXIT_FAIL,
        EXIT_PASS,
        EXIT_UNDETERMINED,
        CompareResult,
        MeasureRow,
        SplitResult,
        compare_packages,
    )
    from ._cost import (
        COST_PER_PASS_DEFINITION,
        COST_RATIO_DEFINITION,
        Cost,
        ModelPrice,
        Prices,
        attempt_cost,
        cost_per_pass,
        cost_ratio,
        parse_prices,
        total_cost,
    )
    from ._cost_gate import cost_gate
    from ._decide import (
        LEVEL,
        Estimate,
        alpha_of,
        difference_interval,
        mean_interval,
        passes_lower,
        passes_upper,
        ratio_interval,
        ratio_of_means_interval,
    )
    from ._format import format_dollars, format_p, format_pp, format_rate, format_ratio
    from ._gate_eval import FAILED, PASSED, UNDETERMINED, GateResult, TaskValue, bound_decision
    from ._gates import COST_METRICS, METRICS, STATISTICS, Gate, GatesFile, parse_gates
    from ._identity import compare_identities, shown
    from ._intervals import (
        Z_95,
        Interval,
        exact_sign_test,
        median,
        newcombe_difference,
        wilson_interval,
    )
    from ._paired import PairedComparison, TaskPair, paired_comparison
    from ._permutation import SignFlip, lower_bound, min_tasks, sign_flip_test, upper_bound
    from ._power import (
        POWER,
        PowerPlan,
        assumed_sd,
        mde,
        plan,
        power_at,
        power_sentence,
        tasks_needed,
    )
    from ._price_table import (
        STALE_AFTER_DAYS,
        PriceChoice,
        age_warning,
        bundled_prices,
        choose_prices,
    )
    from ._records import DOLLARS, AttemptRecord, Package, correctness
    from ._sequential import (
        GateTrace,
        SequentialState,
        StoppingRule,
        TaskValues,
        bounded_sequence,
        confidence_sequence,
        family_size,
        gate_alpha,
        gate_decision,
        gate_metrics,
        sequential_method,
        sequential_state,
        task_order,
    )
    from ._sequential import to_builtins as sequential_to_builtins
    from ._sequential_sim import PLAN_EFFECTS, Expected, plan_expectations
    from ._verdict import (
        DECIDED,
        DOLLARS_RATIO,
        EQUIVALENCE_MARGIN,
        Verdict,
        dollars_summary,
        verdict_for,
        verdict_of_paired,
        verdicts,
    )

__all__ = [
    "BettingFold",
    "GateTrace",
    "SequentialState",
    "StoppingRule",
    "TaskValues",
    "bounded_sequence",
    "confidence_sequence",
    "family_size",
    "gate_alpha",
    "gate_metrics",
    "gate_decision",
    "sequential_state",
    "task_order",
    "sequential_method",
    "sequential_to_builtins",
    "PLAN_EFFECTS",
    "Expected",
    "plan_expectations",
    "verdict_of_paired",
    "DOLLARS_RATIO",
    "dollars_summary",
    "power_sentence",
    "DECIDED",
    "EQUIVALENCE_MARGIN",
    "Verdict",
    "verdict_for",
    "verdicts",
    "POWER",
    "Estimate",
    "SignFlip",
    "PowerPlan",
    "alpha_of",
    "difference_interval",
    "mean_interval",
    "passes_lower",
    "passes_upper",
    "ratio_interval",
    "ratio_of_means_interval",
    "format_dollars",
    "format_p",
    "format_pp",
    "format_rate",
    "format_ratio",
    "lower_bound",
    "min_tasks",
    "sign_flip_test",
    "upper_bound",
    "assumed_sd",
    "mde",
    "plan",
    "power_at",
    "tasks_needed",
    "bound_decision",
    "ALL",
    "DEFAULT_SEEDS",
    "DRAWS",
    "EXIT_BAD_INPUT",
    "EXIT_FAIL",
    "EXIT_PASS",
    "EXIT_UNDETERMINED",
    "FAILED",
    "LEVEL",
    "METRICS",
    "MIN_TASKS",
    "NO_TASKS",
    "OK",
    "PASSED",
    "SEED",
    "STATISTICS",
    "TOO_FEW_TASKS",
    "UNDETERMINED",
    "Z_95",
    "AttemptRecord",
    "BootstrapResult",
    "Calibration",
    "CompareRefused",
    "CompareResult",
    "COST_METRICS",
    "COST_PER_PASS_DEFINITION",
    "DOLLARS",
    "cost_gate",
    "COST_RATIO_DEFINITION",
    "Cost",
    "PriceChoice",
    "STALE_AFTER_DAYS",
    "age_warning",
    "bundled_prices",
    "choose_prices",
    "cost_per_pass",
    "cost_ratio",
    "Gate",
    "GateResult",
    "GatesFile",
    "Interval",
    "MeasureRow",
    "ModelPrice",
    "Package",
    "PairedComparison",
    "Prices",
    "SplitResult",
    "TaskPair",
    "TaskValue",
    "attempt_cost",
    "calibrate",
    "compare_identities",
    "compare_packages",
    "correctness",
    "exact_sign_test",
    "geometric_mean_ratio",
    "median",
    "newcombe_difference",
    "paired_bootstrap",
    "paired_comparison",
    "parse_gates",
    "parse_prices",
    "percentile",
    "shown",
    "total_cost",
    "wilson_interval",
]

__getattr__ = lazy(__name__, __file__)
