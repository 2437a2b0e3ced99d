"""What the adapters of CLIs that reach one provider with a host API key share (Qwen Code,
opencode, Gemini CLI): admission, the credential, and native delivery into a private folder.

Each such CLI takes guidance as one instruction file and skills as folders in its own
config folder, has no Claude Code or Codex plugins, and reads its key from the agent
process's environment (never argv, never a file the task can read). A subclass names the
CLI (:attr:`cli_label`), the host variable of its key (:attr:`key_variable`), the probe
protocol it speaks (:attr:`probe_api`, with the variables the probe's launch environment
sets for it) and the provider's real base URL; the rest is here, once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, ClassVar

from ..errors import ConfigError, InputError
from ..treatments import admit_guidance, admit_skill
from ._port import FrozenTreatment, HarnessBase


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

    probe_base_url: str | None

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
