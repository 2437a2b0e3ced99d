"""The real Gemini CLI harness (``gemini -p``, ``--output-format stream-json``, pinned 0.61.0).

One attempt:

1. :meth:`GeminiHarness.deliver` (host side) writes a private ``~/.gemini`` in the sandbox's
   HOME: ``settings.json`` (see :func:`._gemini_trace.settings_json`), ``GEMINI.md`` from the
   admitted guidance (none for vanilla) and standalone skills under ``skills/<name>/``.
   Gemini CLI has no Claude Code / Codex plugins: an arm with plugins is refused at admission.
2. :meth:`GeminiHarness.run` writes the receipt ``native-treatment.json``. Gemini CLI 0.61.0
   has no discovery that makes no model call (``/memory list`` answers, then still sends the
   prompt), so the receipt is the labelled ``delivered-home`` listing: the context files and
   skills present in the private ``~/.gemini`` the CLI is launched with, against the
   declaration. Then it launches the pinned argv, streams stdout to
   ``agent/stdout.jsonl``, copies the chat transcript to ``agent/chats/`` and reads usage
   and provider stops from the two (:mod:`._gemini_trace`).

The endpoint and key reach the agent process only through its environment
(``GOOGLE_GEMINI_BASE_URL`` / ``GEMINI_API_KEY``): the probe's fake key in a probe run; in
a real run the host's ``GEMINI_API_KEY`` (never argv, never a saved file).
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from ..config import ENFORCED, NOT_APPLICABLE, capability_entry
from ..environments import OUTPUT_FILE_BYTES, Sandbox
from ..events import Usage
from ..harness_registry import CliPin
from ..treatments import admit_guidance, admit_skill
from ._gemini_trace import (
    GEMINI_DIR,
    REAL_BASE_URL,
    RECEIPT_SCHEMA,
    classify_provider_stop,
    exec_argv,
    launch_env,
    read_stream,
    settings_json,
    validate_usage,
)
from ._keyed import KeyedCliHarness, text, texts
from ._port import AttemptContext

__all__ = ["GeminiHarness"]

CLI = CliPin(command="gemini", package="@google/gemini-cli", version="0.61.0",
             launch_flags=("--output-format", "--approval-mode", "--model", "--prompt"),
             # the package needs node 20+: a docker coding image carries the host's node privately
             node_major=20)
#: The host variable a real run's key is read from.
KEY_VARIABLE = "GEMINI_API_KEY"


def delivered_receipt(home: Path, *, guidance: bytes | None, skills: tuple[str, ...]) -> dict[str, Any]:
    """The ``delivered-home`` receipt: what the private ``~/.gemini`` holds that Gemini CLI
    loads (context files named ``GEMINI.md`` or ``AGENTS.md`` anywhere in it, skills under
    ``skills/``) against the declaration. A mismatch: the declared GEMINI.md missing or
    different, one present for an arm without guidance, any other context file, a declared
    skill missing or an undeclared one present."""
    gem = home / GEMINI_DIR
    mismatches: list[str] = []
    context = sorted(str(p.relative_to(home)) for name in ("GEMINI.md", "AGENTS.md") for p in gem.rglob(name)
                     if "skills" not in p.relative_to(gem).parts)
    main = gem / "GEMINI.md"
    loaded = main.read_bytes() if main.is_file() else None
    if guidance is not None and loaded != guidance:
        mismatches.append("the declared guidance ~/.gemini/GEMINI.md is missing or differs")
    if guidance is None and loaded is not None:
        mismatches.append("~/.gemini/GEMINI.md is present but the arm declares no guidance")
    mismatches += [f"context file ~/{c} is outside the treatment" for c in context if c != f"{GEMINI_DIR}/GEMINI.md"]
    present = sorted(p.parent.name for p in (gem / "skills").glob("*/SKILL.md")) if (gem / "skills").is_dir() else []
    mismatches += [f"the declared skill {s!r} is not delivered" for s in skills if s not in present]
    mismatches += [f"skill {s!r} is outside the treatment" for s in present if s not in skills]
    return {
        "schema": RECEIPT_SCHEMA, "method": "delivered-home",
        "method_note": "Gemini CLI 0.61.0 has no discovery without a model call (/memory list still sends "
                       "the prompt); this lists the private ~/.gemini it is launched with",
        "ok": not mismatches, "passed": not mismatches, "mismatches": mismatches,
        "memory_files": [f"~/{c}" for c in context], "guidance_loaded": loaded is not None,
        "gemini_md_sha256": hashlib.sha256(loaded).hexdigest() if loaded is not None else None,
        "skills_loaded": [s for s in present if s in skills], "model_calls": 0,
    }


class GeminiHarness(KeyedCliHarness):
    """Gemini CLI adapter: see the module docstring for the whole attempt."""

    name: ClassVar[str] = "gemini"
    cli_label: ClassVar[str] = "Gemini CLI"
    key_variable: ClassVar[str] = KEY_VARIABLE
    real_base_url: ClassVar[str] = REAL_BASE_URL
    probe_api: ClassVar[str] = "gemini"
    probe_vars: ClassVar[tuple[str, str]] = ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY")
    config_dir: ClassVar[str] = GEMINI_DIR
    config_dir_key: ClassVar[str] = "gemini_home"
    config_file: ClassVar[str] = "settings.json"
    home_instruction: ClassVar[str] = "GEMINI.md"
    summary: ClassVar[str] = "Gemini CLI (gemini -p --output-format stream-json, Gemini API), the pinned CLI"
    real: ClassVar[bool] = True
    native_receipts: ClassVar[bool] = True
    cli: ClassVar[CliPin | None] = CLI
    doctor_model: ClassVar[str | None] = "gemini-2.5-pro"
    delivery_policy: ClassVar[str | None] = "gemini-native-v1"
    #: what a generated-guidance arm's session writes: the context file its settings name
    instruction_file: ClassVar[str | None] = "GEMINI.md"
    model_hosts: ClassVar[tuple[str, ...]] = ("generativelanguage.googleapis.com",)

    # ------------------------------------------------------------------ declarations

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        return {"argv": exec_argv("<cli>", model=model or "<model>", prompt="<prompt>"),
                "discovery": {"method": "delivered-home", "receipt": RECEIPT_SCHEMA},
                "subagents": subagents}

    @classmethod
    def capability_policy(cls, caps: Any) -> dict[str, dict[str, Any]]:
        """Sub-agents off removes the ``invoke_agent`` tool (``tools.exclude``); Gemini CLI
        has no thread or depth setting a run could enforce."""
        on = bool(caps.subagents)
        return {
            "subagents": capability_entry(on, ENFORCED, "the invoke_agent tool is offered" if on
                                          else "the invoke_agent tool is excluded (tools.exclude)"),
            "max_threads": capability_entry(caps.max_threads, NOT_APPLICABLE, "Gemini CLI has no thread limit setting"),
            "max_depth": capability_entry(caps.max_depth, NOT_APPLICABLE, "Gemini CLI has no depth setting"),
            "child_model": capability_entry("inherit", NOT_APPLICABLE, "sub-agents run on the session's model"),
        }

    # ------------------------------------------------------------------ instance

    def _config_text(self) -> str:
        return settings_json(probe=self.probe_base_url is not None, capabilities=self.capabilities)

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        base, key = self._endpoint()
        return launch_env(home=sandbox.paths.home, tmp=sandbox.paths.tmp, base_url=base, key=key)

    async def discover(self, sandbox: Sandbox, ctx: AttemptContext) -> dict[str, Any]:
        """The ``delivered-home`` receipt of the sandbox's private ``~/.gemini``."""
        t = ctx.treatment
        with tempfile.TemporaryDirectory(prefix="pb-gemini-") as tmp:
            got = Path(tmp) / "home" / GEMINI_DIR
            try:
                await sandbox.get(f"{sandbox.paths.home}/{GEMINI_DIR}", got, limit=OUTPUT_FILE_BYTES)
            except Exception:  # noqa: BLE001 - nothing delivered: the receipt says so
                got.mkdir(parents=True, exist_ok=True)
            receipt = delivered_receipt(Path(tmp) / "home",
                                        guidance=admit_guidance(list(t.guidance)) if t.guidance else None,
                                        skills=tuple(admit_skill(s).name for s in t.skills))
        receipt.update(self._identity(ctx, exec_argv(self.cli_path, model=ctx.model or "", prompt="")[1:-1]))
        return receipt

    def _launch(self, ctx: AttemptContext, model: str) -> tuple[list[str], bytes | None]:
        return exec_argv(self.cli_path, model=model, prompt=ctx.task.instruction), None

    async def _collect(self, sandbox: Sandbox, agent_dir: Path) -> None:
        """Copy the CLI's chat transcripts out of the sandbox."""
        await self._copy_out(sandbox, agent_dir, (("tmp", "chats", "chats/*.jsonl"),))

    @classmethod
    def _usage(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> Usage:
        """Usage from the stream and the chat transcript, cross-checked."""
        return validate_usage(stdout, texts(agent_dir / "chats", "*.jsonl"), timed_out=timed_out)

    @classmethod
    def _outcome(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> tuple[str | None, str | None]:
        return (classify_provider_stop(stdout, text(agent_dir / "stderr.txt"), timed_out=timed_out),
                read_stream(stdout).error)
