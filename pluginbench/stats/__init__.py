"""Statistics for paired arm comparisons: pure functions, no I/O.

* :func:`wilson_interval` — Wilson score interval for a pass rate (``None`` for 0 trials).
* :func:`exact_sign_test` — two-sided exact sign test over task-level differences.
* :func:`paired_bootstrap` — mean over tasks with a seeded percentile-bootstrap interval
  (10,000 draws, seed 0, 90%, linear interpolation; fewer than 6 tasks → ``too_few_tasks``).
* :func:`geometric_mean_ratio` — the same in log space for token ratios.
* :func:`median`, :func:`percentile`.
"""

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
from ._intervals import Z_95, Interval, exact_sign_test, median, wilson_interval

__all__ = [
    "DRAWS",
    "LEVEL",
    "MIN_TASKS",
    "NO_TASKS",
    "OK",
    "SEED",
    "TOO_FEW_TASKS",
    "Z_95",
    "BootstrapResult",
    "Interval",
    "exact_sign_test",
    "geometric_mean_ratio",
    "median",
    "paired_bootstrap",
    "percentile",
    "wilson_interval",
]
