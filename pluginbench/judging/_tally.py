"""Unblinding and scoring (pure): correctness first, then the judges' majority.

* Exactly one side passed (``pass`` or ``overlap_pass``; unknown is not a pass): it wins
  without a vote.
* Otherwise the side more than half of the judges prefer wins; anything else (ties,
  splits) scores half to each side.
* Per judge: side-A rate over all pairs (ties add no A vote) with the position-bias rule,
  agreement against the other judges' strict majority, and token usage with unknowns.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..events import PASSING_OUTCOMES as PASSING

BIAS_MIN_PAIRS = 10
BIAS_BAND = (0.2, 0.8)
OPTIONAL_COUNTERS = ("cached_input_tokens", "reasoning_output_tokens")


class CallUsage(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded judge call's usage; ``None`` counts are unknown."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_output_tokens: int | None = None

    @property
    def known(self) -> bool:
        return self.input_tokens is not None and self.output_tokens is not None


def correctness_winner(outcome_a: str | None, outcome_b: str | None) -> str | None:
    """``A``/``B`` when exactly one side passed, else ``None`` (the judges decide)."""
    a, b = outcome_a in PASSING, outcome_b in PASSING
    return "A" if a and not b else "B" if b and not a else None


def majority(votes: Sequence[str], of: int) -> str | None:
    """The verdict more than half of ``of`` voters share, else ``None``."""
    if not votes:
        return None
    value, count = Counter(votes).most_common(1)[0]
    return value if count * 2 > of else None


def position_bias(rate: float | None, pairs: int) -> str:
    if pairs < BIAS_MIN_PAIRS or rate is None:
        return "too_small"
    return "within_band" if BIAS_BAND[0] <= rate <= BIAS_BAND[1] else "flagged"


def usage_summary(calls: Sequence[CallUsage]) -> dict[str, Any]:
    """``tokens`` (null when any call lacks input/output usage), ``known_tokens``, calls, unknown calls."""
    known = [c for c in calls if c.known]
    total = sum((c.input_tokens or 0) + (c.output_tokens or 0) for c in known)
    out: dict[str, Any] = {
        "tokens": total if calls and len(known) == len(calls) else None,
        "known_tokens": total if known else None,
        "calls": len(calls),
        "unknown_calls": len(calls) - len(known),
    }
    for counter in OPTIONAL_COUNTERS:
        values = [getattr(c, counter) for c in known]
        out[counter] = sum(values) if known and all(v is not None for v in values) else None
    return out


def tally(key: Mapping[str, Any], verdicts: Mapping[str, Mapping[str, str]],
          usage: Mapping[str, Sequence[CallUsage]]) -> dict[str, Any]:
    """The tally of every pair in ``key`` (verdicts: judge → pair → A/B/tie; complete, no ``unable``)."""
    judges = sorted(verdicts)
    labels = [key["sides"]["first"], key["sides"]["second"]]
    wins = {label: 0.0 for label in labels}
    per_task: dict[str, dict[str, Any]] = {}
    decided = judged = 0
    pairs_out = []
    for name, pair in sorted(key["pairs"].items(), key=lambda kv: int(kv[0].split("-")[1])):
        votes = {j: verdicts[j][name] for j in judges}
        winner = correctness_winner(pair["A"]["outcome"], pair["B"]["outcome"])
        by = "correctness"
        if winner is None:
            by, winner = "judges", majority(list(votes.values()), len(judges))
            winner = winner if winner in ("A", "B") else None
            judged += 1
        else:
            decided += 1
        score = {"A": 1.0, "B": 0.0} if winner == "A" else {"A": 0.0, "B": 1.0} if winner == "B" else {"A": 0.5, "B": 0.5}
        task = per_task.setdefault(pair["task"], {"pairs": 0, "wins": {label: 0.0 for label in labels}})
        task["pairs"] += 1
        for side in ("A", "B"):
            wins[pair[side]["label"]] += score[side]
            task["wins"][pair[side]["label"]] += score[side]
        pairs_out.append({"pair": name, "task": pair["task"], "repeat": pair["repeat"], "decided_by": by,
                          "winner": pair[winner]["label"] if winner else None, "votes": votes})
    n = len(key["pairs"])
    stats: dict[str, Any] = {}
    for j in judges:
        a_votes = sum(1 for v in verdicts[j].values() if v == "A")
        rate = a_votes / n if n else None
        eligible = agree = 0
        for name in key["pairs"]:
            others = [verdicts[o][name] for o in judges if o != j]
            m = majority(others, len(others))
            if m is not None:
                eligible += 1
                agree += verdicts[j][name] == m
        stats[j] = {
            "side_a_rate": rate, "pairs": n,
            "agreement": {"rate": agree / eligible if eligible else None, "pairs": eligible},
            "position_bias": position_bias(rate, n),
            "usage": usage_summary(usage.get(j, ())),
        }
    return {"sides": labels, "pairs": n, "correctness_decided": decided, "judged": judged,
            "weighted_wins": wins, "per_task": per_task, "pair_results": pairs_out, "judge_stats": stats}


def render_text(result: Mapping[str, Any]) -> str:
    """The text table tally prints."""
    lines = [f"pairs: {result['pairs']} (correctness-decided {result['correctness_decided']}, "
             f"judged {result['judged']})", "", "weighted wins:"]
    for label, w in result["weighted_wins"].items():
        lines.append(f"  {label}: {w:g}")
    lines += ["", "per task:"]
    for task, row in sorted(result["per_task"].items()):
        lines.append(f"  {task} ({row['pairs']} pairs): " + ", ".join(f"{k} {v:g}" for k, v in row["wins"].items()))
    lines += ["", f"{'judge':<40} {'side A':>8} {'agreement':>14} {'tokens':>10}  position"]
    for j, s in result["judge_stats"].items():
        rate = "-" if s["side_a_rate"] is None else f"{s['side_a_rate']:.2f}"
        ag = s["agreement"]
        agree = "-" if ag["rate"] is None else f"{ag['rate']:.2f} of {ag['pairs']}"
        u = s["usage"]
        tokens = "unknown" if u["tokens"] is None else str(u["tokens"])
        bias = {"flagged": "FLAG: position bias", "too_small": "sample too small to tell",
                "within_band": "within 0.2-0.8"}[s["position_bias"]]
        lines.append(f"{j:<40} {rate:>8} {agree:>14} {tokens:>10}  {bias}")
        if u["unknown_calls"]:
            lines.append(f"  {u['unknown_calls']} of {u['calls']} calls without complete usage"
                         + (f"; known tokens {u['known_tokens']}" if u["known_tokens"] is not None else ""))
    for extra, label in (("unbound_verdicts", "unbound verdict (written before binding)"),
                         ("needs_rebind_verdicts", "needs rebind")):
        for path in result.get(extra, []):
            lines.append(f"{label}: {path}")
    return "\n".join(lines) + "\n"
