"""What Claude Code's harness says before any attempt runs (the class side of
:class:`~._claude.ClaudeHarness`): its launch identity and pinned facts, the config and
credential rules, the capability policy, and the usage re-read from saved evidence.

Pure of sandboxes and processes: ``check``, ``doctor``, ``run --dry-run`` and the report
ask these without a harness instance.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..config import ENFORCED, NOT_ENFORCED, capability_entry
from ..errors import ConfigError, InputError
from ..events import Usage
from ..harness_registry import SpecProblem
from ..treatments import admit_claude_treatment
from ._claude_discovery import discovery_argv
from ._claude_launch import (
    CLI,
    PINNED_VERSION,
    TOKEN_VARIABLE,
    check_model,
    check_operator_env,
    spec_problem,
)
from ._claude_stream import decode_stream, final_and_writes, parse_decoded
from ._claude_usage import read_transcripts, stream_answers, validate_usage
from ._port import HarnessBase


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


class ClaudeHarnessRules(HarnessBase):
    """The class-level facts and checks of the Claude Code harness (see the module docstring)."""


    name = "claude"
    instruction_file = "CLAUDE.md"
    summary = "Claude Code (stream-json), the pinned CLI"
    real = True
    reviewer = True
    native_receipts = True
    agent_traces = True
    cli = CLI
    doctor_model = "claude-sonnet-4-5"
    #: the Messages API (the OAuth token is used there too); nonessential traffic is off
    model_hosts = ("api.anthropic.com",)
    delivery_policy = "claude-native-v1"

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        from . import _claude_launch as cl
        from ._claude_discovery import REQUESTS, SCHEMA

        m, effort = model or "<model>", reasoning or "<effort>"
        return {
            # Discovery runs first with hooks disabled; then the coding process.
            "argv": cl.session_argv("<cli>", m, effort, "<session>", subagents=subagents),
            "discovery_argv": discovery_argv(cl.session_argv("<cli>", m, effort, "<session>", subagents=subagents),
                                             "<discovery-session>"),
            "discovery": {"control_requests": [[sub, params] for sub, params in REQUESTS], "receipt": SCHEMA},
            "refused_variables": sorted(cl.REFUSED_VARIABLES),
            "settings": cl.PINNED_SETTINGS,
            "builtin_agents": sorted(cl.BUILTIN_AGENTS),
            "init_tools": sorted(cl.PINNED_TOOLS.get(m, ())),
            "pinned_version": cl.PINNED_VERSION,
        }

    @classmethod
    def uncacheable_cli(cls, cli_version: str | None) -> str | None:
        """Claude Code's built-in commands, agents and init tools are part of the vanilla
        arm, and PluginBench pins them for one CLI version only; any other version codes its
        own vanilla arm every run."""
        if cli_version != PINNED_VERSION:
            return (f"Claude Code {cli_version} is not {PINNED_VERSION}, the version whose built-ins PluginBench pins; "
                    "this run codes its own vanilla arm and publishes nothing")
        return None

    @classmethod
    def spec_problem(cls, model: str | None, reasoning: str | None) -> SpecProblem | None:
        return spec_problem(model, reasoning)

    @classmethod
    def validate_config(cls, ev: Any, path: Path) -> None:
        """Claude Code enforces neither thread nor depth limits: refuse them."""
        for key in ("max_threads", "max_depth"):
            if getattr(ev.capabilities, key) is not None:
                raise ConfigError(f"capabilities.{key} is not enforced by Claude Code", file=str(path),
                                  field=f"capabilities.{key}", fix="remove it for runner.harness: claude")

    @classmethod
    def admit_evaluation(cls, ev: Any, *, probe: bool) -> None:
        """Every treatment admissible for Claude Code; the operator environment holds the
        token (and no refused variable; no token for a probe run)."""
        check_operator_env(os.environ, probe=probe)
        for t in ev.treatments.values():
            admit_claude_treatment(tuple(Path(p) for p in t.guidance), tuple(Path(p) for p in t.skills),
                                   tuple(Path(p) for p in t.plugins))

    @classmethod
    def read_final(cls, stdout: str) -> tuple[str | None, list[str]]:
        return final_and_writes(stdout)

    @classmethod
    def check_launch(cls, model: str | None, reasoning: str | None) -> None:
        check_model(model, reasoning)

    @classmethod
    def revalidate_usage(cls, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
                         exit_code: int | None, seconds: float | None) -> Usage | None:
        """Its stream and session transcripts (``agent/stdout.jsonl``,
        ``agent/transcripts/<session>.jsonl`` and its subagents under ``<session>/``)."""
        agent = attempt_dir / "agent"
        folder = agent / "transcripts"
        roots = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
        totals = None
        if len(roots) == 1:
            subs_dir = folder / roots[0].stem
            subs = sorted(subs_dir.rglob("*.jsonl")) if subs_dir.is_dir() else []
            totals = read_transcripts(_text(roots[0]).splitlines(), [_text(s).splitlines() for s in subs])
        events, bad = decode_stream(_text(agent / "stdout.jsonl"))
        usage, _ = validate_usage(parse_decoded(events, bad), totals, runner_model=model or "",
                                  cli_version=cli_version or "", timed_out=timed_out, answers=stream_answers(events))
        return usage

    @classmethod
    def capability_policy(cls, caps: Any) -> dict[str, dict[str, Any]]:
        """The Agent tool is disallowed for ``subagents: false``; no concurrency or depth limit."""
        return {
            "subagents": capability_entry(caps.subagents, ENFORCED, "the Agent tool is disallowed"
                                          if not caps.subagents else "the Agent tool is allowed"),
            "max_threads": capability_entry(caps.max_threads, NOT_ENFORCED, "Claude Code has no concurrency limit"),
            "max_depth": capability_entry(caps.max_depth, NOT_ENFORCED, "Claude Code has no depth limit"),
        }

    @classmethod
    def check_reviewer_host(cls, cli_path: Path, *, probe: bool, field: str, file: str | None) -> None:
        """Credentials exactly as coding runs take them: the subscription token only."""
        check_operator_env(os.environ, probe=probe)
        if not probe and not os.environ.get(TOKEN_VARIABLE):
            raise InputError(f"the Claude reviewer needs {TOKEN_VARIABLE}", field=f"{field}.harness",
                             fix=f"export {TOKEN_VARIABLE} (from `claude setup-token`)")

    @classmethod
    def reviewer_options(cls) -> dict[str, Any]:
        return {"subagents": False}

    @classmethod
    def credential_check(cls) -> tuple[bool, str]:
        if os.environ.get(TOKEN_VARIABLE):
            return True, f"{TOKEN_VARIABLE} is set (validity not checked)"
        return False, f"{TOKEN_VARIABLE} is not set (needed for real runs, not for probe runs)"

    @classmethod
    def doctor_options(cls) -> dict[str, Any]:
        """The doctor's attempt is a probe run: the real token is left out."""
        return {"environ": {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}}
