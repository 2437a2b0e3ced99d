"""What the Codex harness declares about the host: its pinned CLI, the admission of an
evaluation's treatments, and the host's credentials (``codex login``'s ``auth.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..harness_registry import CliPin

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
