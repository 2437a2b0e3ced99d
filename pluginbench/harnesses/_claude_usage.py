"""Claude Code token usage: ``result.modelUsage`` cross-checked against session transcripts.

Pure functions. The transcripts are the root session file plus one file per subagent;
assistant entries repeat once per content block with the same message id, so they are
deduplicated by ``message.id`` (``<synthetic>`` error messages are skipped).

Rules (by the launched CLI version):

* qualified version (2.1.328), no compaction: per model, transcript input, cache read,
  cache creation and output equal ``modelUsage``;
* qualified version with compaction (stream and root transcript must agree): transcripts
  must not exceed ``modelUsage``; the runner model's excess is untranscribed and bounded
  by ``preTokens`` + 4,000 (input) and ``postTokens`` (output) per boundary; other models equal;
* any other version: only input is compared; transcripts must not exceed ``modelUsage``;
  the runner model's excess is untranscribed (unbounded), other models equal.

Also required: exactly one ``system/init`` and one ``success`` result for the same session,
with the runner model and the launched CLI version. Any failed rule → usage unknown with
the reasons; a timeout (no result) → unknown. Never zero for unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..events import Usage
from ._claude_launch import PINNED_VERSION as QUALIFIED_VERSION
from ._claude_stream import StreamSummary

COMPACTION_PROMPT_ALLOWANCE = 4_000
KEYS = ("input", "cache_read", "cache_creation", "output")


class TranscriptTotals(NamedTuple):
    per_model: dict[str, dict[str, int]]
    compactions: tuple[dict[str, Any], ...]  # compact_boundary metadata of the root transcript
    messages: int
    bad_lines: int


def read_transcripts(root: Iterable[str], subagents: Iterable[Iterable[str]] = ()) -> TranscriptTotals:
    """Sum deduplicated assistant usage per model over the root and subagent transcripts."""
    per: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    compactions: list[dict[str, Any]] = []
    bad = 0
    for index, lines in enumerate([root, *subagents]):
        for line in lines:
            if not line.strip():
                continue
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if not isinstance(ev, dict):
                continue
            if index == 0 and ev.get("type") == "system" and ev.get("subtype") == "compact_boundary":
                compactions.append(ev.get("compactMetadata") or ev.get("compact_metadata") or {})
            if ev.get("type") != "assistant":
                continue
            msg = ev.get("message") or {}
            model, mid, usage = msg.get("model"), msg.get("id"), msg.get("usage")
            if model == "<synthetic>" or not mid or not isinstance(usage, dict) or mid in seen:
                continue
            seen.add(mid)
            tot = per.setdefault(str(model), dict.fromkeys(KEYS, 0))
            tot["input"] += int(usage.get("input_tokens") or 0)
            tot["cache_read"] += int(usage.get("cache_read_input_tokens") or 0)
            tot["cache_creation"] += int(usage.get("cache_creation_input_tokens") or 0)
            tot["output"] += int(usage.get("output_tokens") or 0)
    return TranscriptTotals(per, tuple(compactions), len(seen), bad)


def model_usage_totals(model_usage: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {
        str(m): {
            "input": int(u.get("inputTokens") or 0),
            "cache_read": int(u.get("cacheReadInputTokens") or 0),
            "cache_creation": int(u.get("cacheCreationInputTokens") or 0),
            "output": int(u.get("outputTokens") or 0),
        }
        for m, u in (model_usage or {}).items()
        if isinstance(u, dict)
    }


def _unknown(reasons: list[str]) -> Usage:
    return Usage(status="unknown", reason="; ".join(reasons))


def validate_usage(
    summary: StreamSummary,
    transcripts: TranscriptTotals | None,
    *,
    runner_model: str,
    cli_version: str | None,
    timed_out: bool = False,
) -> tuple[Usage, dict[str, Any]]:
    """(Usage, usage_accounting receipt) for one attempt."""
    acct: dict[str, Any] = {"rule": None, "cli_version": cli_version, "runner_model": runner_model}
    reasons: list[str] = []
    if timed_out:
        reasons.append("the session timed out: no final result, usage unknown (no lower bound)")
    if len(summary.inits) != 1:
        reasons.append(f"expected one system/init, found {len(summary.inits)}")
    if len(summary.results) != 1:
        reasons.append(f"expected one result, found {len(summary.results)}")
    if reasons:
        return _unknown(reasons), {**acct, "reasons": reasons}
    init, res = summary.inits[0], summary.results[0]
    if res.get("subtype") != "success":
        reasons.append(f"result subtype is {res.get('subtype')!r}, not success")
    if init.get("session_id") != res.get("session_id"):
        reasons.append("system/init and result belong to different sessions")
    if init.get("model") != runner_model:
        reasons.append(f"init model {init.get('model')!r} is not the runner model {runner_model!r}")
    if init.get("claude_code_version") != cli_version:
        reasons.append(f"init CLI version {init.get('claude_code_version')!r} is not {cli_version!r}")
    if transcripts is None:
        reasons.append("no session transcript was found")
    if reasons:
        return _unknown(reasons), {**acct, "reasons": reasons}
    assert transcripts is not None
    if transcripts.bad_lines:
        reasons.append(f"{transcripts.bad_lines} undecodable transcript lines")
    mu = model_usage_totals(res.get("modelUsage") or {})
    tr = transcripts.per_model
    qualified = cli_version == QUALIFIED_VERSION
    stream_compacted, root_compacted = summary.compactions > 0, bool(transcripts.compactions)
    if stream_compacted != root_compacted:
        reasons.append("the stream and the root transcript disagree on compaction")
    keys: tuple[str, ...]
    if qualified and not stream_compacted:
        rule, keys, one_sided = "qualified-equal", KEYS, False
    elif qualified:
        rule, keys, one_sided = "qualified-compaction", KEYS, True
    else:
        rule, keys, one_sided = "unqualified-input-only", ("input", "cache_read", "cache_creation"), True
    acct.update(rule=rule, model_usage=mu, transcripts=tr, transcript_messages=transcripts.messages)
    untranscribed: dict[str, int] = {}
    for model in sorted(set(mu) | set(tr)):
        m, t = mu.get(model, dict.fromkeys(KEYS, 0)), tr.get(model, dict.fromkeys(KEYS, 0))
        for k in keys:
            if t[k] == m[k]:
                continue
            if one_sided and model == runner_model and t[k] < m[k]:
                untranscribed[k] = m[k] - t[k]
                continue
            reasons.append(f"{model} {k}: transcripts {t[k]} vs modelUsage {m[k]}")
    if rule == "qualified-compaction" and untranscribed:
        if any("preTokens" not in c or "postTokens" not in c for c in transcripts.compactions):
            reasons.append("a compact boundary lacks preTokens/postTokens")
        else:
            in_bound = sum(int(c["preTokens"]) + COMPACTION_PROMPT_ALLOWANCE for c in transcripts.compactions)
            out_bound = sum(int(c["postTokens"]) for c in transcripts.compactions)
            excess_in = sum(untranscribed.get(k, 0) for k in ("input", "cache_read", "cache_creation"))
            if excess_in > in_bound or untranscribed.get("output", 0) > out_bound:
                reasons.append(f"untranscribed excess {untranscribed} above the compaction bound")
    acct["untranscribed"] = untranscribed
    if reasons:
        return _unknown(reasons), {**acct, "reasons": reasons}
    inp = sum(u["input"] + u["cache_read"] + u["cache_creation"] for u in mu.values())
    cached = sum(u["cache_read"] for u in mu.values())
    out = sum(u["output"] for u in mu.values())
    usage = Usage(
        status="exact", input_tokens=inp, cached_input_tokens=cached, uncached_input_tokens=inp - cached,
        output_tokens=out, reasoning_output_tokens=None, total_tokens=inp + out,
        reason=f"result.modelUsage validated against transcripts ({rule}); Claude records no reasoning-output count",
    )
    return usage, {**acct, "reasons": []}
