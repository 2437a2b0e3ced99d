"""Statistics for paired arm comparisons: pure functions, no I/O.

* :func:`wilson_interval` — Wilson score interval for a pass rate (``None`` for 0 trials).
* :func:`exact_sign_test` — two-sided exact sign test over task-level differences.
* :func:`paired_bootstrap` — mean over tasks with a seeded percentile-bootstrap interval
  (10,000 draws, seed 0, 90%, linear interpolation; fewer than 6 tasks → ``too_few_tasks``).
* :func:`geometric_mean_ratio` — the same in log space for token ratios.
* :func:`median`, :func:`percentile`.
* :func:`parse_gates` — the gates file of ``compare``; :func:`compare_packages` — splits,
  measure and gate tables, paired sections and the exit status (``_compare.py``).
"""

from ..errors import CompareRefused
from ._bootstrap import (
    DRAWS,
    LEVEL,
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
from ._cost import Cost, ModelPrice, Prices, attempt_cost, parse_prices, total_cost
from ._gate_eval import FAILED, PASSED, UNDETERMINED, GateResult, TaskValue
from ._gates import METRICS, STATISTICS, Gate, GatesFile, parse_gates
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
from ._records import AttemptRecord, Package, correctness

__all__ = [
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
    "Cost",
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
