"""The real Qwen Code harness (``qwen`` headless, ``--output-format stream-json``, pinned 0.24.4).

One attempt:

1. :meth:`QwenHarness.deliver` (host side) writes a private ``~/.qwen`` in the sandbox's HOME:
   ``settings.json`` (see :func:`._qwen_config.settings_json`), ``QWEN.md`` from the admitted
   guidance (none for vanilla) and standalone skills under ``skills/<name>/``. Qwen Code
   has no Claude Code / Codex plugins: an arm with plugins is refused at admission.
2. :meth:`QwenHarness.run` runs the no-model discovery (``/context -d`` with the coding
   launch's own flags and environment: the CLI lists the memory files and skills it would
   load, and makes no model call), saves ``native-treatment.json`` and stops with
   :class:`DiscoveryMismatch` before ``agent.launched`` when it differs from the declaration.
   Then it launches the pinned argv, streams stdout to ``agent/stdout.jsonl``, copies the
   CLI's usage log and chat transcript to ``agent/`` and reads usage and provider stops
   from the three (:mod:`._qwen_trace`).

The endpoint and key reach the agent process only through its environment
(``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``): the probe's fake key in a probe run; in a real
run the host's ``OPENAI_API_KEY`` (never argv, never a saved file).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, ClassVar

from ..config import ENFORCED, NOT_APPLICABLE, Capabilities, capability_entry
from ..environments import Sandbox
from ..errors import PluginBenchError
from ..events import Usage
from ..harness_registry import CliPin
from ..treatments import admit_guidance, admit_skill
from ._keyed import KeyedCliHarness, texts
from ._port import AttemptContext
from ._qwen_config import (
    DISCOVERY_PROMPT,
    KEY_VARIABLE,
    QWEN_DIR,
    REAL_BASE_URL,
    exec_argv,
    launch_env,
    settings_json,
)
from ._qwen_trace import classify_provider_stop, compare, read_context, read_stream, validate_usage

__all__ = ["QwenHarness"]

CLI = CliPin(command="qwen", package="@qwen-code/qwen-code", version="0.24.4",
             launch_flags=("--output-format", "--approval-mode", "--auth-type", "--model", "--chat-recording"),
             node_major=20)
_SETUP_TIMEOUT = 120.0


class QwenHarness(KeyedCliHarness):
    """Qwen Code adapter: see the module docstring for the whole attempt."""

    name: ClassVar[str] = "qwen"
    cli_label: ClassVar[str] = "Qwen Code"
    key_variable: ClassVar[str] = KEY_VARIABLE
    real_base_url: ClassVar[str] = REAL_BASE_URL
    config_dir: ClassVar[str] = QWEN_DIR
    config_dir_key: ClassVar[str] = "qwen_home"
    config_file: ClassVar[str] = "settings.json"
    home_instruction: ClassVar[str] = "QWEN.md"
    instruction_file: ClassVar[str | None] = "QWEN.md"
    summary: ClassVar[str] = "Qwen Code (qwen --output-format stream-json, OpenAI-compatible), the pinned CLI"
    real: ClassVar[bool] = True
    native_receipts: ClassVar[bool] = True
    cli: ClassVar[CliPin | None] = CLI
    doctor_model: ClassVar[str | None] = "qwen3-coder-plus"
    delivery_policy: ClassVar[str | None] = "qwen-native-v1"
    model_hosts: ClassVar[tuple[str, ...]] = ("api.openai.com",)

    # ------------------------------------------------------------------ declarations

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        return {"argv": exec_argv("<cli>", model=model or "<model>", prompt="<prompt>", subagents=subagents),
                "discovery": {"prompt": DISCOVERY_PROMPT, "receipt": "pluginbench.qwen.native-treatment/1"}}

    @classmethod
    def capability_policy(cls, caps: Any) -> dict[str, dict[str, Any]]:
        """Sub-agents off removes the ``agent`` tool (settings and ``--exclude-tools``);
        Qwen Code has no thread or depth setting a run could enforce beyond that."""
        on = bool(caps.subagents)
        how_off = "the agent tool is excluded (tools.exclude and --exclude-tools agent)"
        return {
            "subagents": capability_entry(on, ENFORCED, "the agent tool is offered" if on else how_off),
            "max_threads": capability_entry(caps.max_threads, NOT_APPLICABLE,
                                            "Qwen Code has no thread limit setting"),
            "max_depth": capability_entry(
                caps.max_depth, ENFORCED if on and caps.max_depth is not None else NOT_APPLICABLE,
                "native agents are off" if not on else "no depth set: the CLI default (5) applies"
                if caps.max_depth is None else f"model.maxSubagentDepth = {caps.max_depth} in the private settings"),
            "child_model": capability_entry("inherit", NOT_APPLICABLE,
                                            "sub-agents run on the session's model"),
        }

    # ------------------------------------------------------------------ instance

    def __init__(self, cli_path: str | Path, cli_version: str, probe_base_url: str | None = None, *,
                 capabilities: Capabilities | None = None) -> None:
        super().__init__(cli_path, cli_version, probe_base_url, capabilities=capabilities)
        #: the CLI's own skills, as a vanilla discovery listed them (per run)
        self._cli_skills: tuple[str, ...] | None = None

    def _config_text(self) -> str:
        return settings_json(probe=self.probe_base_url is not None, capabilities=self.capabilities)

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        base, key = self._endpoint()
        return launch_env(home=sandbox.paths.home, tmp=sandbox.paths.tmp, base_url=base, key=key)

    async def _context(self, sandbox: Sandbox, model: str) -> str:
        argv = exec_argv(self.cli_path, model=model, prompt=DISCOVERY_PROMPT, subagents=self.capabilities.subagents)
        res = await sandbox.exec(argv, cwd=sandbox.paths.app, env=self._env(sandbox), timeout=_SETUP_TIMEOUT)
        if res.exit_code != 0:
            tail = (res.stderr or res.stdout)[-1500:].decode("utf-8", "replace")
            raise PluginBenchError(f"qwen discovery ({DISCOVERY_PROMPT}) failed (exit {res.exit_code}): {tail}")
        return res.stdout.decode("utf-8", "replace")

    async def discover(self, sandbox: Sandbox, ctx: AttemptContext) -> dict[str, Any]:
        """Prove with no model call that exactly the declared guidance and skills load."""
        model = ctx.model or ""
        listing = read_context(await self._context(sandbox, model))
        t = ctx.treatment
        skills = tuple(admit_skill(s).name for s in t.skills)
        if t.is_vanilla and self._cli_skills is None and listing.ok:
            self._cli_skills = listing.skills
        receipt = compare(listing, guidance=bool(t.guidance), skills=skills, vanilla_skills=self._cli_skills)
        receipt.update(self._identity(
            ctx, exec_argv(self.cli_path, model=model, prompt="", subagents=self.capabilities.subagents)[1:-1]))
        receipt["discovery_settings"] = [DISCOVERY_PROMPT]
        if t.guidance:
            data = admit_guidance(list(t.guidance))
            receipt["qwen_md_sha256"] = hashlib.sha256(data).hexdigest()
        return receipt

    def _launch(self, ctx: AttemptContext, model: str) -> tuple[list[str], bytes | None]:
        return exec_argv(self.cli_path, model=model, prompt=ctx.task.instruction,
                         subagents=self.capabilities.subagents), None

    async def _collect(self, sandbox: Sandbox, agent_dir: Path) -> None:
        """Copy the CLI's usage log and chat transcripts out of the sandbox."""
        await self._copy_out(sandbox, agent_dir, (("usage", "usage", "*.jsonl"), ("projects", "chats", "*.jsonl")))

    @classmethod
    def _usage(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> Usage:
        """Usage from the stream, the usage log and the chat transcript, cross-checked."""
        return validate_usage(stdout, texts(agent_dir / "usage", "*.jsonl"), texts(agent_dir / "chats", "*.jsonl"),
                              timed_out=timed_out)

    @classmethod
    def _outcome(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> tuple[str | None, str | None]:
        return (classify_provider_stop(stdout, texts(agent_dir / "chats", "*.jsonl"), timed_out=timed_out),
                read_stream(stdout).error)
