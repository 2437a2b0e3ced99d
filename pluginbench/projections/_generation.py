"""Generated-guidance arms as a pure fold: each (arm, task)'s generating session, from its
``generation.started`` to ``guidance.generated`` or ``generation.failed``.

A session started and never ended was killed with its worker: the next start of the same
(arm, task) supersedes it, and it stays in :attr:`Generations.killed` with usage unknown
(it may have been paid for), so an arm's generation cost is never a silent zero. The
report's "Generated guidance" section and ``results.json`` ``generated`` are
:func:`generation_rows` and :func:`generation_totals`; the cost ceiling adds
:func:`generation_spend` items.
"""

from typing import Any, NamedTuple

import msgspec
from msgspec import field

from ..events import GenerationFailed, GenerationStarted, GuidanceGenerated, Usage

#: The usage of a generating session killed with its worker (no receipt was saved).
KILLED_GENERATION_USAGE = Usage(
    status="unknown", reason="the generating session ended with its worker (killed or stopped) before its usage was saved")


class Generation(msgspec.Struct):
    """The latest generating session of one (arm, task) and how it ended (None: running or killed)."""

    started: GenerationStarted
    result: GuidanceGenerated | GenerationFailed | None = None

    @property
    def finished(self) -> bool:
        return self.result is not None


class Generations(msgspec.Struct):
    """Every generated-guidance arm's sessions. Mutated only by :meth:`apply`."""

    #: (arm, task) -> its latest session
    by_pair: dict[tuple[str, str], Generation] = field(default_factory=dict)
    #: sessions superseded before they ended (killed mid-generation), in log order
    killed: list[GenerationStarted] = field(default_factory=list)

    def apply(self, event: GenerationStarted | GuidanceGenerated | GenerationFailed) -> None:
        key = (event.arm, event.task)
        if isinstance(event, GenerationStarted):
            previous = self.by_pair.get(key)
            if previous is not None and previous.result is None:
                self.killed.append(previous.started)
            self.by_pair[key] = Generation(event)
            return
        current = self.by_pair.get(key)
        if current is not None and current.started.generation_id == event.generation_id:
            current.result = event

    def outcome(self, arm: str, task: str) -> GuidanceGenerated | GenerationFailed | None:
        """How (arm, task)'s generation ended, or None when it did not (yet)."""
        g = self.by_pair.get((arm, task))
        return g.result if g is not None else None

    def unfinished(self) -> list[tuple[str, str]]:
        """(arm, task) pairs whose latest session started and never ended (sorted)."""
        return sorted(k for k, g in self.by_pair.items() if g.result is None)


def _usage_dict(usage: Usage) -> dict[str, Any]:
    from ._report_data import tokens_dict

    return tokens_dict(usage)


def generation_rows(gens: Generations, run_root_rel: str = "") -> list[dict[str, Any]]:
    """One row per (arm, task) in (arm, task) order: outcome, file, hash, evidence link,
    usage and seconds; plus one row per killed session (usage unknown)."""
    rows: list[dict[str, Any]] = []
    for (arm, task), g in sorted(gens.by_pair.items()):
        r = g.result
        base: dict[str, Any] = {"arm": arm, "task": task, "generation_id": g.started.generation_id,
                                "harness": g.started.harness, "model": g.started.model, "file": g.started.file}
        if isinstance(r, GuidanceGenerated):
            rows.append({**base, "outcome": "generated", "path": r.path, "sha256": r.sha256, "bytes": r.bytes,
                         "fingerprint": r.fingerprint, "tokens": _usage_dict(r.usage), "seconds": r.seconds,
                         "discarded_changes": list(r.discarded_changes), "reason": None})
        elif isinstance(r, GenerationFailed):
            rows.append({**base, "outcome": "failed", "path": None, "sha256": None, "bytes": None,
                         "fingerprint": None, "tokens": _usage_dict(r.usage), "seconds": r.seconds,
                         "discarded_changes": [], "reason": r.reason})
        else:
            rows.append({**base, "outcome": "unfinished", "path": None, "sha256": None, "bytes": None,
                         "fingerprint": None, "tokens": _usage_dict(KILLED_GENERATION_USAGE), "seconds": None,
                         "discarded_changes": [], "reason": "started and not ended: the run stopped during it"})
    for k in gens.killed:
        rows.append({"arm": k.arm, "task": k.task, "generation_id": k.generation_id, "harness": k.harness,
                     "model": k.model, "file": k.file, "outcome": "killed", "path": None, "sha256": None,
                     "bytes": None, "fingerprint": None, "tokens": _usage_dict(KILLED_GENERATION_USAGE),
                     "seconds": None, "discarded_changes": [],
                     "reason": "its worker ended (killed or stopped) mid-generation; generated again on resume"})
    rows.sort(key=lambda row: (row["arm"], row["task"], row["generation_id"]))
    return rows


class Session(NamedTuple):
    """One generating session that may have been paid for."""

    arm: str
    task: str
    generation_id: str
    model: str | None
    usage: Usage


def generation_sessions(gens: Generations) -> list[Session]:
    """Every generating session that may have been paid for, killed ones with unknown usage;
    sorted by arm, task, id."""
    out: list[Session] = []
    for g in gens.by_pair.values():
        r = g.result
        usage = r.usage if r is not None else KILLED_GENERATION_USAGE
        out.append(Session(g.started.arm, g.started.task, g.started.generation_id, g.started.model, usage))
    out += [Session(k.arm, k.task, k.generation_id, k.model, KILLED_GENERATION_USAGE) for k in gens.killed]
    return sorted(out, key=lambda t: (t.arm, t.task, t.generation_id))


def generation_totals(gens: Generations) -> dict[str, dict[str, Any]]:
    """Arm -> its generating sessions' counts, tokens and seconds. A total is ``None`` with the
    reason when any session's figure is unknown (never a partial sum shown as the total)."""
    out: dict[str, dict[str, Any]] = {}
    for arm, _task, gid, _model, usage in generation_sessions(gens):
        row = out.setdefault(arm, {"sessions": 0, "generated": 0, "failed": 0, "killed": 0, "tokens": 0,
                                   "tokens_status": "exact", "tokens_unknown": [], "seconds": 0.0,
                                   "seconds_unknown": []})
        row["sessions"] += 1
        total = usage.total_tokens if usage.status != "unknown" else None
        if total is None:
            row["tokens_unknown"].append(gid)
        else:
            row["tokens"] += total
            if usage.status != "exact":
                row["tokens_status"] = "lower_bound"
    for (arm, _task), g in gens.by_pair.items():
        r = g.result
        row = out[arm]
        if isinstance(r, GuidanceGenerated):
            row["generated"] += 1
        elif isinstance(r, GenerationFailed):
            row["failed"] += 1
        if r is None or r.seconds is None:
            row["seconds_unknown"].append(g.started.generation_id)
        else:
            row["seconds"] += r.seconds
    for k in gens.killed:
        out[k.arm]["killed"] += 1
        out[k.arm]["seconds_unknown"].append(k.generation_id)
    result: dict[str, dict[str, Any]] = {}
    for arm, row in sorted(out.items()):
        tok_unknown, sec_unknown = sorted(row.pop("tokens_unknown")), sorted(row.pop("seconds_unknown"))
        result[arm] = {
            **row,
            "tokens": None if tok_unknown else row["tokens"],
            "tokens_status": "unknown" if tok_unknown else row["tokens_status"],
            "tokens_reason": f"unknown usage in {', '.join(tok_unknown)}" if tok_unknown else None,
            "seconds": None if sec_unknown else round(row["seconds"], 3),
            "seconds_reason": f"unknown time in {', '.join(sec_unknown)}" if sec_unknown else None,
        }
    return result
