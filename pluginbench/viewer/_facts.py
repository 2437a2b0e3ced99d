"""The facts of one attempt, and the attempts of a run: what ``pluginbench show`` prints and
the dashboard's attempt page renders, from one function each so the two never drift.

Inputs are a run folder and an attempt id; outputs are frozen values
(:class:`AttemptFacts`, :class:`AttemptRow`). The run's state comes from the one status
code (a fold of ``events.jsonl``, with no Docker check); the report's row
(``report/results.json``) adds what only the report knows (token breakdown, dollars,
native grading, source-only grade) when the run has one. Files come from the attempt's
evidence folder through :mod:`._evidence` (no symlink, nothing outside the folder).
Unknown stays ``None`` with the reason, never zero.
"""

from pathlib import Path
from typing import Any

import msgspec

from .._parsing import loads_json
from ..errors import InputError, PluginBenchError
from ..rundir import RunDir, refuse_lost_settings
from ._diff import PatchFile, split_patch
from ._evidence import list_files, read_text, require_attempt, safe_file
from ._transcript import Timeline, claude_timeline, codex_timeline, totals

#: The ``show --json`` schema version (docs/viewer.md).
SHOW_SCHEMA_VERSION = 1
#: Lines of the verifier's output kept (its tail).
TAIL_LINES = 40


class AttemptRow(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt in the run's list (``show <run>``)."""

    attempt_id: str
    task: str
    arm: str
    repeat: int | None
    state: str
    outcome: str | None
    outcome_reason: str | None
    tokens: int | None
    tokens_status: str | None
    reused: bool


class Measure(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    value: Any
    unit: str | None
    status: str | None
    reason: str | None


class Review(msgspec.Struct, frozen=True, kw_only=True):
    revision: str
    findings: list[dict[str, Any]] | None  # None: the review gave no valid findings
    reason: str | None


class AttemptFacts(msgspec.Struct, frozen=True, kw_only=True):
    """Everything ``show <run> <id>`` prints (``--json``: this, as JSON)."""

    schema_version: int = SHOW_SCHEMA_VERSION
    run: str  # the evaluation's name
    attempt_id: str
    task: str | None
    arm: str | None
    repeat: int | None
    harness: str | None
    model: str | None
    reasoning: str | None
    state: str | None
    outcome: str | None
    outcome_reason: str | None
    reward: float | None
    native_grading: dict[str, Any] | None  # reward.json beyond reward (f2p/p2p...), None for reward.txt
    verifier_result: dict[str, Any] | None  # the whole reward.json the verifier wrote, when it wrote one
    tokens: dict[str, Any] | None  # the report's token row, else execution.json usage
    usd: float | None
    usd_reason: str | None
    coding_seconds: float | None
    exit_code: int | None
    timed_out: bool | None
    error: str | None
    provider_stop: str | None
    measures: list[Measure]
    reviews: list[Review]
    activation: dict[str, Any] | None
    reused_from: dict[str, Any] | None
    patch: str | None  # model.patch as text (cut when very large)
    patch_files: list[PatchFile]
    patch_dropped: str | None  # model.patch.dropped.txt
    timeline: Timeline
    timeline_totals: dict[str, int]
    verifier_tail: str | None  # the last lines of grading/test-stdout.txt and test-stderr.txt
    apply_failure: str | None  # grading/apply.txt
    receipt: dict[str, Any] | None  # native-treatment.json: what the harness discovered (loaded)
    delivery: dict[str, Any] | None  # delivery.json: what was delivered where
    delivered_files: list[str]  # files under delivery/ (the treatment as the agent got it)
    evidence: str  # the folder, relative to the run directory
    files: list[tuple[str, int]]  # every evidence file (relative path, bytes)
    notes: list[str]


def _json(folder: Path, rel: str) -> Any:
    text = read_text(folder, rel)
    if text is None:
        return None
    try:
        return loads_json(text)
    except ValueError:
        return None


def run_status(run_dir: Path) -> dict[str, Any]:
    """The run's status snapshot; a run that cannot be read (a damaged log) is refused as bad input."""
    from ..status import status_snapshot

    try:
        return status_snapshot(run_dir, check_left_running=False)
    except InputError:
        raise  # it already names the file, the field and the fix (a damaged log, a changed evaluation.json)
    except (PluginBenchError, OSError, ValueError, msgspec.MsgspecError) as exc:
        raise InputError(f"{run_dir}: the run cannot be read ({exc})", file=str(run_dir / "events.jsonl"),
                         fix="pass a run directory (it holds evaluation.json and events.jsonl)") from exc


def _results(run_dir: Path) -> dict[str, Any] | None:
    text = read_text(run_dir / "report", "results.json", limit=512 << 20)
    if text is None:
        return None
    try:
        doc = loads_json(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("attempts"), list) else None


def require_run(run_dir: Path) -> Path:
    if not RunDir(run_dir).is_run():
        refuse_lost_settings(RunDir(run_dir))
        raise InputError(f"{run_dir} is not a run directory (no evaluation.json and evaluation-binding.json)",
                         file=str(run_dir), fix="pass the folder `pluginbench run` wrote (runs/<run>)")
    return run_dir


def attempt_rows(run_dir: Path) -> list[AttemptRow]:
    """Every attempt of the run (status's list), sorted by task, arm and repeat."""
    require_run(run_dir)
    snap = run_status(run_dir)
    rows = [AttemptRow(attempt_id=str(a["id"]), task=str(a["task"]), arm=str(a["arm"]), repeat=a.get("repeat"),
                       state=str(a.get("state")), outcome=a.get("outcome"), outcome_reason=a.get("outcome_reason"),
                       tokens=a.get("tokens"), tokens_status=a.get("tokens_status"), reused=bool(a.get("reused")))
            for a in snap.get("attempts") or []]
    return sorted(rows, key=lambda r: (r.task, r.arm != "vanilla", r.arm, r.repeat or 0))


def load_timeline(folder: Path) -> Timeline:
    """The attempt's agent trace as a timeline (see :mod:`._transcript`)."""
    files = [p for p, _ in list_files(folder / "agent")] if (folder / "agent").is_dir() else []
    agent = folder / "agent"
    stdout = read_text(agent, "stdout.jsonl") if "stdout.jsonl" in files else None
    roots = [p for p in files if p.startswith("transcripts/") and p.count("/") == 1 and p.endswith(".jsonl")]
    if roots:
        root = roots[0]
        stem = root[len("transcripts/"):-len(".jsonl")]
        subs = [(p.split("/")[-1], read_text(agent, p) or "") for p in files
                if p.startswith(f"transcripts/{stem}/") and p.endswith(".jsonl")]
        tl = claude_timeline(read_text(agent, root) or "", root.split("/")[-1], subs, stream=stdout)
        if len(roots) > 1:
            tl = msgspec.structs.replace(tl, notes=tl.notes + (f"{len(roots) - 1} more root transcript(s) not shown",))
        return tl
    rollouts = sorted(p for p in files if p.startswith("rollouts/") and p.rsplit("/", 1)[-1].startswith("rollout-"))
    if rollouts or (stdout and '"thread.started"' in stdout):
        return codex_timeline([(p.rsplit("/", 1)[-1], read_text(agent, p) or "") for p in rollouts], stdout)
    if stdout is not None and '"type":"assistant"' in stdout.replace(" ", ""):
        return claude_timeline(stdout, "stdout.jsonl")
    return Timeline(harness=None, source=None, root=None, notes=("no agent trace was saved",))


def _tail(folder: Path) -> str | None:
    parts = []
    for name in ("test-stdout.txt", "test-stderr.txt"):
        text = read_text(folder / "grading", name)
        if text and text.strip():
            lines = text.rstrip("\n").split("\n")
            cut = f"… ({len(lines) - TAIL_LINES} earlier lines)\n" if len(lines) > TAIL_LINES else ""
            parts.append(f"── {name}\n{cut}" + "\n".join(lines[-TAIL_LINES:]))
    return "\n".join(parts) or None


def _reviews(run_dir: Path, attempt_id: str) -> list[Review]:
    base = RunDir(run_dir).evidence / "reviews"
    out: list[Review] = []
    if not base.is_dir() or base.is_symlink():
        return out
    for rev in sorted(p.name for p in base.iterdir() if p.is_dir() and not p.is_symlink()):
        doc = _json(base / rev, f"{attempt_id}/review.json")
        if doc is None:
            continue
        findings = doc.get("findings") if isinstance(doc, dict) else None
        out.append(Review(revision=rev, findings=findings if isinstance(findings, list) else None,
                          reason=doc.get("reason") if isinstance(doc, dict) else "review.json is not an object"))
    return out


def attempt_facts(run_dir: Path, attempt_id: str) -> AttemptFacts:
    """The facts of one attempt (bad input: no such run or attempt, exit 2)."""
    require_run(run_dir)
    folder = require_attempt(run_dir, attempt_id)
    snap = run_status(run_dir)
    row = next((a for a in snap.get("attempts") or [] if a.get("id") == attempt_id), None)
    results = _results(run_dir)
    rep = next((a for a in (results or {}).get("attempts") or [] if a.get("attempt_id") == attempt_id), None)
    cost = ((results or {}).get("costs") or {}).get("attempts", {}).get(attempt_id) if results else None
    execution = _json(folder, "execution.json") or {}
    invocation = _json(folder, "invocation.json") or {}
    notes: list[str] = []
    if row is None:
        notes.append("the log does not list this attempt as live (a discarded attempt?)")
    if results is None:
        notes.append("no report yet: dollars, token breakdown and native grading come from `pluginbench report`")
    src = rep or row or {}
    measures_src = (rep or {}).get("measures") or (row or {}).get("measures") or {}
    measures = [Measure(name=k, value=v.get("value"), unit=v.get("unit"), status=v.get("status"), reason=v.get("reason"))
                for k, v in sorted(measures_src.items()) if isinstance(v, dict)]
    verifier = _json(folder, "grading/verifier/reward.json")
    reward = (rep or {}).get("reward")
    if reward is None:
        txt = read_text(folder, "grading/verifier/reward.txt")
        try:
            reward = float(txt.strip()) if txt else None
        except ValueError:
            reward = None
    tokens = (rep or {}).get("tokens") or execution.get("usage")
    patch = read_text(folder, "model.patch")
    timeline = load_timeline(folder)
    delivery_files = [p for p, _ in list_files(folder / "delivery")] if safe_file(folder, "delivery.json") or (
        folder / "delivery").is_dir() else []
    run_info = (results or {}).get("run") or {}
    return AttemptFacts(
        run=str(snap.get("name") or run_info.get("name") or run_dir.name),
        attempt_id=attempt_id,
        task=src.get("task") or invocation.get("task"),
        arm=src.get("arm") or invocation.get("arm"),
        repeat=src.get("repeat"),
        harness=invocation.get("harness") or snap.get("harness"),
        model=invocation.get("model") or snap.get("model"),
        reasoning=invocation.get("reasoning") or snap.get("reasoning"),
        state=(row or {}).get("state") or (rep or {}).get("state"),
        outcome=src.get("outcome"),
        outcome_reason=src.get("outcome_reason"),
        reward=reward,
        native_grading=src.get("native_grading"),
        verifier_result=verifier if isinstance(verifier, dict) else None,
        tokens=tokens if isinstance(tokens, dict) else None,
        usd=(cost or {}).get("usd"),
        usd_reason=(cost or {}).get("reason") if cost else ("no report yet" if results is None else "not in the report"),
        coding_seconds=(rep or {}).get("coding_seconds", execution.get("coding_seconds")),
        exit_code=execution.get("exit_code"),
        timed_out=execution.get("timed_out"),
        error=execution.get("error"),
        provider_stop=execution.get("provider_stop"),
        measures=measures,
        reviews=_reviews(run_dir, attempt_id),
        activation=_json(folder, "measure/activation/activation.json"),
        reused_from=_json(folder, "reused.json"),
        patch=patch,
        patch_files=split_patch(patch or ""),
        patch_dropped=read_text(folder, "model.patch.dropped.txt"),
        timeline=timeline,
        timeline_totals=totals(timeline.root),
        verifier_tail=_tail(folder),
        apply_failure=read_text(folder / "grading", "apply.txt"),
        receipt=_json(folder, "native-treatment.json"),
        delivery=_json(folder, "delivery.json"),
        delivered_files=delivery_files,
        evidence=folder.relative_to(run_dir).as_posix(),
        files=list_files(folder),
        notes=notes,
    )


def facts_json(facts: AttemptFacts) -> bytes:
    """``show --json``: the facts as sorted, indented JSON."""
    return msgspec.json.format(msgspec.json.encode(msgspec.to_builtins(facts, order="sorted")), indent=2)
