"""Pure discovery check: what Codex says it loaded versus what the arm declared.

Two no-model sources (Codex 0.169.0), both run before ``agent.launched``:

* ``codex debug prompt-input -c project_doc_max_bytes=0`` renders the model-visible
  input without calling the provider; with project docs off, its
  ``# AGENTS.md instructions`` block holds exactly the private global AGENTS.md.
* ``codex app-server`` JSON-RPC ``skills/list``, ``hooks/list`` and ``plugin/list``
  report every skill (with scope and owning plugin), every hook (with the command
  after ``${PLUGIN_ROOT}`` substitution) and every installed plugin.

Built-in ``system`` skills (bundled by Codex) and ``repo`` skills (part of the task's
own source, identical for every arm) are recorded but not counted as treatment
components. Everything else must be exactly what the arm declared; vanilla declares
nothing. The receipt proves availability, not activation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..errors import PluginBenchError

#: Skill scopes that are not treatment components.
AMBIENT_SCOPES = frozenset({"system", "repo"})
_AGENTS_PREFIX = "# AGENTS.md instructions"


class DiscoveryMismatch(PluginBenchError):
    """Codex did not load exactly the declared components; the attempt stops before coding."""

    def __init__(self, attempt_id: str, mismatches: Sequence[str]) -> None:
        super().__init__(f"attempt {attempt_id}: discovery mismatch: " + "; ".join(mismatches))
        self.attempt_id = attempt_id
        self.mismatches = tuple(mismatches)


class ExpectedPlugin(NamedTuple):
    """A declared plugin as installed: id, installed root, skill names, hooks."""

    plugin_id: str
    root: str
    skills: tuple[str, ...]  # "<plugin>:<skill>" as Codex names them
    hooks: tuple[tuple[str, str], ...]  # (normalized event, command with the root substituted)


class Expected(NamedTuple):
    guidance: str | None
    skills: tuple[tuple[str, str], ...]  # (name, SKILL.md path inside the sandbox)
    plugins: tuple[ExpectedPlugin, ...]


def norm_event(name: str) -> str:
    """``SessionStart``, ``sessionStart`` and ``session_start`` compare equal."""
    return name.replace("_", "").lower()


def loaded_agents_md(prompt_input: object) -> str | None:
    """The text inside ``<INSTRUCTIONS>`` of the AGENTS.md block, or None without one."""
    texts: list[str] = []

    def walk(obj: object) -> None:
        if isinstance(obj, Mapping):
            text = obj.get("text")
            if isinstance(text, str) and text.startswith(_AGENTS_PREFIX):
                texts.append(text)
            for v in obj.values():
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(prompt_input)
    if not texts:
        return None
    body = texts[0]
    start = body.find("<INSTRUCTIONS>")
    end = body.rfind("</INSTRUCTIONS>")
    if start < 0 or end < start:
        return body
    return body[start + len("<INSTRUCTIONS>") : end]


def app_server_results(stdout: str) -> dict[int, Any]:
    """``{request id: result}`` from the app-server's JSON lines (errors kept as ``{"error":..}``)."""
    out: dict[int, Any] = {}
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and isinstance(msg.get("id"), int):
            out[msg["id"]] = msg["result"] if "result" in msg else {"error": msg.get("error")}
    return out


def _entries(result: object, key: str) -> list[dict[str, Any]]:
    data = result.get("data") if isinstance(result, Mapping) else None
    items: list[dict[str, Any]] = []
    for block in data or []:
        for entry in (block.get(key) if isinstance(block, Mapping) else None) or []:
            if isinstance(entry, dict):
                items.append(entry)
    return items


def compare(expected: Expected, prompt_input: object, results: Mapping[int, Any]) -> dict[str, Any]:
    """Build the discovery receipt; ``receipt["mismatches"]`` is empty when it matches."""
    mismatches: list[str] = []
    for rid, what in ((2, "skills/list"), (3, "hooks/list"), (4, "plugin/list")):
        if rid not in results or (isinstance(results[rid], Mapping) and "error" in results[rid]):
            mismatches.append(f"{what} gave no answer: {results.get(rid)!r}")

    agents = loaded_agents_md(prompt_input)
    if expected.guidance is None:
        if agents is not None and agents.strip():
            mismatches.append("vanilla arm loaded a global AGENTS.md")
    elif agents is None or agents.strip() != expected.guidance.strip():
        mismatches.append("the private AGENTS.md did not load with the declared guidance text")

    skills = _entries(results.get(2), "skills")
    ambient = sorted(f"{s.get('scope')}:{s.get('name')}" for s in skills if s.get("scope") in AMBIENT_SCOPES)
    components = [s for s in skills if s.get("scope") not in AMBIENT_SCOPES]
    got_standalone = sorted((str(s.get("name")), str(s.get("path"))) for s in components if not s.get("pluginId"))
    want_standalone = sorted(expected.skills)
    if got_standalone != want_standalone:
        mismatches.append(f"standalone skills {got_standalone} != declared {want_standalone}")
    got_plugin_skills = sorted((str(s.get("pluginId")), str(s.get("name"))) for s in components if s.get("pluginId"))
    want_plugin_skills = sorted((p.plugin_id, n) for p in expected.plugins for n in p.skills)
    if got_plugin_skills != want_plugin_skills:
        mismatches.append(f"plugin skills {got_plugin_skills} != declared {want_plugin_skills}")
    disabled = sorted(str(s.get("name")) for s in components if s.get("enabled") is False)
    if disabled:
        mismatches.append(f"declared skills are disabled: {disabled}")

    hooks = _entries(results.get(3), "hooks")
    got_hooks = sorted(
        (str(h.get("pluginId")), norm_event(str(h.get("eventName"))), str(h.get("command"))) for h in hooks
    )
    want_hooks = sorted((p.plugin_id, ev, cmd) for p in expected.plugins for ev, cmd in p.hooks)
    if got_hooks != want_hooks:
        mismatches.append(f"hooks {got_hooks} != declared {want_hooks}")
    bad_hooks = sorted(str(h.get("command")) for h in hooks if h.get("async") or h.get("handlerType") != "command")
    if bad_hooks:
        mismatches.append(f"unsupported (async or non-command) hooks: {bad_hooks}")

    installed: list[str] = []
    plist = results.get(4)
    for market in (plist.get("marketplaces") if isinstance(plist, Mapping) else None) or []:
        for p in market.get("plugins") or []:
            if p.get("installed") and p.get("enabled"):
                installed.append(str(p.get("id")))
    want_plugins = sorted(p.plugin_id for p in expected.plugins)
    if sorted(installed) != want_plugins:
        mismatches.append(f"installed plugins {sorted(installed)} != declared {want_plugins}")

    return {
        "method": "codex debug prompt-input -c project_doc_max_bytes=0; codex app-server skills/list, hooks/list, plugin/list",
        "model_call": False,
        "memory_file": {"loaded": agents is not None and bool(agents.strip()), "text_chars": len(agents or "")},
        "skills": [{"name": n, "path": p} for n, p in got_standalone],
        "plugin_skills": [{"plugin": p, "name": n} for p, n in got_plugin_skills],
        "hooks": [{"plugin": p, "event": e, "command": c} for p, e, c in got_hooks],
        "plugins": sorted(installed),
        "ambient_skills": ambient,
        "expected": {
            "guidance": expected.guidance is not None,
            "skills": [{"name": n, "path": p} for n, p in want_standalone],
            "plugins": [p._asdict() for p in expected.plugins],
        },
        "mismatches": mismatches,
        "ok": not mismatches,
    }
