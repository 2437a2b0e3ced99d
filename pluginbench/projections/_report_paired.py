"""The paired comparison of each treatment arm against vanilla, task by task.

Contract (product description, "Compare runs", paired section):

* Per task: the treatment's pass rate minus vanilla's (each arm's own repeats, empty
  patches count as failures), and the treatment's mean input + output tokens divided by
  vanilla's (each arm averages its own repeats first).
* Exclusions, separate for correctness and tokens, each with its reason: an arm with no
  attempts or with attempts that are not complete excludes the task from both; any
  unknown correctness excludes it from pass-rate statistics; any missing, negative or
  non-finite token total, or a mean that is not positive, excludes it from token statistics.
* Summary over usable tasks (equal weight), at the run's one ``statistics.confidence_level``:
  the mean pass-rate difference with the betting interval for a bounded mean (no symmetry
  assumed, ``stats.difference_interval``) and the one-sided sign-flip p-values at 0 that the
  better/worse verdict decides with; the geometric-mean token ratio (log scale) with the
  sign-flip permutation interval; an exact two-sided sign test as a secondary line. Fewer usable tasks than the level
  needs → ``too_few_tasks``, no interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from .. import stats
from ._report_data import io_tokens, num

Rows = Mapping[tuple[str, str], list[dict[str, Any]]]


def _both(task: str, arms: tuple[str, str], rows: Rows) -> str | None:
    """Why the task cannot be compared at all, or ``None``."""
    for arm in arms:
        rs = rows.get((task, arm), [])
        if not rs:
            return f"no attempts in {arm}"
        pending = [r["attempt_id"] for r in rs if r["state"] != "complete"]
        if pending:
            return f"missing attempts: {len(pending)} of {len(rs)} {arm} attempts are not complete ({', '.join(pending)})"
    return None


def _pass_fraction(rs: Sequence[Mapping[str, Any]]) -> Fraction | str:
    # overlap_pass is decided (reward 1, every listed test passed) but not a confirmed pass
    unknown = [r["attempt_id"] for r in rs if r["outcome"] not in ("pass", "overlap_pass", "fail", "empty")]
    if unknown:
        return f"unknown correctness ({', '.join(unknown)})"
    return Fraction(sum(1 for r in rs if r["outcome"] == "pass"), len(rs))


def _mean_tokens(arm: str, rs: Sequence[Mapping[str, Any]]) -> float | str:
    vals = []
    for r in rs:
        v, why = io_tokens(r)
        if v is None or not math.isfinite(v):
            return f"{arm} token total missing for {r['attempt_id']}: {why or 'non-finite'}"
        vals.append(v)
    mean = math.fsum(vals) / len(vals)
    if mean <= 0:
        return f"{arm} mean token total is not positive ({mean:g})"
    return mean


def _task_pair(task: str, base: str, arm: str, rows: Rows) -> dict[str, Any]:
    out: dict[str, Any] = {
        "pass_rate_difference": None,
        "pass_rate_excluded": None,
        "token_ratio": None,
        "tokens_excluded": None,
    }
    why = _both(task, (base, arm), rows)
    if why:
        out["pass_rate_excluded"] = out["tokens_excluded"] = why
        out["_sign"] = None
        return out
    fb, ft = _pass_fraction(rows[(task, base)]), _pass_fraction(rows[(task, arm)])
    if isinstance(fb, str) or isinstance(ft, str):
        parts = [f"{a}: {f}" for a, f in ((base, fb), (arm, ft)) if isinstance(f, str)]
        out["pass_rate_excluded"] = "; ".join(parts)
        out["_sign"] = None
    else:
        diff = ft - fb
        out["pass_rate_difference"] = float(diff)
        out["_sign"] = (diff > 0) - (diff < 0)
    mb, mt = _mean_tokens(base, rows[(task, base)]), _mean_tokens(arm, rows[(task, arm)])
    if isinstance(mb, str) or isinstance(mt, str):
        out["tokens_excluded"] = "; ".join(m for m in (mb, mt) if isinstance(m, str))
    else:
        ratio = mt / mb
        if math.isfinite(ratio) and ratio > 0:
            out["token_ratio"] = ratio
        else:
            out["tokens_excluded"] = f"token ratio is not a positive finite number ({ratio!r})"
    return out


def _interval(res: stats.Estimate, statistic: str, **extra: Any) -> dict[str, Any]:
    return {
        "statistic": statistic,
        "estimate": num(res.estimate),
        "low": num(res.low),
        "high": num(res.high),
        "tasks": res.tasks,
        "status": res.status,
        "level": res.level,
        "method": res.method,
        "exact": res.exact,
        "draws": None if res.exact else res.draws,
        "seed": res.seed,
        "min_tasks": res.min_tasks,
        **extra,
    }


def _pass_rate(res: stats.Estimate, sign: dict[str, Any]) -> dict[str, Any]:
    """``summary.pass_rate``: the bounded-mean interval, the sign test, and the sign-flip p at 0."""
    return _interval(res, "mean_pass_rate_difference", sign_test=sign, p_greater=num(res.p_greater),
                     p_less=num(res.p_less))


def paired_deltas(tasks: Sequence[str], arms: Sequence[str], rows: Rows, level: float = stats.LEVEL) -> dict[str, Any]:
    """``deltas`` of results.json: one entry per treatment arm (every arm after vanilla)."""
    base = arms[0]
    out: dict[str, Any] = {}
    for arm in arms[1:]:
        pairs = {t: _task_pair(t, base, arm, rows) for t in tasks}
        diffs = [
            p["pass_rate_difference"]
            for p in pairs.values()
            if p["pass_rate_difference"] is not None
        ]
        ratios = [p["token_ratio"] for p in pairs.values() if p["token_ratio"] is not None]
        signs = [p.pop("_sign") for p in pairs.values()]
        pos = sum(1 for s in signs if s == 1)
        neg = sum(1 for s in signs if s == -1)
        ties = sum(1 for s in signs if s == 0)
        sign = {
            "positives": pos,
            "negatives": neg,
            "ties": ties,
            "p": num(stats.exact_sign_test(pos, neg)) if diffs else None,
        }
        for p in pairs.values():
            p["pass_rate_difference"] = num(p["pass_rate_difference"])
            p["token_ratio"] = num(p["token_ratio"])
        out[arm] = {
            "against": base,
            "per_task": pairs,
            "summary": {
                "pass_rate": _pass_rate(stats.difference_interval(diffs, level), sign),
                "tokens": _interval(
                    stats.ratio_interval(ratios, level),
                    "geometric_mean_token_ratio",
                    basis="input_plus_output",
                ),
            },
            "excluded": {
                "pass_rate": [
                    {"task": t, "reason": p["pass_rate_excluded"]}
                    for t, p in pairs.items()
                    if p["pass_rate_excluded"]
                ],
                "tokens": [
                    {"task": t, "reason": p["tokens_excluded"]}
                    for t, p in pairs.items()
                    if p["tokens_excluded"]
                ],
            },
        }
    return out
