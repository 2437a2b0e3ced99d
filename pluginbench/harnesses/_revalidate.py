"""Token usage of a saved attempt, re-validated with the current rules. Pure but for reading
the attempt's saved traces.

A reused vanilla attempt keeps its origin's receipts, but its usage is whatever today's
validator says about its saved evidence: Codex's ``exec --json`` stdout and session
rollouts (``agent/stdout.jsonl``, ``agent/rollouts/``), Claude Code's stream and session
transcripts (``agent/stdout.jsonl``, ``agent/transcripts/<session>.jsonl`` and its
subagents under ``agent/transcripts/<session>/``). Controls and the simulated agent keep
their recorded usage (``None``). Each harness declares how
(:meth:`~pluginbench.harnesses.HarnessBase.revalidate_usage`).
"""

from __future__ import annotations

from pathlib import Path

from ..events import Usage
from ..harness_registry import harness_class, is_registered


def revalidate_usage(
    harness: str, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
    exit_code: int | None, seconds: float | None,
) -> Usage | None:
    """The usage today's rules give the saved traces, or ``None`` when the harness has none
    (or no harness is registered under the name)."""
    if not is_registered(harness):
        return None
    usage: Usage | None = harness_class(harness).revalidate_usage(
        attempt_dir, model=model, cli_version=cli_version, timed_out=timed_out, exit_code=exit_code, seconds=seconds)
    return usage
