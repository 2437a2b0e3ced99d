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

``runner.reasoning`` (the attempt's effort) is the model's ``reasoningEffort`` option in the
private config, which opencode sends as ``reasoning_effort``; an effort outside the OpenAI
values (:data:`._opencode_config.EFFORTS`) is refused at admission.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

from ..config import ENFORCED, NOT_APPLICABLE, Capabilities, capability_entry
from ..environments import Sandbox
from ..errors import PluginBenchError
from ..events import Usage
from ..harness_registry import CliPin, SpecProblem
from ..treatments import admit_guidance, admit_skill
from ._keyed import KeyedCliHarness, text
from ._opencode_config import (
    CONFIG_DIR,
    DISCOVERY_COMMANDS,
    EFFORTS,
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
from ._port import AttemptContext

__all__ = ["OpencodeHarness", "seed_plugin_manifest"]

CLI = CliPin(command="opencode", package="opencode-ai", version="1.18.33",
             help_argv=("run", "--help"), launch_flags=("--format", "--model", "--title", "--auto"))
_SETUP_TIMEOUT = 300.0


def _exports(agent_dir: Path) -> dict[str, str]:
    folder = agent_dir / "sessions"
    return {p.stem: text(p) for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


class OpencodeHarness(KeyedCliHarness):
    """opencode adapter: see the module docstring for the whole attempt."""

    name: ClassVar[str] = "opencode"
    cli_label: ClassVar[str] = "opencode"
    key_variable: ClassVar[str] = KEY_VARIABLE
    real_base_url: ClassVar[str] = REAL_BASE_URL
    config_dir: ClassVar[str] = CONFIG_DIR
    config_dir_key: ClassVar[str] = "config_dir"
    config_file: ClassVar[str] = "opencode.json"
    home_instruction: ClassVar[str] = "AGENTS.md"
    error_record: ClassVar[str] = "error event"
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
        identity: dict[str, Any] = {"argv": exec_argv("<cli>", model=model or "<model>"), "stdin": "<prompt>",
                    "subagents": subagents,
                    "discovery": {"commands": [" ".join(c) for c in DISCOVERY_COMMANDS], "receipt": SCHEMA}}
        if reasoning is not None:
            identity["reasoning_effort"] = reasoning
        return identity

    @classmethod
    def spec_problem(cls, model: str | None, reasoning: str | None) -> SpecProblem | None:
        """An effort opencode cannot send as the OpenAI ``reasoning_effort`` (``max``)."""
        if reasoning is not None and reasoning not in EFFORTS:
            return SpecProblem(f"opencode sends the effort as the OpenAI reasoning_effort, which has no {reasoning!r}",
                               "reasoning", "use one of: " + ", ".join(EFFORTS) + ", or leave it unset")
        return None

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
                   model=getattr(ev.runner, "model", None), reasoning=getattr(ev.runner, "reasoning", None))

    # ------------------------------------------------------------------ instance

    def __init__(self, cli_path: str | Path, cli_version: str, probe_base_url: str | None = None, *,
                 capabilities: Capabilities | None = None, model: str | None = None,
                 reasoning: str | None = None) -> None:
        super().__init__(cli_path, cli_version, probe_base_url, capabilities=capabilities)
        #: the model and effort the private config names; an attempt's own replace them
        self.model = model
        self.reasoning = reasoning

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        return launch_env(home=sandbox.paths.home, tmp=sandbox.paths.tmp, key=self._endpoint()[1])

    def _config(self, model: str, reasoning: str | None) -> str:
        base = self._endpoint()[0] if self.probe_base_url is not None else REAL_BASE_URL
        return config_json(base_url=base, model=model, capabilities=self.capabilities, reasoning=reasoning)

    def _config_text(self) -> str:
        return self._config(self.model or "<model>", self.reasoning)

    def _seed(self, folder: Path) -> None:
        seed_plugin_manifest(folder)

    async def _prepare(self, sandbox: Sandbox, ctx: AttemptContext) -> None:
        """The delivered config names the run's model and effort; an attempt whose own differ
        (a harness built without them) gets the config rewritten for them before discovery."""
        if self.model == ctx.model and self.reasoning == ctx.reasoning:
            return
        path = Path(sandbox.paths.home) / CONFIG_DIR / "opencode.json"
        config = self._config(ctx.model or "", ctx.reasoning)
        res = await sandbox.exec(["sh", "-c", 'cat > "$0"', str(path)], stdin=config.encode(),
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
        receipt.update(self._identity(ctx, exec_argv(self.cli_path, model=ctx.model or "")[1:]))
        receipt["discovery_commands"] = [" ".join(c) for c in DISCOVERY_COMMANDS]
        if t.guidance:
            receipt["agents_md_sha256"] = hashlib.sha256(admit_guidance(list(t.guidance))).hexdigest()
        return receipt

    def _launch(self, ctx: AttemptContext, model: str) -> tuple[list[str], bytes | None]:
        """The instruction goes on stdin."""
        return exec_argv(self.cli_path, model=model), ctx.task.instruction.encode("utf-8")

    async def _collect(self, sandbox: Sandbox, agent_dir: Path) -> None:
        """Save ``opencode export`` of the session and of every sub-agent session it started."""
        trace = read_stream(text(agent_dir / "stdout.jsonl"))
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

    @classmethod
    def _usage(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> Usage:
        """Usage from the stream and the exported sessions, cross-checked."""
        return validate_usage(stdout, _exports(agent_dir), timed_out=timed_out)

    @classmethod
    def _outcome(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> tuple[str | None, str | None]:
        return classify_provider_stop(stdout, timed_out=timed_out), error_text(read_stream(stdout).error)


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
