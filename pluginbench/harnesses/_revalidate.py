"""Token usage of a saved attempt, re-validated with the current rules. Pure but for reading
the attempt's saved traces.

A reused vanilla attempt keeps its origin's receipts, but its usage is whatever today's
validator says about its saved evidence: Codex's ``exec --json`` stdout and session
rollouts (``agent/stdout.jsonl``, ``agent/rollouts/``), Claude Code's stream and session
transcripts (``agent/stdout.jsonl``, ``agent/transcripts/<session>.jsonl`` and its
subagents under ``agent/transcripts/<session>/``). Controls and the simulated agent keep
their recorded usage (``None``).
"""

from __future__ import annotations

from pathlib import Path

from ..events import Usage


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def revalidate_usage(
    harness: str, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
    exit_code: int | None, seconds: float,
) -> Usage | None:
    """The usage today's rules give the saved traces, or ``None`` when the harness has none."""
    agent = attempt_dir / "agent"
    if harness == "codex":
        from ._codex import read_agent_run

        rollouts = [_text(p) for p in sorted((agent / "rollouts").rglob("rollout-*.jsonl"))]
        return read_agent_run(_text(agent / "stdout.jsonl"), rollouts, exit_code=exit_code, timed_out=timed_out,
                              seconds=seconds).usage
    if harness == "claude":
        from ._claude_stream import parse_stream
        from ._claude_usage import read_transcripts, validate_usage

        folder = agent / "transcripts"
        roots = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
        totals = None
        if len(roots) == 1:
            subs_dir = folder / roots[0].stem
            subs = sorted(subs_dir.rglob("*.jsonl")) if subs_dir.is_dir() else []
            totals = read_transcripts(_text(roots[0]).splitlines(), [_text(s).splitlines() for s in subs])
        usage, _ = validate_usage(parse_stream(_text(agent / "stdout.jsonl")), totals, runner_model=model or "",
                                  cli_version=cli_version or "", timed_out=timed_out)
        return usage
    return None
