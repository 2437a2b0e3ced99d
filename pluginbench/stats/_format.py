"""Numbers for people: percentage points, ratios, p-values and dollars, never floating-point noise.

Pure formatting used by every view of a verdict (report, results summary lines, terminal,
dashboard), so the same number reads the same everywhere.
"""

from __future__ import annotations

import math


def format_pp(d: float | None, digits: int = 1) -> str:
    """A rate difference (fraction) as signed percentage points: ``+12.5 pp``; ``unknown`` for None."""
    if d is None or not math.isfinite(d):
        return "unknown"
    v = round(d * 100, digits)
    if v == 0:
        v = 0.0  # no "-0.0 pp"
    return f"{v:+.{digits}f} pp"


def format_rate(p: float | None, digits: int = 0) -> str:
    """A rate (fraction) as a percentage: ``67%``."""
    if p is None or not math.isfinite(p):
        return "unknown"
    return f"{p * 100:.{digits}f}%"


def format_ratio(r: float | None) -> str:
    """A ratio as ``×1.23``."""
    if r is None or not math.isfinite(r):
        return "unknown"
    return f"×{r:.2f}"


def format_p(p: float | None) -> str:
    """A p-value with two significant digits, floored at ``< 0.0001`` (no ``9.252e-18``)."""
    if p is None or not math.isfinite(p):
        return "unknown"
    if p < 0.0001:
        return "< 0.0001"
    if p >= 0.1:
        return f"{p:.2f}"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.4f}"


def format_dollars(d: float | None) -> str:
    """Dollars: cents above $1, four significant digits below; ``unknown`` for None."""
    if d is None or not math.isfinite(d):
        return "unknown"
    if abs(d) >= 1:
        return f"${d:,.2f}"
    return f"${d:.4g}" if d else "$0"
