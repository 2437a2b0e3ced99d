"""The real opencode harness (``opencode run --format json``, pinned 1.18.33).

One attempt:

1. :meth:`OpencodeHarness.deliver` (host side) writes a private ``~/.config/opencode`` in
   the sandbox's HOME: ``opencode.json`` (see :func:`._opencode_config.config_json`: one
   OpenAI-compatible provider, the probe's or the real endpoint), ``AGENTS.md`` from the
   admitted guidance (none for vanilla: opencode's own global instruction file) and
   standalone skills under ``skills/<name>/``. opencode has no Claude Code / Codex plugins:
   an arm with plugins is refused at admission.
2. :meth:`OpencodeHarness.run` runs the no-model discovery (``opencode debug paths``,
   ``debug skill``, ``debug config`` with the launch's own environment and folder), saves
   ``native-treatment.json`` and stops with :class:`DiscoveryMismatch` before
   ``agent.launched`` when it differs from the declaration. Then it launches the pinned
   argv with the instruction on stdin, streams stdout to ``agent/stdout.jsonl``, exports
   the stored session(s) to ``agent/sessions/`` (``opencode export``, no model call) and
   reads usage and provider stops from them (:mod:`._opencode_trace`).

The key reaches the agent process only through its environment (``OPENAI_API_KEY``, which
the private config names as ``{env:OPENAI_API_KEY}``): the probe's fake key in a probe run,
the host's ``OPENAI_API_KEY`` in a real run (never argv, never a saved file).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

from ..config import ENFORCED, NOT_APPLICABLE, Capabilities, capability_entry, capability_record
from ..environments import Sandbox
from ..errors import DiscoveryMismatch, InputError, PluginBenchError
from ..events import Usage
from ..harness_registry import CliPin
from ..treatments import admit_guidance, admit_skill
from ._keyed import KeyedCliHarness
from ._opencode_config import (
    CONFIG_DIR,
    DISCOVERY_COMMANDS,
    KEY_VARIABLE,
    REAL_BASE_URL,
    config_json,
    discovery_script,
    exec_argv,
    export_argv,
    launch_env,
)
from ._opencode_trace import (
    SCHEMA,
    classify_provider_stop,
    compare,
    error_text,
    read_discovery,
    read_stream,
    validate_usage,
)
from ._port import AgentRun, AttemptContext, FrozenTreatment, tool_roots

__all__ = ["OpencodeHarness", "read_agent_run", "seed_plugin_manifest"]

CLI = CliPin(command="opencode", package="opencode-ai", version="1.18.33",
             help_argv=("run", "--help"), launch_flags=("--format", "--model", "--title", "--auto"))
_SETUP_TIMEOUT = 300.0


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _exports(agent_dir: Path) -> dict[str, str]:
    folder = agent_dir / "sessions"
    return {p.stem: _text(p) for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


class OpencodeHarness(KeyedCliHarness):
    """opencode adapter: see the module docstring for the whole attempt."""

    name: ClassVar[str] = "opencode"
    cli_label: ClassVar[str] = "opencode"
    key_variable: ClassVar[str] = KEY_VARIABLE
    real_base_url: ClassVar[str] = REAL_BASE_URL
    summary: ClassVar[str] = "opencode (opencode run --format json, OpenAI-compatible provider), the pinned CLI"
    real: ClassVar[bool] = True
    native_receipts: ClassVar[bool] = True
    cli: ClassVar[CliPin | None] = CLI
    doctor_model: ClassVar[str | None] = "gpt-4.1"
    delivery_policy: ClassVar[str | None] = "opencode-native-v1"
    #: what a generated-guidance arm's session writes: opencode reads the repository's AGENTS.md
    instruction_file: ClassVar[str | None] = "AGENTS.md"
    model_hosts: ClassVar[tuple[str, ...]] = ("api.openai.com",)

    # ------------------------------------------------------------------ declarations

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        return {"argv": exec_argv("<cli>", model=model or "<model>"), "stdin": "<prompt>",
                "subagents": subagents,
                "discovery": {"commands": [" ".join(c) for c in DISCOVERY_COMMANDS], "receipt": SCHEMA}}

    @classmethod
    def capability_policy(cls, caps: Any) -> dict[str, dict[str, Any]]:
        """Sub-agents off denies the ``task`` tool in the private config; opencode has no
        thread, depth or child-model setting a run could enforce."""
        on = bool(caps.subagents)
        return {
            "subagents": capability_entry(on, ENFORCED, "the task tool is offered" if on
                                          else 'the task tool is denied (permission.task = "deny")'),
            "max_threads": capability_entry(caps.max_threads, NOT_APPLICABLE, "opencode has no thread limit setting"),
            "max_depth": capability_entry(caps.max_depth, NOT_APPLICABLE, "opencode has no sub-agent depth setting"),
            "child_model": capability_entry("inherit", NOT_APPLICABLE, "sub-agents run on the session's model"),
        }

    @classmethod
    def for_run(cls, ev: Any, *, cli_path: str | Path | None, cli_version: str | None,
                probe_base_url: str | None) -> OpencodeHarness:
        return cls(str(cli_path), cli_version or "", probe_base_url, capabilities=ev.capabilities,
                   model=getattr(ev.runner, "model", None))

    @classmethod
    def revalidate_usage(cls, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
                         exit_code: int | None, seconds: float) -> Usage | None:
        agent = attempt_dir / "agent"
        return validate_usage(_text(agent / "stdout.jsonl"), _exports(agent), timed_out=timed_out)

    # ------------------------------------------------------------------ instance

    def __init__(self, cli_path: str | Path, cli_version: str, probe_base_url: str | None = None, *,
                 capabilities: Capabilities | None = None, model: str | None = None) -> None:
        self.cli_path = str(cli_path)
        self.cli_version = cli_version
        self.probe_base_url = probe_base_url
        self.capabilities = capabilities if capabilities is not None else Capabilities()
        #: the model the private config names; the attempt's model when not given here
        self.model = model
        self.readonly = tool_roots(cli_path) if Path(cli_path).exists() else ()

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        return launch_env(home=sandbox.paths.home, tmp=sandbox.paths.tmp, key=self._endpoint()[1])

    def _config(self, model: str) -> str:
        base = self._endpoint()[0] if self.probe_base_url is not None else REAL_BASE_URL
        return config_json(base_url=base, model=model, capabilities=self.capabilities)

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the private ``~/.config/opencode`` into ``home``; return the delivery receipt."""
        self._refuse_plugins(treatment)
        folder = home / CONFIG_DIR
        folder.mkdir(parents=True, exist_ok=True)
        config = self._config(self.model or "<model>")
        (folder / "opencode.json").write_text(config, encoding="utf-8")
        seed_plugin_manifest(folder)
        receipt: dict[str, Any] = {
            "harness": self.name, "cli_version": self.cli_version, "probe": self.probe_base_url is not None,
            "config_dir": CONFIG_DIR, "agents_md": None, "skills": [],
            "opencode_json_sha256": hashlib.sha256(config.encode()).hexdigest(),
            "capabilities": capability_record(self.name, self.capabilities),
            "credential": self._credential_label(),
        }
        return self._deliver_files(treatment, folder, "AGENTS.md", receipt, "agents_md")

    async def _write_config(self, sandbox: Sandbox, model: str) -> None:
        """The delivered config names the run's model; an attempt whose model differs (a
        harness built without one) gets the config rewritten for it before discovery."""
        if self.model == model:
            return
        path = Path(sandbox.paths.home) / CONFIG_DIR / "opencode.json"
        res = await sandbox.exec(["sh", "-c", 'cat > "$0"', str(path)], stdin=self._config(model).encode(),
                                 env={"PATH": "/usr/bin:/bin"}, timeout=_SETUP_TIMEOUT)
        if res.exit_code != 0:
            raise PluginBenchError(f"cannot write the private opencode config (exit {res.exit_code})")

    async def discover(self, sandbox: Sandbox, ctx: AttemptContext) -> dict[str, Any]:
        """Prove with no model call that exactly the declared guidance and skills load."""
        res = await sandbox.exec(discovery_script(self.cli_path), cwd=sandbox.paths.app, env=self._env(sandbox),
                                 timeout=_SETUP_TIMEOUT)
        if res.exit_code != 0:
            tail = (res.stderr or res.stdout)[-1500:].decode("utf-8", "replace")
            raise PluginBenchError(f"opencode discovery failed (exit {res.exit_code}): {tail}")
        found = read_discovery(res.stdout.decode("utf-8", "replace"))
        t = ctx.treatment
        skills = tuple(admit_skill(s).name for s in t.skills)
        receipt = compare(found, home=sandbox.paths.home, workdir=sandbox.paths.app, guidance=bool(t.guidance),
                          skills=skills)
        receipt.update({
            "harness": self.name, "cli_version": self.cli_version, "arm": t.arm,
            "probe": self.probe_base_url is not None,
            "launch_argv": exec_argv(self.cli_path, model=ctx.model or "")[1:],
            "discovery_commands": [" ".join(c) for c in DISCOVERY_COMMANDS],
        })
        if t.guidance:
            receipt["agents_md_sha256"] = hashlib.sha256(admit_guidance(list(t.guidance))).hexdigest()
        return receipt

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Discover, launch the pinned headless ``opencode run``, export its stored session."""
        if not ctx.model:
            raise InputError("the opencode harness needs an exact model id", field="runner.model",
                             fix='set runner.model, e.g. "gpt-4.1"')
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        await self._write_config(sandbox, ctx.model)
        receipt = await self.discover(sandbox, ctx)
        (ctx.attempt_dir / "native-treatment.json").write_text(json.dumps(receipt, indent=2, sort_keys=True) + "\n",
                                                               encoding="utf-8")
        if not receipt["ok"]:
            raise DiscoveryMismatch(f"attempt {ctx.attempt_id}", receipt["mismatches"])
        argv = exec_argv(self.cli_path, model=ctx.model)
        await ctx.launched(argv)
        res = await sandbox.exec(argv, cwd=sandbox.paths.app, env=self._env(sandbox), timeout=ctx.timeout_seconds,
                                 stdin=ctx.task.instruction.encode("utf-8"),
                                 stdout_path=agent_dir / "stdout.jsonl", stderr_path=agent_dir / "stderr.txt")
        await self._export(sandbox, agent_dir)
        return read_agent_run(agent_dir, exit_code=res.exit_code, timed_out=res.timed_out, seconds=res.seconds)

    async def _export(self, sandbox: Sandbox, agent_dir: Path) -> None:
        """Save ``opencode export`` of the session and of every sub-agent session it started."""
        trace = read_stream(_text(agent_dir / "stdout.jsonl"))
        if trace.session_id is None:
            return
        (agent_dir / "sessions").mkdir(exist_ok=True)
        for sid in (trace.session_id, *trace.children):
            if not sid.replace("_", "").isalnum():
                continue  # not an id the CLI minted: nothing to export
            res = await sandbox.exec(export_argv(self.cli_path, sid), cwd=sandbox.paths.app, env=self._env(sandbox),
                                     timeout=_SETUP_TIMEOUT)
            if res.exit_code == 0:
                (agent_dir / "sessions" / f"{sid}.json").write_bytes(res.stdout)


def seed_plugin_manifest(folder: Path) -> None:
    """opencode starts a background ``npm install @opencode-ai/plugin`` (the plugin SDK) in
    every config folder whose ``node_modules`` is missing or whose ``package.json`` names a
    dependency its ``package-lock.json`` lacks. No plugin is ever delivered, so the folder
    gets an empty ``node_modules`` and a manifest and lock that agree: the CLI makes no
    registry request (measured on 1.18.33: without them it fetches the package)."""
    (folder / "node_modules").mkdir(exist_ok=True)
    dep = {"@opencode-ai/plugin": CLI.version}
    (folder / "package.json").write_text(json.dumps({"dependencies": dep}) + "\n", encoding="utf-8")
    (folder / "package-lock.json").write_text(json.dumps({"packages": {"": {"dependencies": dep}}}) + "\n",
                                              encoding="utf-8")


def read_agent_run(agent_dir: Path, *, exit_code: int | None, timed_out: bool, seconds: float) -> AgentRun:
    """The :class:`AgentRun` of one session from its saved stdout and session exports."""
    stdout = _text(agent_dir / "stdout.jsonl")
    usage = validate_usage(stdout, _exports(agent_dir), timed_out=timed_out)
    stop = classify_provider_stop(stdout, timed_out=timed_out)
    error = error_text(read_stream(stdout).error)
    if error is None and not timed_out and exit_code not in (0, None):
        error = f"opencode exited {exit_code} without an error event"
    return AgentRun(exit_code=exit_code, timed_out=timed_out, coding_seconds=seconds, usage=usage,
                    error=error, provider_stop=stop)
