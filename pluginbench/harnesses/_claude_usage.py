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

Every answer's usage must have been seen and valid (:func:`read_stream_answers`): the
stream's ``assistant`` events carry each API answer's own ``usage`` as served, and Claude
Code turns a missing usage into zeros and a malformed count into 0 or a negative total in
``modelUsage`` and the transcripts alike, so the cross-check alone cannot see it. An answer
without a usage object, or with a count that is not a non-negative integer, makes the usage
a ``lower_bound`` (the validated answers' transcript counts, labelled) or ``unknown`` when
no answer's usage was valid. An API call cut mid-stream and retried (``system/api_retry``
with no HTTP status) was served input that nobody reports: the usage is at most a lower
bound. A session whose result is that connection failure after the retries is a provider
stop (:func:`unrecovered_cut`), not the agent's outcome.
"""

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..events import Usage
from ._claude_launch import PINNED_VERSION as QUALIFIED_VERSION
from ._claude_stream import StreamSummary, decode_stream, loads_line, well_formed

COMPACTION_PROMPT_ALLOWANCE = 4_000
KEYS = ("input", "cache_read", "cache_creation", "output")
_TRANSCRIPT_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
_MODEL_USAGE_FIELDS = ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "outputTokens")


_COUNT_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_REQUIRED_FIELDS = ("input_tokens", "output_tokens")


def valid_count(value: object) -> bool:
    """A token count is a non-negative integer (a bool is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _integer(value: object) -> int:
    """An integer count as given (negatives kept, to be flagged); anything else is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_fault(usage: object) -> str | None:
    """Why an API answer's ``usage`` object is not a valid count, or None when it is.

    ``input_tokens`` and ``output_tokens`` must be non-negative integers; the cache counts
    may be absent or null, else non-negative integers."""
    if not isinstance(usage, dict):
        return "no usage" if usage is None else f"usage is {type(usage).__name__}, not an object"
    for key in _COUNT_FIELDS:
        value = usage.get(key)
        if value is None and key not in _REQUIRED_FIELDS:
            continue
        if value is None:
            return f"{key} missing"
        if not valid_count(value):
            return f"{key} is {value!r}"
    return None


class StreamAnswers(NamedTuple):
    """The API answers the stream shows (``assistant`` events, one per message id, synthetic
    error messages left out) and the fault of each answer whose usage was not valid."""

    answers: int
    faults: dict[str, str]  # message id -> why its usage is not valid
    cut_retries: int  # API calls cut without an HTTP status and retried


def read_stream_answers(lines: Iterable[str]) -> StreamAnswers:
    """Fold the stream-json stdout into :class:`StreamAnswers` (undecodable lines skipped:
    :func:`~pluginbench.harnesses._claude_stream.parse_stream` counts them)."""
    return stream_answers(decode_stream(list(lines))[0])


def stream_answers(events: Iterable[dict[str, Any]]) -> StreamAnswers:
    """:func:`read_stream_answers` of the events :func:`~._claude_stream.decode_stream` returned."""
    seen: dict[str, str | None] = {}
    cut = 0
    for ev in events:
        if ev.get("type") == "system" and ev.get("subtype") == "api_retry" and ev.get("error_status") is None:
            cut += 1
        if ev.get("type") != "assistant":
            continue
        msg = ev.get("message")
        if not isinstance(msg, dict) or msg.get("model") == "<synthetic>":
            continue
        mid = str(msg.get("id"))
        fault = usage_fault(msg.get("usage"))
        # Content blocks of one answer repeat the message: any faulty copy marks the answer.
        seen[mid] = seen.get(mid) or fault
    faults = {mid: f for mid, f in seen.items() if f is not None}
    return StreamAnswers(len(seen), faults, cut)


class TranscriptTotals(NamedTuple):
    per_model: dict[str, dict[str, int]]
    compactions: tuple[dict[str, Any], ...]  # compact_boundary metadata of the root transcript
    messages: int
    bad_lines: int
    #: message id -> (model, counts) of every deduplicated assistant message
    per_message: dict[str, tuple[str, dict[str, int]]] = {}
    #: message ids whose transcript usage has a count that is not a non-negative integer
    invalid: tuple[str, ...] = ()


def read_transcripts(root: Iterable[str], subagents: Iterable[Iterable[str]] = ()) -> TranscriptTotals:
    """Sum deduplicated assistant usage per model over the root and subagent transcripts."""
    per: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    per_message: dict[str, tuple[str, dict[str, int]]] = {}
    invalid: list[str] = []
    compactions: list[dict[str, Any]] = []
    bad = 0
    for index, lines in enumerate([root, *subagents]):
        for line in lines:
            if not line.strip():
                continue
            try:
                ev = loads_line(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if not isinstance(ev, dict):
                continue
            if not well_formed(ev):
                bad += 1
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
            raw = {k: usage.get(f) for k, f in zip(KEYS, _TRANSCRIPT_FIELDS, strict=True)}
            if not all(v is None or valid_count(v) for v in raw.values()):
                invalid.append(str(mid))
            per_message[str(mid)] = (str(model), {k: _integer(v) if valid_count(v) else 0 for k, v in raw.items()})
            tot = per.setdefault(str(model), dict.fromkeys(KEYS, 0))
            for k in KEYS:  # raw integers, negatives included, so they compare with modelUsage's
                tot[k] += _integer(raw[k])
    return TranscriptTotals(per, tuple(compactions), len(seen), bad, per_message, tuple(invalid))


def model_usage_totals(model_usage: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per model, ``result.modelUsage`` integer counts (absent or not an integer → 0, negatives
    kept; :func:`model_usage_faults` names them)."""
    return {
        str(m): {k: _integer(u.get(f)) for k, f in zip(KEYS, _MODEL_USAGE_FIELDS, strict=True)}
        for m, u in (model_usage or {}).items()
        if isinstance(u, dict)
    }


def model_usage_faults(model_usage: dict[str, Any]) -> list[str]:
    """Every ``modelUsage`` count that is present but not a non-negative integer."""
    return [f"modelUsage {m} {f} is {u.get(f)!r}"
            for m, u in sorted((model_usage or {}).items()) if isinstance(u, dict)
            for f in _MODEL_USAGE_FIELDS if u.get(f) is not None and not valid_count(u.get(f))]


def unrecovered_cut(summary: StreamSummary) -> str | None:
    """The provider stop of a session that ended on a connection failure its retries did not
    recover (a stream cut or connection dropped on every try), or None.

    Claude Code 2.1.328 ends such a session with a ``result`` whose ``is_error`` is true,
    ``api_error`` ``connection_failed`` and no ``api_error_status`` (its subtype stays
    ``success``), after its ``system/api_retry`` events."""
    res = summary.result
    if res is None or not res.get("is_error") or res.get("api_error_status") is not None:
        return None
    if res.get("api_error") != "connection_failed":
        return None
    text = str(res.get("result") or "")[:200]
    return (f"connection failure: the API stream was cut and {len(summary.retries)} retr"
            f"{'y' if len(summary.retries) == 1 else 'ies'} did not recover it ({text})")


def _unknown(reasons: list[str]) -> Usage:
    return Usage(status="unknown", reason="; ".join(reasons))


def validate_usage(
    summary: StreamSummary,
    transcripts: TranscriptTotals | None,
    *,
    runner_model: str,
    cli_version: str | None,
    timed_out: bool = False,
    answers: StreamAnswers | None = None,
) -> tuple[Usage, dict[str, Any]]:
    """(Usage, usage_accounting receipt) for one attempt. ``answers`` (from the same stdout,
    :func:`read_stream_answers`) is required for anything but ``unknown``: without it no
    answer's usage was seen."""
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
    if answers is None:
        reasons.append("the stream's answers were not read: no answer's usage was seen")
    elif answers.answers == 0:
        status = res.get("api_error_status")
        mu0 = model_usage_totals(res.get("modelUsage") or {})
        if (isinstance(status, int) and not isinstance(status, bool) and answers.cut_retries == 0
                and not model_usage_faults(res.get("modelUsage") or {})
                and not any(any(c.values()) for c in mu0.values())):
            # Every request was refused with an HTTP status (a 429, a 5xx) and none was cut
            # mid-stream: no answer was served, so nothing was spent. That zero is seen,
            # not assumed, and it is exact.
            return Usage(status="exact", input_tokens=0, cached_input_tokens=0, uncached_input_tokens=0,
                         output_tokens=0, reasoning_output_tokens=None, total_tokens=0,
                         reason=f"no answer was served: every request was refused with HTTP {status} "
                                "and none was cut mid-stream"), {**acct, "rule": "refused", "reasons": []}
        reasons.append("the stream shows no API answer: no answer's usage was seen")
    elif len(answers.faults) == answers.answers:
        reasons.append(f"no answer carried valid usage ({_fault_summary(answers)})")
    if reasons:
        return _unknown(reasons), {**acct, "reasons": reasons}
    assert answers is not None
    reasons.extend(model_usage_faults(res.get("modelUsage") or {}))
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
    bad_transcripts = [m for m in transcripts.invalid if m not in answers.faults]
    if bad_transcripts:
        reasons.append(f"transcript usage of {', '.join(bad_transcripts)} is not a non-negative count")
    if reasons:
        return _unknown(reasons), {**acct, "reasons": reasons}
    gaps: list[str] = []
    if answers.faults:
        gaps.append(f"{len(answers.faults)} of {answers.answers} answers carried no valid usage "
                    f"({_fault_summary(answers)})")
    if answers.cut_retries:
        gaps.append(f"{answers.cut_retries} API call(s) were cut mid-stream and retried; "
                    "their served tokens are reported nowhere")
    acct["answer_faults"], acct["cut_retries"] = answers.faults, answers.cut_retries
    if gaps:
        if untranscribed:  # excess over transcripts cannot be split between good and bad answers
            return _unknown([*gaps, f"untranscribed usage {untranscribed} cannot be bounded"]), {**acct, "reasons": gaps}
        known = [c for mid, (_, c) in transcripts.per_message.items() if mid not in answers.faults]
        if not any(any(c.values()) for c in known):
            return _unknown([*gaps, "no validated answer reported a token"]), {**acct, "reasons": gaps}
        return _counted(known, "lower_bound", "; ".join([*gaps, "the validated answers' counts are a lower bound"])), \
            {**acct, "reasons": gaps}
    usage = _counted(list(mu.values()), "exact",
                     f"result.modelUsage validated against transcripts ({rule}); Claude records no reasoning-output count")
    return usage, {**acct, "reasons": []}


def _fault_summary(answers: StreamAnswers) -> str:
    kinds = sorted(set(answers.faults.values()))
    return "; ".join(kinds[:3]) + (f"; +{len(kinds) - 3} more" if len(kinds) > 3 else "")


def _counted(counts: list[dict[str, int]], status: Any, reason: str) -> Usage:
    inp = sum(u["input"] + u["cache_read"] + u["cache_creation"] for u in counts)
    cached = sum(u["cache_read"] for u in counts)
    out = sum(u["output"] for u in counts)
    return Usage(status=status, input_tokens=inp, cached_input_tokens=cached, uncached_input_tokens=inp - cached,
                 output_tokens=out, reasoning_output_tokens=None, total_tokens=inp + out, reason=reason)
