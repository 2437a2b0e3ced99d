"""The answer a package author acts on: one verdict per treatment, from the results document.

Pure: :func:`verdicts` takes the results document (``results.json``, itself a fold of the
frozen config and the event log), the run's status (``complete``, ``stopped``, ``failed``,
``coding`` … from the folded state) and returns a typed :class:`Verdict` per treatment;
report.html, results.json, ``status``, ``compare``, ``run``'s last line, ``demo`` and the
dashboard all render it (:func:`headline`), so the words and numbers never drift.

Rules (one level for the page, the run's ``statistics.confidence_level``, α = (1 − level) / 2):

* a run that is not complete (attempts missing, stopped, failed) → ``partial``: no
  verdict, the numbers so far — except a sequential run stopped because it was decided;
* a sequential run (``doc["sequential"]``) uses its anytime-valid confidence sequence
  (the last point) instead of the fixed-N interval, and says so: its lower end above 0 →
  ``better``, upper end below 0 → ``worse``;
* the treatment measured as not exercised (the package never loaded) → ``not_exercised``;
* a fixed-size run: the one-sided sign-flip test at 0 (exact when the arms are
  exchangeable, A/A ≤ α) with p ≤ α → ``better`` (``greater``) or ``worse`` (``less``); the
  sentence gives that p. With several treatments against one comparator a better/worse
  reading is claimed only when Holm's step-down correction over the treatments keeps it
  (each treatment's p against alpha / (k − j)), so the chance of any false better (or
  worse) claim stays at alpha; otherwise the verdict is ``undetermined`` and says why;
* the interval shown is the range of the true mean difference with no symmetry assumed:
  the betting interval for a bounded mean (:mod:`._bounded`, ``summary.pass_rate``), at
  least ``level`` coverage for any distribution of per-task differences. It is wider than
  the test at 0 is sharp, so it can include 0 beside "better"; the sentence then says so;
* the whole interval within ± ``equivalence_margin`` (10 pp by default) → ``equivalent``:
  "no difference larger than X", X the larger distance of an endpoint from 0;
* otherwise (or too few tasks for an interval) → ``undetermined``, with how many more
  tasks would likely decide it by these same rules (:mod:`._more_tasks`: the run's own
  differences resampled through the sign-flip test at 0 and the betting interval within the
  margin; "not reachable within 500 tasks" when so; below 3 tasks the sign-flip test's power
  at the assumed spread, :mod:`._power`; below 10 tasks "might …, roughly even odds", which is
  what such a count had in simulation). A sequential run's sentence gives no count: its
  sequence, not these fixed-size rules, decides it (its plan in ``check`` gives the tasks).
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from ._cost import cost_per_pass
from ._decide import LEVEL, METHOD, alpha_of, ratio_of_means_interval
from ._format import format_dollars, format_p, format_pp, format_ratio
from ._more_tasks import more_tasks
from ._permutation import min_tasks, sign_flip_test
from ._power import POWER, assumed_sd, mde, tasks_needed
from ._sequential import METHOD as SEQUENTIAL_METHOD

EQUIVALENCE_MARGIN = 0.10
Kind = Literal["better", "worse", "equivalent", "undetermined", "partial", "not_exercised"]
#: kinds a view may colour (green / red / neutral); partial and not exercised are never coloured
DECIDED = ("better", "worse", "equivalent")


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """One treatment against its comparator; ``headline`` is the sentence a person reads first."""

    treatment: str
    against: str
    kind: Kind
    headline: str
    level: float
    effect: float | None  # mean per-task pass-rate difference (fraction)
    low: float | None  # the range shown: the bounded-mean interval (a sequential run: its sequence)
    high: float | None
    tasks: int
    #: fixed-size runs: the one-sided sign-flip p at 0 in the direction of the estimate (the
    #: better/worse test); None for a sequential run or with too few tasks
    p: float | None
    equivalence_margin: float
    within: float | None  # equivalent: no difference larger than this
    more_tasks: int | None  # undetermined: about this many more tasks would decide it
    mde: float | None  # smallest effect this many tasks detect with 80% power
    sd: float
    sd_source: str
    token_ratio: float | None
    token_low: float | None
    token_high: float | None
    usd: float | None
    usd_against: float | None
    cost_ratio: float | None  # DOLLARS_RATIO: mean dollars per attempt, treatment / comparator
    cost_low: float | None  # its sign-flip interval at ``level`` (None: too few tasks with dollars)
    cost_high: float | None
    usd_per_solved: float | None  # COST_PER_PASS_DEFINITION: total dollars / passing attempts
    usd_per_solved_against: float | None
    prices_as_of: str | None
    exercised: bool | None
    exercised_reason: str
    attempts_complete: int
    attempts_total: int
    run_status: str


def _sd(diffs: Sequence[float], repeats: int) -> tuple[float, str]:
    if len(diffs) >= 3:
        m = math.fsum(diffs) / len(diffs)
        sd = math.sqrt(math.fsum((d - m) ** 2 for d in diffs) / (len(diffs) - 1))
        if sd > 0:
            return sd, f"observed over {len(diffs)} tasks"
    return assumed_sd(max(1, repeats)), "assumed: per-task pass probability ~ Beta(2, 2)"


def _passes(doc: Mapping[str, Any], arm: str) -> int:
    return sum(int((doc["per_task"][t].get(arm) or {}).get("passes") or 0) for t in doc["tasks"])


def _cost(doc: Mapping[str, Any], arm: str) -> float | None:
    costs = doc.get("costs") or {}
    row = (costs.get("arms") or {}).get(arm) or {}
    usd = row.get("usd")
    return None if usd is None or row.get("lower_bound") else float(usd)


#: The one definition of the dollars ratio (tables, verdict, ``compare``'s paired line; the
#: ``cost_ratio`` gate's value equals it when every task has the same attempts per arm).
DOLLARS_RATIO = ("ratio of mean dollars per attempt (each arm's mean over a task's attempts, summed over the "
                 "tasks both arms have dollars for)")


def dollars_summary(doc: Mapping[str, Any], treatment: str, against: str, level: float) -> dict[str, Any]:
    """``deltas.<arm>.summary.dollars``: :data:`DOLLARS_RATIO` of ``treatment`` over ``against``
    with its sign-flip interval (``stats.ratio_of_means_interval``) at ``level``, over the tasks
    where every attempt of both arms has exact dollars (a lower bound or unknown excludes the
    task, named in ``excluded``) and the comparator spent more than $0."""
    costs = doc.get("costs") or {}
    per_attempt = costs.get("attempts") or {}
    out: dict[str, Any] = {"statistic": "ratio_of_mean_dollars_per_attempt", "definition": DOLLARS_RATIO,
                           "method": METHOD, "level": level, "excluded": []}
    if costs.get("prices") is None:
        return {**out, "estimate": None, "low": None, "high": None, "tasks": 0, "status": "no_prices"}
    rows: dict[tuple[str, str], list[Any]] = {}
    for r in doc.get("attempts") or ():
        rows.setdefault((r["task"], r["arm"]), []).append(per_attempt.get(r["attempt_id"]) or {})
    ts, cs = [], []
    for task in doc["tasks"]:
        means = []
        for arm in (treatment, against):
            got = rows.get((task, arm)) or []
            bad = [c for c in got if c.get("usd") is None or c.get("lower_bound")]
            if not got or bad:
                out["excluded"].append({"task": task, "reason": f"{arm}: " + (
                    "no attempts" if not got else f"{len(bad)} of {len(got)} attempt(s) without exact dollars"
                    + (f" ({bad[0]['reason']})" if bad[0].get("reason") else ""))})
                break
            means.append(math.fsum(float(c["usd"]) for c in got) / len(got))
        else:
            if means[1] <= 0:
                out["excluded"].append({"task": task, "reason": f"{against} spent $0 per attempt"})
                continue
            ts.append(means[0])
            cs.append(means[1])
    iv = ratio_of_means_interval(ts, cs, level)
    return {**out, "estimate": iv.estimate, "low": iv.low, "high": iv.high, "tasks": iv.tasks, "status": iv.status,
            "min_tasks": iv.min_tasks}


#: Below this many tasks the count is a rough guide: simulated, runs of 6 tasks given a count were
#: decided at that count in 33–66% of cases (``bench/bench_aa_stats.py --only more_tasks``).
FEW_FOR_COUNT = 10


def _more_tasks(diffs: Sequence[float], effect: float, sd: float, alpha: float, margin: float,
                tasks: int) -> tuple[int | None, str]:
    """More tasks beyond ``tasks`` after which the verdict would likely be decided, and the words
    saying so. From 3 observed differences on: the bootstrap of the run's own differences through
    the rules that decide (:mod:`._more_tasks`: the sign-flip test at 0 for better/worse, the
    betting interval within ± ``margin`` for equivalent), or "not reachable" within
    :data:`~._more_tasks.MAX_TASKS` tasks. Below that, too few to resample: the sign-flip test's
    power (:mod:`._power`) at the observed effect and the assumed spread, direction only. Below
    :data:`FEW_FOR_COUNT` tasks the sentence says "might" and roughly even odds, which is what
    the count had in simulation; from 10 tasks on "would likely" held in 48–93% of simulated runs
    (48% [38, 58] at 10 Beta(2, 2) tasks with no effect, 74% or more from 20 tasks)."""
    if len(diffs) >= 3:
        got = more_tasks(diffs, alpha, margin)
        if got.more is None:
            return None, (f" — not reachable within {got.max_tasks} tasks: even that many, at the differences "
                          "observed, would likely not decide it")
        more = got.more
    elif abs(effect) <= 1e-9:
        return None, ""
    else:
        more = max(1, tasks_needed(abs(effect), sd, alpha, POWER) - tasks)
    if len(diffs) < FEW_FOR_COUNT:
        return more, (f" — about {more} more task(s) might decide it (roughly even odds: {len(diffs)} task(s) say "
                      "little about the spread)")
    return more, f" — about {more} more task(s) would likely decide it"


def headline(v: Verdict) -> str:
    """The verdict as one sentence (also :attr:`Verdict.headline`)."""
    return v.headline


def _sentence(kind: Kind, treatment: str, against: str, effect: str, extra: str, money: str) -> str:
    lead = {
        "better": f"{treatment} is better than {against}",
        "worse": f"{treatment} is worse than {against}",
        "equivalent": f"{treatment} makes no difference larger than {extra} against {against}",
        "undetermined": f"{treatment} vs {against}: undetermined",
        "partial": f"{treatment} vs {against}: no verdict yet",
        "not_exercised": f"{treatment} vs {against}: no verdict",
    }[kind]
    return f"{lead}: {effect}" + (f"; {money}" if money else "") + "."


def verdict_for(
    doc: Mapping[str, Any], treatment: str, *, run_status: str = "complete",
    equivalence_margin: float = EQUIVALENCE_MARGIN, exercised: bool | None = None,
    exercised_reason: str = "not measured in this run", not_claimed: str = "",
) -> Verdict:
    """The verdict of ``treatment`` in the results document ``doc`` (module docstring).
    ``not_claimed``: why a better/worse reading is not claimed (Holm's correction over the
    run's treatments, :func:`verdicts`); the verdict is then undetermined and says so."""
    delta = doc["deltas"][treatment]
    against = delta["against"]
    pr = delta["summary"]["pass_rate"]
    tok = delta["summary"]["tokens"]
    level = float(pr.get("level") or LEVEL)
    alpha = alpha_of(level)
    run = doc.get("run") or {}
    total, done = int(run.get("attempts_total") or 0), int(run.get("attempts_complete") or 0)
    diffs = [p["pass_rate_difference"] for p in delta["per_task"].values() if p["pass_rate_difference"] is not None]
    sd, sd_source = _sd(diffs, int(run.get("repeats") or 3))
    est, low, high, n = pr.get("estimate"), pr.get("low"), pr.get("high"), int(pr.get("tasks") or 0)
    pct = f"{level * 100:g}%"
    seq = doc.get("sequential")
    decided_stop = False
    seq_cost = None
    p_zero: float | None = None
    if seq:  # a sequential run decides (and is shown) with its anytime-valid sequence, never the fixed-N interval
        est, low, high, n = _sequential_interval(seq, treatment)
        tok = _sequential_ratio(seq, treatment, "tokens") or tok
        seq_cost = _sequential_ratio(seq, treatment, "cost")
        family = int(seq.get("family") or 1)
        pct = f"{level * 100:g}% anytime-valid" + (f", simultaneous over {family} sequences" if family > 1 else "")
        decided_stop = bool(seq.get("stopped_by_decision"))
        is_better, is_worse = low is not None and low > 0, high is not None and high < 0
        shown = f" [{pct}: {format_pp(low)} to {format_pp(high)}]"
    else:  # the exact sign-flip test at 0 decides the direction; the range shown assumes no symmetry
        p_greater, p_less = _zero_ps(diffs, alpha)
        is_better, is_worse = p_greater is not None and p_greater <= alpha, p_less is not None and p_less <= alpha
        if p_greater is not None and p_less is not None:
            p_zero = p_greater if p_greater <= p_less else p_less
        shown = (f", sign-flip test at 0: p = {format_p(p_zero)} [{pct} range, no symmetry assumed: "
                 f"{format_pp(low)} to {format_pp(high)}]" if p_zero is not None else
                 f" [{pct} range, no symmetry assumed: {format_pp(low)} to {format_pp(high)}]")
    effect = (
        "no usable task pair yet" if est is None
        else f"{format_pp(est)} pass rate over {n} task(s){shown}" if low is not None
        else f"{format_pp(est)} pass rate (too few tasks for a {pct} interval: {n} of {pr.get('min_tasks')}) over {n} task(s)"
    )
    usd_t, usd_v = _cost(doc, treatment), _cost(doc, against)
    solved_t, solved_v = _passes(doc, treatment), _passes(doc, against)
    per_t, per_v = cost_per_pass(usd_t, solved_t), cost_per_pass(usd_v, solved_v)
    dollars = seq_cost or delta["summary"].get("dollars") or dollars_summary(doc, treatment, against, level)
    ratio, cost_low, cost_high = dollars.get("estimate"), dollars.get("low"), dollars.get("high")
    costs = doc.get("costs") or {}
    as_of = (costs.get("prices") or {}).get("as_of")
    table = costs.get("table") or {}
    price_note = f"prices of {as_of}" + (", bundled table" if table.get("source") == "bundled" else "") + (
        ", older than 90 days at the run's date" if table.get("age_warning") else "")
    money_parts = []
    if tok.get("estimate") is not None:
        money_parts.append(f"tokens {format_ratio(tok['estimate'])}" + (
            f" [{format_ratio(tok['low'])} to {format_ratio(tok['high'])}]" if tok.get("low") is not None else ""))
    if ratio is not None:
        money_parts.append(f"dollars per attempt {format_ratio(ratio)}" + (
            f" [{format_ratio(cost_low)} to {format_ratio(cost_high)}]" if cost_low is not None and cost_high is not None
            else ""))
    if per_t is not None and per_v is not None:
        money_parts.append(f"{format_dollars(per_t)} vs {format_dollars(per_v)} per solved task")
    if ratio is not None or (per_t is not None and per_v is not None):
        money_parts[-1] += f" ({price_note})"
    money = ", ".join(money_parts)
    m = mde(n, sd, alpha) if n else None
    within = more = None
    if not decided_stop and (total == 0 or done < total or run_status not in ("complete", "reporting")):
        kind: Kind = "partial"
        why = run_status if run_status not in ("complete", "reporting") else "running"
        extra_line = f" (run {why}, {done} of {total} attempts complete)"
    elif exercised is False:
        kind, extra_line = "not_exercised", f" (the package was not exercised: {exercised_reason})"
    elif is_better and not not_claimed:
        kind, extra_line = "better", _includes_zero(low, high)
    elif is_worse and not not_claimed:
        kind, extra_line = "worse", _includes_zero(low, high)
    elif low is not None and high is not None and max(-low, high) <= equivalence_margin:
        kind, extra_line = "equivalent", ""
        within = max(-low, high)
    else:
        kind = "undetermined"
        more, more_words = (None, "") if seq else _more_tasks(diffs, est or 0.0, sd, alpha, equivalence_margin, n)
        extra_line = not_claimed + more_words + (
            f"; at the spread {'observed' if sd_source.startswith('observed') else 'assumed'} these {n} tasks "
            f"detect {format_pp(m)} with 80% power" if m is not None else "")
    sentence = _sentence(kind, treatment, against, effect + extra_line,
                         format_pp(within).lstrip("+") if within is not None else "", money)
    return Verdict(
        treatment=treatment, against=against, kind=kind, headline=sentence, level=level, effect=est, low=low,
        high=high, tasks=n, p=p_zero, equivalence_margin=equivalence_margin, within=within, more_tasks=more, mde=m, sd=sd,
        sd_source=sd_source, token_ratio=tok.get("estimate"), token_low=tok.get("low"), token_high=tok.get("high"),
        usd=usd_t, usd_against=usd_v, cost_ratio=ratio, cost_low=cost_low, cost_high=cost_high, usd_per_solved=per_t, usd_per_solved_against=per_v,
        prices_as_of=as_of, exercised=exercised, exercised_reason=exercised_reason,
        attempts_complete=done, attempts_total=total, run_status=run_status,
    )


def _zero_ps(diffs: Sequence[float], alpha: float) -> tuple[float | None, float | None]:
    """The one-sided sign-flip p-values at 0, ``greater`` and ``less``; ``None`` below the
    fewest tasks that can reach ``alpha`` (``too_few_tasks``)."""
    if len(diffs) < min_tasks(alpha):
        return None, None
    return sign_flip_test(diffs, alternative="greater").p, sign_flip_test(diffs, alternative="less").p


def _includes_zero(low: float | None, high: float | None) -> str:
    """What a better/worse sentence adds when the range shown still includes 0 (module docstring)."""
    if low is None or high is None or not low <= 0.0 <= high:
        return ""
    return " (the range includes 0: it assumes nothing about the tasks; the direction is the exact sign-flip test's)"


def _holm(doc: Mapping[str, Any], arms: Sequence[str], kinds: Sequence[str], alpha: float) -> dict[str, str]:
    """The treatments whose better/worse reading Holm's step-down correction over ``arms``
    does not keep, each with the words saying why (module docstring)."""
    ps = []
    for arm, kind in zip(arms, kinds, strict=True):
        diffs = [p["pass_rate_difference"] for p in doc["deltas"][arm]["per_task"].values()
                 if p["pass_rate_difference"] is not None]
        sides = [sign_flip_test(diffs, alternative=a).p for a in ("greater", "less")]
        ps.append((sides[0] if kind == "better" else sides[1] if kind == "worse" else min(sides), arm, kind))
    k, out, stop = len(ps), {}, None
    for j, (p, arm, kind) in enumerate(sorted(ps)):
        if stop is None and p > alpha / (k - j):
            stop = alpha / (k - j)  # step-down: the first p above its threshold ends the claims
        if stop is not None and kind in ("better", "worse"):
            out[arm] = (f" — not claimed {kind}: with {k} treatments against one comparator, Holm's correction "
                        f"stopped at its threshold p <= {format_p(stop)} and this one's sign-flip p is {format_p(p)}")
    return out


def _sequential_interval(seq: Mapping[str, Any], arm: str) -> tuple[float | None, float | None, float | None, int]:
    """The last point of ``arm``'s pass-rate sequence (estimate, low, high, usable tasks)."""
    for g in seq.get("gates") or ():
        if g.get("arm") == arm and g.get("metric") == "pass_rate" and g.get("points"):
            p = g["points"][-1]
            return p["estimate"], p["low"], p["high"], int(p["tasks"])
    return None, None, None, 0


def _sequential_ratio(seq: Mapping[str, Any], arm: str, metric: str) -> dict[str, Any] | None:
    """The last point of ``arm``'s token- or dollar-ratio sequence (``metric`` ``tokens`` or
    ``cost``), when the run has that gate and the sequence has a point."""
    for g in seq.get("gates") or ():
        if g.get("arm") == arm and g.get("metric") == metric and g.get("points"):
            p = g["points"][-1]
            return {"estimate": p["estimate"], "low": p["low"], "high": p["high"]}
    return None


def verdicts(doc: Mapping[str, Any], *, run_status: str = "complete",
             equivalence_margin: float = EQUIVALENCE_MARGIN) -> list[Verdict]:
    """Every treatment's verdict in the document's arm order; whether each package was
    exercised comes from the document's activation section when the run measured it."""
    arms = [arm for arm in doc["arms"] if arm in doc["deltas"]]
    out = [verdict_for(doc, arm, run_status=run_status, equivalence_margin=equivalence_margin,
                       **_activation_of(doc, arm)) for arm in arms]
    if len(arms) < 2 or doc.get("sequential") or not any(v.kind in ("better", "worse") for v in out):
        return out  # one treatment; a sequential run's sequences already hold together (Bonferroni)
    dropped = _holm(doc, arms, [v.kind for v in out], alpha_of(out[0].level))
    return [verdict_for(doc, arm, run_status=run_status, equivalence_margin=equivalence_margin,
                        not_claimed=dropped[arm], **_activation_of(doc, arm)) if arm in dropped else v
            for arm, v in zip(arms, out, strict=True)]


def _activation_of(doc: Mapping[str, Any], arm: str) -> dict[str, Any]:
    """``exercised`` and its reason for ``arm`` from ``doc["activation"]["per_arm"]`` (the
    activation measure), or nothing when the run did not measure activation."""
    per_arm = ((doc.get("activation") or {}).get("per_arm") or {}).get(arm)
    if not isinstance(per_arm, Mapping) or per_arm.get("exercised") is None:
        return {}
    counts = per_arm.get("any") or {}
    used, not_used, unknown = (int(counts.get(k) or 0) for k in ("used", "not_used", "unknown"))
    if per_arm["exercised"]:
        reason = f"{used} of {used + not_used + unknown} attempt(s) used a declared component"
    else:
        reason = (f"none of its {used + not_used} attempt(s) with a transcript used a declared component"
                  + (f" ({unknown} unknown)" if unknown else ""))
    return {"exercised": bool(per_arm["exercised"]), "exercised_reason": reason}


def verdict_of_paired(paired: Any, *, equivalence_margin: float = EQUIVALENCE_MARGIN, repeats: int = 3) -> Verdict:
    """The verdict of a ``compare`` paired section (:class:`PairedComparison`), through :func:`verdict_for`.

    Saved reports are finished runs' (compare refuses others), so the run is complete here;
    its dollars are the paired section's ratio of mean dollars per attempt (per solved task
    needs the report's totals: ``compare``'s cost gates). ``repeats`` (attempts per task and
    arm) sets the assumed spread below three tasks, as the run's own report does."""

    def iv(i: Any) -> dict[str, Any]:
        return {"estimate": i.estimate, "low": i.low, "high": i.high, "tasks": i.tasks,
                "status": i.status, "level": i.level, "min_tasks": i.min_tasks}

    doc = {
        "arms": [paired.against, paired.candidate], "tasks": [], "per_task": {},
        "run": {"attempts_total": 1, "attempts_complete": 1, "repeats": repeats},
        "deltas": {paired.candidate: {
            "against": paired.against,
            "per_task": {p.task: {"pass_rate_difference": p.pass_rate_difference} for p in paired.per_task},
            "summary": {"pass_rate": iv(paired.pass_rate), "tokens": iv(paired.tokens),
                        **({"dollars": iv(paired.dollars)} if paired.dollars is not None else {})},
        }},
        "costs": {},
    }
    if paired.pass_rate.method == SEQUENTIAL_METHOD:  # a sequential run's own interval (_compare_sequential)
        doc["sequential"] = {"gates": [{"arm": paired.candidate, "metric": "pass_rate", "points": [
            {"estimate": paired.pass_rate.estimate, "low": paired.pass_rate.low, "high": paired.pass_rate.high,
             "tasks": paired.pass_rate.tasks}]}]}
    return verdict_for(doc, paired.candidate, equivalence_margin=equivalence_margin)
