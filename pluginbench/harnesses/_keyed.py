"""What the adapters of CLIs that reach one provider with a host API key share (Qwen Code,
opencode, Gemini CLI): admission, the credential, native delivery into a private folder
and the attempt's run loop.

Each such CLI takes guidance as one instruction file and skills as folders in its own
config folder, has no Claude Code or Codex plugins, and reads its key from the agent
process's environment (never argv, never a file the task can read). A subclass names the
CLI (:attr:`cli_label`), the host variable of its key (:attr:`key_variable`), the probe
protocol it speaks (:attr:`probe_api`, with the variables the probe's launch environment
sets for it), the provider's real base URL and its private folder (:attr:`config_dir`,
:attr:`config_file`, :attr:`home_instruction`); and it says what differs in one attempt:
its config text, launch environment and argv, no-model receipt (:meth:`discover`), what
it copies out of the sandbox afterwards and how its saved records read (:meth:`_usage`,
:meth:`_outcome`). The rest is here, once.

One attempt (:meth:`KeyedCliHarness.run`): the exact model id is required; the receipt is
written to ``native-treatment.json`` and a mismatch stops the attempt with
:class:`DiscoveryMismatch` before ``agent.launched``; the pinned argv runs with stdout in
``agent/stdout.jsonl`` and stderr in ``agent/stderr.txt``; the CLI's records are copied
out and the :class:`AgentRun` is read from the saved files alone (as a reused attempt's
usage is, :meth:`revalidate_usage`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar, Self

from ..config import Capabilities, capability_record
from ..environments import OUTPUT_FILE_BYTES, Sandbox, plain_files
from ..errors import ConfigError, DiscoveryMismatch, InputError
from ..events import Usage
from ..treatments import admit_guidance, admit_skill
from ._port import AgentRun, AttemptContext, FrozenTreatment, HarnessBase, tool_roots


def text(path: Path) -> str:
    """The file's text (undecodable bytes replaced); ``""`` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def texts(folder: Path, pattern: str) -> str:
    """The texts of the files under ``folder`` matching ``pattern``, in path order, joined."""
    return "".join(text(p) for p in sorted(folder.rglob(pattern))) if folder.is_dir() else ""


class KeyedCliHarness(HarnessBase):
    """A harness whose CLI reads one provider key from its environment (see the module)."""

    #: how messages name the CLI ("Qwen Code", "opencode", "Gemini CLI")
    cli_label: ClassVar[str] = ""
    #: the host variable a real run's key is read from
    key_variable: ClassVar[str] = ""
    #: the probe protocol (``chat``, ``gemini``) and the launch variables holding its URL and key
    probe_api: ClassVar[str] = "chat"
    probe_vars: ClassVar[tuple[str, str]] = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
    #: the provider's base URL in a real run
    real_base_url: ClassVar[str] = ""
    #: the private config folder under HOME (``.qwen``), the receipt key naming it, the
    #: config file in it and the global instruction file the guidance is delivered as
    config_dir: ClassVar[str] = ""
    config_dir_key: ClassVar[str] = ""
    config_file: ClassVar[str] = ""
    home_instruction: ClassVar[str] = ""
    #: what the CLI's stdout calls the record of a failure (the error of a nonzero exit without one)
    error_record: ClassVar[str] = "error result"

    probe_base_url: str | None

    def __init__(self, cli_path: str | Path, cli_version: str, probe_base_url: str | None = None, *,
                 capabilities: Capabilities | None = None) -> None:
        self.cli_path = str(cli_path)
        self.cli_version = cli_version
        self.probe_base_url = probe_base_url
        self.capabilities = capabilities if capabilities is not None else Capabilities()
        self.readonly = tool_roots(cli_path) if Path(cli_path).exists() else ()

    @classmethod
    def for_run(cls, ev: Any, *, cli_path: str | Path | None, cli_version: str | None,
                probe_base_url: str | None) -> Self:
        return cls(str(cli_path), cli_version or "", probe_base_url, capabilities=ev.capabilities)

    @classmethod
    def admit_evaluation(cls, ev: Any, *, probe: bool) -> None:
        """Guidance and skills are admissible; plugins are refused naming the CLI; a real
        run needs the key's variable on the host."""
        for arm, t in ev.treatments.items():
            if t.plugins:
                raise ConfigError(
                    f"{cls.cli_label} (the {cls.name} harness) has no Claude Code or Codex plugins",
                    field=f"treatments.{arm}.plugins",
                    fix="deliver the package's guidance and skills only, or use the claude or codex harness")
            admit_guidance([Path(p) for p in t.guidance])
            for p in t.skills:
                admit_skill(Path(p))
        if not probe and not os.environ.get(cls.key_variable):
            raise ConfigError(f"no {cls.key_variable} on this host for the {cls.name} harness", field="runner.harness",
                              fix=f"export {cls.key_variable}, or use runner.probe for a probe run")

    @classmethod
    def credential_check(cls) -> tuple[bool, str]:
        if os.environ.get(cls.key_variable):
            return True, f"{cls.key_variable} is set (validity not checked)"
        return False, f"{cls.key_variable} is not set"

    def _endpoint(self) -> tuple[str, str]:
        """(base URL, key) the agent process gets: the probe's and its fake key in a probe
        run, else the provider's and the host's key (InputError when it has none)."""
        if self.probe_base_url is not None:
            from ..probe import launch_env as probe_launch_env

            env = probe_launch_env(self.probe_api, self.probe_base_url).env
            return env[self.probe_vars[0]], env[self.probe_vars[1]]
        key = os.environ.get(self.key_variable)
        if not key:
            raise InputError(f"no {self.key_variable} on this host for the {self.name} harness", field="runner.harness",
                             fix=f"export {self.key_variable}")
        return self.real_base_url, key

    def secrets(self) -> list[str]:
        if self.probe_base_url is not None:
            return []
        key = os.environ.get(self.key_variable, "")
        return [key] if len(key) >= 8 else []

    # ------------------------------------------------------------------ what a CLI says

    def _config_text(self) -> str:
        """The text of the private :attr:`config_file`."""
        raise NotImplementedError

    def _seed(self, folder: Path) -> None:
        """Anything else the private folder needs before the CLI starts (nothing by default)."""

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        """The agent process's whole environment (the endpoint and key among it)."""
        raise NotImplementedError

    async def _prepare(self, sandbox: Sandbox, ctx: AttemptContext) -> None:
        """In the sandbox, before discovery, for this attempt's model and effort (nothing by default)."""

    async def discover(self, sandbox: Sandbox, ctx: AttemptContext) -> dict[str, Any]:
        """The no-model receipt: ``ok`` and ``mismatches`` against the declaration, and the
        rest of what the CLI loads (see :meth:`_identity` for the common fields)."""
        raise NotImplementedError

    def _launch(self, ctx: AttemptContext, model: str) -> tuple[list[str], bytes | None]:
        """The pinned argv of the coding session on ``model`` and its stdin (``None``: none)."""
        raise NotImplementedError

    async def _collect(self, sandbox: Sandbox, agent_dir: Path) -> None:
        """Copy the CLI's own records of the session out of the sandbox into ``agent_dir``."""

    @classmethod
    def _usage(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> Usage:
        """The session's usage from its saved stdout and the records under ``agent_dir``."""
        raise NotImplementedError

    @classmethod
    def _outcome(cls, agent_dir: Path, stdout: str, *, timed_out: bool) -> tuple[str | None, str | None]:
        """(provider stop, error) from the session's saved stdout and records."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared

    @classmethod
    def revalidate_usage(cls, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
                         exit_code: int | None, seconds: float | None) -> Usage | None:
        agent = attempt_dir / "agent"
        return cls._usage(agent, text(agent / "stdout.jsonl"), timed_out=timed_out)

    @classmethod
    def read_agent_run(cls, agent_dir: Path, *, exit_code: int | None, timed_out: bool,
                       seconds: float | None) -> AgentRun:
        """The :class:`AgentRun` of one session from what ``agent_dir`` saved; a nonzero exit
        with no failure record of the CLI's own is the error."""
        stdout = text(agent_dir / "stdout.jsonl")
        usage = cls._usage(agent_dir, stdout, timed_out=timed_out)
        stop, error = cls._outcome(agent_dir, stdout, timed_out=timed_out)
        if error is None and not timed_out and exit_code not in (0, None):
            error = f"{cls.name} exited {exit_code} without an {cls.error_record}"
        return AgentRun(exit_code=exit_code, timed_out=timed_out, coding_seconds=seconds, usage=usage,
                        error=error, provider_stop=stop)

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the private :attr:`config_dir` into ``home``: the config file, the guidance
        as :attr:`home_instruction` (none for vanilla) and the skills; return the receipt."""
        self._refuse_plugins(treatment)
        folder = home / self.config_dir
        folder.mkdir(parents=True, exist_ok=True)
        config = self._config_text()
        (folder / self.config_file).write_text(config, encoding="utf-8")
        self._seed(folder)
        instruction_key = self.home_instruction.lower().replace(".", "_")
        receipt: dict[str, Any] = {
            "harness": self.name, "cli_version": self.cli_version, "probe": self.probe_base_url is not None,
            self.config_dir_key: self.config_dir, instruction_key: None, "skills": [],
            f"{self.config_file.replace('.', '_')}_sha256": hashlib.sha256(config.encode()).hexdigest(),
            "capabilities": capability_record(self.name, self.capabilities),
            "credential": self._credential_label(),
        }
        return self._deliver_files(treatment, folder, self.home_instruction, receipt, instruction_key)

    def _identity(self, ctx: AttemptContext, launch_argv: list[str]) -> dict[str, Any]:
        """The receipt's fields every keyed CLI records: harness, CLI version, arm, probe
        and the coding launch's flags."""
        return {"harness": self.name, "cli_version": self.cli_version, "arm": ctx.treatment.arm,
                "probe": self.probe_base_url is not None, "launch_argv": launch_argv}

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """One attempt (see the module): receipt, launch, records, :class:`AgentRun`."""
        if not ctx.model:
            raise InputError(f"the {self.name} harness needs an exact model id", field="runner.model",
                             fix=f'set runner.model, e.g. "{self.doctor_model}"')
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        await self._prepare(sandbox, ctx)
        receipt = await self.discover(sandbox, ctx)
        (ctx.attempt_dir / "native-treatment.json").write_text(json.dumps(receipt, indent=2, sort_keys=True) + "\n",
                                                               encoding="utf-8")
        if not receipt["ok"]:
            raise DiscoveryMismatch(f"attempt {ctx.attempt_id}", receipt["mismatches"])
        argv, stdin = self._launch(ctx, ctx.model)
        await ctx.launched(argv)
        res = await sandbox.exec(argv, cwd=sandbox.paths.app, env=self._env(sandbox), timeout=ctx.timeout_seconds,
                                 stdin=stdin, stdout_path=agent_dir / "stdout.jsonl",
                                 stderr_path=agent_dir / "stderr.txt")
        ctx.ran(res.seconds)
        await self._collect(sandbox, agent_dir)
        return self.read_agent_run(agent_dir, exit_code=res.exit_code, timed_out=res.timed_out, seconds=res.seconds)

    async def _copy_out(self, sandbox: Sandbox, agent_dir: Path, copies: tuple[tuple[str, str, str], ...]) -> None:
        """For each (``sub``, ``dest``, ``pattern``): the files matching ``pattern`` under the
        sandbox's ``~/<config_dir>/<sub>`` copied flat into ``agent_dir/<dest>``. A folder
        the CLI never wrote is skipped: nothing recorded, so usage becomes unknown."""
        with tempfile.TemporaryDirectory(prefix=f"pb-{self.name}-") as tmp:
            for sub, dest, pattern in copies:
                got = Path(tmp) / sub
                try:
                    await sandbox.get(f"{sandbox.paths.home}/{self.config_dir}/{sub}", got, limit=OUTPUT_FILE_BYTES)
                except Exception:  # noqa: BLE001 - nothing recorded: usage becomes unknown
                    continue
                (agent_dir / dest).mkdir(exist_ok=True)
                for f in plain_files(got, pattern):  # never a symlink the agent planted
                    shutil.copyfile(f, agent_dir / dest / f.name)

    def _refuse_plugins(self, treatment: FrozenTreatment) -> None:
        if treatment.plugins:
            raise InputError(f"{self.cli_label} has no Claude Code or Codex plugins", file=str(treatment.plugins[0]),
                             fix="use the claude or codex harness for plugins")

    def _credential_label(self) -> str:
        return ("probe fake key (agent process environment only)" if self.probe_base_url is not None
                else f"host {self.key_variable} (agent process environment only)")

    @staticmethod
    def _deliver_files(treatment: FrozenTreatment, folder: Path, instruction_name: str,
                       receipt: dict[str, Any], instruction_key: str) -> dict[str, Any]:
        """Write the arm's guidance as ``folder/instruction_name`` and its skills under
        ``folder/skills/<name>``, recording each in ``receipt`` (``instruction_key`` holds the
        file's bytes and sha256, ``skills`` each skill's name and fingerprint)."""
        if treatment.guidance:
            data = admit_guidance(list(treatment.guidance))
            (folder / instruction_name).write_bytes(data)
            receipt[instruction_key] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for skill in treatment.skills:
            info = admit_skill(skill)
            dest = folder / "skills" / info.name
            if dest.exists():
                raise InputError(f"two skills are named {info.name!r}", file=str(skill), fix="rename one")
            shutil.copytree(skill, dest, ignore=shutil.ignore_patterns(".git"))
            receipt["skills"].append({"name": info.name, "fingerprint": info.fingerprint})
        return receipt
