"""Pure discovery check: what Codex says it loaded versus what the arm declared.

Two no-model sources (Codex 0.169.0), both run before ``agent.launched``:

* ``codex debug prompt-input`` with the coding launch's own settings renders the
  model-visible input without calling the provider. Its ``# AGENTS.md instructions``
  block holds the private global AGENTS.md (the treatment's guidance) and, after a
  ``--- project-doc ---`` line, the task repository's own AGENTS.md (task-owned: the
  same on every arm, loaded as the real CLI loads it for a user in that repository).
* ``codex app-server`` JSON-RPC ``skills/list``, ``hooks/list`` and ``plugin/list``
  report every skill (with scope and owning plugin), every hook (with the command
  after ``${PLUGIN_ROOT}`` substitution) and every installed plugin.

Built-in ``system`` skills (bundled by Codex) are recorded when the rendered input offers
them to the model (the receipt lists what the model received; an installed system skill
the input leaves out is not recorded); ``repo`` skills (the task's
own ``.agents/skills`` and ``.codex/skills``, identical for every arm) are listed as
task-owned. Neither counts as a treatment component. Everything else must be exactly what the arm declared; vanilla declares
nothing. The receipt proves availability, not activation.
"""

import hashlib
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from .._parsing import loads_json

#: Skill scopes that are not treatment components: bundled (system) and task-owned (repo).
AMBIENT_SCOPES = frozenset({"system", "repo"})
_AGENTS_PREFIX = "# AGENTS.md instructions"


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
    #: the task repository's instruction files at its root, as found in the sandbox
    #: ({"AGENTS.md": text, ...}); the project-doc part must be one of them
    repo_docs: tuple[tuple[str, str], ...] = ()
    workdir: str = "/app"


PROJECT_DOC_SEPARATOR = "--- project-doc ---"


def split_agents_md(text: str | None, has_repo_doc: bool) -> tuple[str, str]:
    """(global part, project part) of the loaded AGENTS.md block, each stripped.

    Codex joins the global file and the repository's with a ``--- project-doc ---`` line;
    with only one of them there is no separator, and which one it is follows from
    whether the repository has an instruction file.
    """
    body = (text or "").strip()
    marker = f"\n\n{PROJECT_DOC_SEPARATOR}\n\n"
    if marker in f"\n\n{body}\n\n" and has_repo_doc:
        head, _, tail = f"\n\n{body}".partition(marker)
        return head.strip(), tail.strip()
    return ("", body) if has_repo_doc else (body, "")


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


_SKILLS_HEADING = "### Available skills"
_SKILL_LINE = re.compile(r"^- (?P<name>[^:\s][^:]*(?::[^:\s][^:]*)?): .*\(file: [^)]*\)\s*$")


def offered_skills(prompt_input: object) -> tuple[str, ...] | None:
    """The skill names the model is offered (the ``### Available skills`` list of the
    rendered input), in order; None when the input holds no such list."""
    found: list[str] | None = None

    def walk(obj: object) -> None:
        nonlocal found
        if found is not None:
            return
        if isinstance(obj, str) and _SKILLS_HEADING in obj:
            names: list[str] = []
            for line in obj.split(_SKILLS_HEADING, 1)[1].splitlines()[1:]:
                if line.startswith("#"):
                    break
                m = _SKILL_LINE.match(line)
                if m:
                    names.append(m.group("name"))
            found = names
        elif isinstance(obj, Mapping):
            for v in obj.values():
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(prompt_input)
    return None if found is None else tuple(found)


def app_server_results(stdout: str) -> dict[int, Any]:
    """``{request id: result}`` from the app-server's JSON lines (errors kept as ``{"error":..}``)."""
    out: dict[int, Any] = {}
    for line in stdout.splitlines():
        try:
            msg = loads_json(line)
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
    repo_docs = {name: text.strip() for name, text in expected.repo_docs if text.strip()}
    global_part, project_part = split_agents_md(agents, bool(repo_docs))
    if expected.guidance is None:
        if global_part:
            mismatches.append("vanilla arm loaded a global AGENTS.md")
    elif global_part != expected.guidance.strip():
        mismatches.append("the private AGENTS.md did not load with the declared guidance text")
    project_source = next((name for name, text in sorted(repo_docs.items()) if text == project_part), None)
    if repo_docs and project_source is None:
        mismatches.append("the project AGENTS.md that loaded is not the task repository's own instruction file")

    skills = _entries(results.get(2), "skills")
    # The receipt lists what the model received: an installed system skill that the
    # rendered input does not offer (0.169.0's review-agent) is not part of the session.
    offered = offered_skills(prompt_input) or ()
    ambient = sorted(f"{s.get('scope')}:{s.get('name')}" for s in skills
                     if s.get("scope") == "system" and s.get("name") in offered)
    repo_skills = sorted((str(s.get("name")), str(s.get("path"))) for s in skills if s.get("scope") == "repo")
    outside = sorted(p for _, p in repo_skills if not p.startswith(expected.workdir.rstrip("/") + "/"))
    if outside:
        mismatches.append(f"repo-scope skills from outside the task repository: {outside}")
    components = [s for s in skills if s.get("scope") not in AMBIENT_SCOPES]
    got_standalone = sorted((str(s.get("name")), str(s.get("path"))) for s in components if not s.get("pluginId"))
    want_standalone = sorted(expected.skills)
    if got_standalone != want_standalone:
        mismatches.append(f"standalone skills {got_standalone} != declared {want_standalone}")
    got_plugin_skills = sorted((str(s.get("pluginId")), str(s.get("name"))) for s in components if s.get("pluginId"))
    want_plugin_skills = sorted((p.plugin_id, n) for p in expected.plugins for n in p.skills)
    if got_plugin_skills != want_plugin_skills:
        mismatches.append(f"plugin skills {got_plugin_skills} != declared {want_plugin_skills}")
    not_offered = sorted(str(s.get("name")) for s in components if s.get("name") not in offered)
    if not_offered:
        mismatches.append(f"declared skills not offered to the model: {not_offered}")
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
        "schema": "pluginbench.codex.native-treatment/2",
        "method": "codex debug prompt-input (the coding launch's settings); codex app-server skills/list, hooks/list, plugin/list",
        "model_call": False,
        "memory_file": {"loaded": bool(global_part), "text_chars": len(global_part)},
        "task_owned": {
            "memory_files": ([{"path": f"<cwd>/{project_source}", "text_chars": len(project_part),
                               "sha256": hashlib.sha256(project_part.encode()).hexdigest()}]
                             if project_source else []),
            "skills": [{"name": n, "path": "<cwd>" + p[len(expected.workdir.rstrip("/")):]
                        if p.startswith(expected.workdir.rstrip("/") + "/") else p} for n, p in repo_skills],
        },
        "skills": [{"name": n, "path": p} for n, p in got_standalone],
        "plugin_skills": [{"plugin": p, "name": n} for p, n in got_plugin_skills],
        "hooks": [{"plugin": p, "event": e, "command": c} for p, e, c in got_hooks],
        "plugins": sorted(installed),
        "ambient_skills": ambient,
        "offered_skills": list(offered),
        "expected": {
            "guidance": expected.guidance is not None,
            "skills": [{"name": n, "path": p} for n, p in want_standalone],
            "plugins": [p._asdict() for p in expected.plugins],
        },
        "mismatches": mismatches,
        "ok": not mismatches,
    }
