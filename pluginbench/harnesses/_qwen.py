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
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from ..config import ENFORCED, NOT_APPLICABLE, Capabilities, capability_entry, capability_record
from ..environments import Sandbox
from ..errors import DiscoveryMismatch, InputError, PluginBenchError
from ..events import Usage
from ..harness_registry import CliPin
from ..treatments import admit_guidance, admit_skill
from ._keyed import KeyedCliHarness
from ._port import AgentRun, AttemptContext, FrozenTreatment, tool_roots
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


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _texts(folder: Path, pattern: str) -> str:
    return "".join(_text(p) for p in sorted(folder.rglob(pattern))) if folder.is_dir() else ""


class QwenHarness(KeyedCliHarness):
    """Qwen Code adapter: see the module docstring for the whole attempt."""

    name: ClassVar[str] = "qwen"
    cli_label: ClassVar[str] = "Qwen Code"
    key_variable: ClassVar[str] = KEY_VARIABLE
    real_base_url: ClassVar[str] = REAL_BASE_URL
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

    @classmethod
    def for_run(cls, ev: Any, *, cli_path: str | Path | None, cli_version: str | None,
                probe_base_url: str | None) -> QwenHarness:
        return cls(str(cli_path), cli_version or "", probe_base_url, capabilities=ev.capabilities)

    @classmethod
    def revalidate_usage(cls, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
                         exit_code: int | None, seconds: float) -> Usage | None:
        agent = attempt_dir / "agent"
        return validate_usage(_text(agent / "stdout.jsonl"), _texts(agent / "usage", "*.jsonl"),
                              _texts(agent / "chats", "*.jsonl"), timed_out=timed_out)

    # ------------------------------------------------------------------ instance

    def __init__(self, cli_path: str | Path, cli_version: str, probe_base_url: str | None = None, *,
                 capabilities: Capabilities | None = None) -> None:
        self.cli_path = str(cli_path)
        self.cli_version = cli_version
        self.probe_base_url = probe_base_url
        self.capabilities = capabilities if capabilities is not None else Capabilities()
        self.readonly = tool_roots(cli_path) if Path(cli_path).exists() else ()
        #: the CLI's own skills, as a vanilla discovery listed them (per run)
        self._cli_skills: tuple[str, ...] | None = None

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        base, key = self._endpoint()
        return launch_env(home=sandbox.paths.home, tmp=sandbox.paths.tmp, base_url=base, key=key)

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the private ``~/.qwen`` into ``home``; return the delivery receipt."""
        self._refuse_plugins(treatment)
        qwen = home / QWEN_DIR
        qwen.mkdir(parents=True, exist_ok=True)
        settings = settings_json(probe=self.probe_base_url is not None, capabilities=self.capabilities)
        (qwen / "settings.json").write_text(settings, encoding="utf-8")
        receipt: dict[str, Any] = {
            "harness": self.name, "cli_version": self.cli_version, "probe": self.probe_base_url is not None,
            "qwen_home": QWEN_DIR, "qwen_md": None, "skills": [],
            "settings_json_sha256": hashlib.sha256(settings.encode()).hexdigest(),
            "capabilities": capability_record(self.name, self.capabilities),
            "credential": self._credential_label(),
        }
        return self._deliver_files(treatment, qwen, "QWEN.md", receipt, "qwen_md")

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
        receipt.update({
            "harness": self.name, "cli_version": self.cli_version, "arm": t.arm,
            "probe": self.probe_base_url is not None,
            "launch_argv": exec_argv(self.cli_path, model=model, prompt="", subagents=self.capabilities.subagents)[1:-1],
            "discovery_settings": [DISCOVERY_PROMPT],
        })
        if t.guidance:
            data = admit_guidance(list(t.guidance))
            receipt["qwen_md_sha256"] = hashlib.sha256(data).hexdigest()
        return receipt

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Discover, launch the pinned headless ``qwen``, read its three usage records."""
        if not ctx.model:
            raise InputError("the qwen harness needs an exact model id", field="runner.model",
                             fix='set runner.model, e.g. "qwen3-coder-plus"')
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        receipt = await self.discover(sandbox, ctx)
        (ctx.attempt_dir / "native-treatment.json").write_text(json.dumps(receipt, indent=2, sort_keys=True) + "\n",
                                                               encoding="utf-8")
        if not receipt["ok"]:
            raise DiscoveryMismatch(f"attempt {ctx.attempt_id}", receipt["mismatches"])
        argv = exec_argv(self.cli_path, model=ctx.model, prompt=ctx.task.instruction,
                         subagents=self.capabilities.subagents)
        await ctx.launched(argv)
        res = await sandbox.exec(argv, cwd=sandbox.paths.app, env=self._env(sandbox), timeout=ctx.timeout_seconds,
                                 stdout_path=agent_dir / "stdout.jsonl", stderr_path=agent_dir / "stderr.txt")
        await self._collect(sandbox, agent_dir)
        return read_agent_run(agent_dir, exit_code=res.exit_code, timed_out=res.timed_out, seconds=res.seconds)

    async def _collect(self, sandbox: Sandbox, agent_dir: Path) -> None:
        """Copy the CLI's usage log and chat transcripts out of the sandbox."""
        with tempfile.TemporaryDirectory(prefix="pb-qwen-") as tmp:
            for sub, dest, pattern in (("usage", "usage", "*.jsonl"), ("projects", "chats", "*.jsonl")):
                got = Path(tmp) / sub
                try:
                    await sandbox.get(f"{sandbox.paths.home}/{QWEN_DIR}/{sub}", got)
                except Exception:  # noqa: BLE001 - nothing recorded: usage becomes unknown
                    continue
                (agent_dir / dest).mkdir(exist_ok=True)
                for f in sorted(got.rglob(pattern)):
                    shutil.copyfile(f, agent_dir / dest / f.name)


def read_agent_run(agent_dir: Path, *, exit_code: int | None, timed_out: bool, seconds: float) -> AgentRun:
    """The :class:`AgentRun` of one session from its saved stdout, usage log and transcript."""
    stdout = _text(agent_dir / "stdout.jsonl")
    transcript = _texts(agent_dir / "chats", "*.jsonl")
    usage = validate_usage(stdout, _texts(agent_dir / "usage", "*.jsonl"), transcript, timed_out=timed_out)
    stop = classify_provider_stop(stdout, transcript, timed_out=timed_out)
    error = read_stream(stdout).error
    if error is None and not timed_out and exit_code not in (0, None):
        error = f"qwen exited {exit_code} without an error result"
    return AgentRun(exit_code=exit_code, timed_out=timed_out, coding_seconds=seconds, usage=usage,
                    error=error, provider_stop=stop)
