"""What the Codex harness declares (:class:`CodexDeclaration`): its pinned CLI, its launch
identity for the vanilla cache, its capability policy, the admission of an evaluation's
treatments, the host's credentials (``codex login``'s ``auth.json``), its reviewer checks
and how its answer is read from ``exec --json`` stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._parsing import loads_json
from ..config import ENFORCED, NOT_APPLICABLE, NOT_ENFORCED, capability_entry
from ..errors import ConfigError
from ..harness_registry import CliPin
from ._codex_config import CODEX_MAX_THREADS, codex_settings, discovery_settings, exec_argv
from ._codex_events import final_and_writes
from ._port import HarnessBase

#: The pinned, qualified CLI: ``tools/install-clis.sh`` installs it, ``doctor`` checks the
#: flags of ``codex exec`` the launch uses.
CLI = CliPin(command="codex", package="@openai/codex", version="0.169.0", help_argv=("exec", "--help"),
             launch_flags=("--json", "--skip-git-repo-check", "--cd", "--model"))


def host_auth() -> Path:
    """The host's Codex credentials (``codex login``), copied into each sandbox."""
    return Path.home() / ".codex" / "auth.json"


def admit_evaluation(ev: Any, *, probe: bool) -> None:
    """Every treatment admissible for Codex (guidance, skills, Codex plugins), and the
    host's credentials present unless it is a probe run."""
    from ..treatments import admit_guidance, admit_skill, read_codex_plugin

    for t in ev.treatments.values():
        admit_guidance([Path(p) for p in t.guidance])
        for p in t.skills:
            admit_skill(Path(p))
        for p in t.plugins:
            read_codex_plugin(Path(p))
    if not probe and not host_auth().is_file():
        raise ConfigError(
            "no Codex credentials on this host", file=str(host_auth()), field="runner.harness",
            fix="run `codex login` with the pinned CLI, or use runner.probe for a probe run",
        )


def credential_check() -> tuple[bool, str]:
    """``doctor``: the host's ``auth.json`` exists (its validity is not checked)."""
    auth = host_auth()
    if auth.is_file():
        return True, f"{auth} exists (validity not checked)"
    return False, f"{auth} is missing: run codex login"


def check_reviewer_host(cli_path: Path, *, probe: bool, field: str, file: str | None) -> None:
    """A Codex reviewer needs the host's credentials (unless probed) and the
    ``codex-code-mode-host`` helper beside the CLI."""
    from ._port import tool_roots

    if not probe and not host_auth().is_file():
        raise ConfigError("no Codex credentials on this host", file=str(host_auth()),
                          field=f"{field}.harness", fix="run `codex login` with the pinned CLI")
    roots = [r for r in tool_roots(cli_path) if r.name == "node_modules"] or [Path(cli_path).resolve().parent]
    if not any(any(r.rglob("codex-code-mode-host")) for r in roots):
        raise ConfigError("a Codex reviewer needs codex-code-mode-host beside codex", file=str(cli_path),
                          field=f"{field}.harness", fix="reinstall the Codex CLI (tools/install-clis.sh)")


def native_identity(call_dir: Path) -> dict[str, Any]:
    """Model, effort and CLI version as Codex's own rollouts record them (every turn must agree)."""
    models, efforts, versions = set(), set(), set()
    for path in sorted((call_dir / "agent" / "rollouts").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                ev = loads_json(line)
            except json.JSONDecodeError:
                continue
            payload = _payload if isinstance(ev, dict) and isinstance(_payload := ev.get("payload"), dict) else {}
            if ev.get("type") == "turn_context":
                models.add(payload.get("model"))
                efforts.add(payload.get("effort"))
            elif ev.get("type") == "session_meta":
                versions.add(payload.get("cli_version"))

    def one(values: set[Any]) -> Any:
        return next(iter(values)) if len(values) == 1 else ("/".join(sorted(map(str, values))) or None)

    return {"model": one(models), "effort": one(efforts), "cli_version": one(versions)}


class CodexDeclaration(HarnessBase):
    """What the Codex harness declares: the registry and the engine read these; the adapter
    (``_codex.py: CodexHarness``) adds delivery and the run."""

    name = "codex"
    instruction_file = "AGENTS.md"
    summary = "Codex CLI (codex exec --json), the pinned CLI"
    real = True
    reviewer = True
    native_receipts = True
    agent_traces = True
    cli = CLI
    doctor_model = "gpt-5.5"
    #: the Responses API (API key), the ChatGPT backend and its token refresh (ChatGPT login)
    model_hosts = ("api.openai.com", "chatgpt.com", "auth.openai.com")
    delivery_policy = "codex-native-v1"

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        settings = discovery_settings(model or "<model>", reasoning)
        return {
            "argv": exec_argv("<cli>", workdir="<workdir>", model=model or "<model>", reasoning=reasoning,
                              prompt="<prompt>", bypass_hook_trust=False),
            # Discovery renders the prompt with the launch's own settings (project docs on).
            "discovery": {"prompt_input_settings": settings, "receipt": "pluginbench.codex.native-treatment/2"},
        }

    @classmethod
    def check_cli(cls, cli_path: str | Path, version: str) -> None:
        """The native binary behind the npm wrapper is there, at ``version`` (its ``codex-package.json``)."""
        from ._codex_native import resolve_native

        resolve_native(cli_path, version)

    @classmethod
    def version_argv(cls, cli_path: str | Path) -> list[str]:
        """The native binary's ``--version`` (a 0.02 s start, not the npm wrapper's node start)."""
        from ..errors import InputError
        from ._codex_native import resolve_native

        try:
            exe = resolve_native(cli_path, "").exe  # any version: the caller compares it with the pin
        except InputError:
            exe = str(cli_path)  # no usable native layout: the wrapper says what it says
        return [exe, "--version"]

    @classmethod
    def admit_evaluation(cls, ev: Any, *, probe: bool) -> None:
        admit_evaluation(ev, probe=probe)

    @classmethod
    def credential_check(cls) -> tuple[bool, str]:
        return credential_check()

    @classmethod
    def read_final(cls, stdout: str) -> tuple[str | None, list[str]]:
        return final_and_writes(stdout)

    @classmethod
    def capability_policy(cls, caps: Any) -> dict[str, dict[str, Any]]:
        """Written into the private config.toml (see ``_codex_config.config_toml``)."""
        subagents, threads, depth = codex_settings(caps)
        return {
            "subagents": capability_entry(subagents, ENFORCED, "features.multi_agent and features.multi_agent_v2 = false"
                                          if not subagents else "native agents on (both runtimes allowed)"),
            "max_threads": capability_entry(threads, ENFORCED,
                                            f"agents.max_threads = {threads} (at most {CODEX_MAX_THREADS})"),
            "max_depth": capability_entry(depth, NOT_ENFORCED, f"agents.max_depth = {depth} is a V1-runtime preference; "
                                          "the V2 runtime a model may select has no depth limit"),
            "child_model": capability_entry(
                "inherit", NOT_ENFORCED if subagents else NOT_APPLICABLE,
                "V2 only: features.multi_agent_v2.expose_spawn_agent_model_overrides = false hides the spawn "
                "tool's model and effort fields; this is not a lock (V1's spawn tool keeps them), so an attempt "
                "with any child on another model or effort records no model and is ineligible"
                if subagents else "native agents are off"),
        }

    @classmethod
    def check_reviewer_host(cls, cli_path: Path, *, probe: bool, field: str, file: str | None) -> None:
        check_reviewer_host(cli_path, probe=probe, field=field, file=file)

    @classmethod
    def native_identity(cls, call_dir: Path) -> dict[str, Any]:
        return native_identity(call_dir)
