"""Claude Code admission table (on top of the shared rules) and the declared inventory.

Each rule is named in the refusal (``[rule] message``, ``field=rule``). The rules:

=====================  ==========================================================
plugin-manifest        only ``.claude-plugin/plugin.json``; a root plugin.json is
                       refused; no ``agents``/``commands``/MCP/LSP/… fields
plugin-default-path    commands/, workflows/, output-styles/, monitors/, .mcp.json,
                       .lsp.json, a root settings.json and a root SKILL.md
plugin-skills          skills/ holds only skill folders (always scanned)
plugin-agents          agents/: .md files only, no subfolders, not empty; frontmatter
                       has only a kebab-case name and a description
skill-frontmatter-key  only the allowed keys; booleans must be YAML booleans;
                       ``paths`` only on plugin skills, a list of non-empty globs
hook-file              only ``hooks`` and ``description``; synchronous command hooks
hook-matcher           empty, ``*``, or exact names joined by ``|``
hook-duplicate         same event and command twice, even across plugins
=====================  ==========================================================
"""

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from ..tasks import TreeEntry, fingerprint
from ._shared import (
    KEBAB,
    SkillInfo,
    admit_guidance,
    admit_plugin_tree,
    admit_skill,
    read_frontmatter,
    refuse,
)

MARKETPLACE = "pluginbench-frozen"

SKILL_KEYS = frozenset({
    "name", "description", "dependencies", "license", "metadata", "allowed-tools",
    "disable-model-invocation", "user-invocable", "argument-hint",
})
PLUGIN_SKILL_KEYS = SKILL_KEYS | {"paths"}
MANIFEST_KEYS = frozenset({
    "name", "version", "description", "author", "homepage", "repository", "license",
    "keywords", "displayName", "skills", "hooks",
})
REFUSED_DEFAULT_PATHS = ("commands", "workflows", "output-styles", "monitors", ".mcp.json",
                         ".lsp.json", "settings.json", "SKILL.md")
RECORDED_DIRS = ("bin", "themes")
HOOK_EVENTS = frozenset({
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "PermissionDenied",
    "Notification", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop", "StopFailure",
    "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "Setup",
})
MATCHER = re.compile(r"^[A-Za-z0-9_]+(?:\|[A-Za-z0-9_]+)*$")


class DeclaredSkill(NamedTuple):
    name: str  # as Claude Code lists it: "skill" or "plugin:skill"
    source: str  # "userSettings" (loose) or "plugin"
    plugin: str | None
    relpath: str  # SKILL.md relative to the config dir (loose) or the plugin root
    user_invocable: bool
    model_invocable: bool


class DeclaredHook(NamedTuple):
    event: str
    matcher: str
    plugin: str
    command: str


class DeclaredPlugin(NamedTuple):
    name: str
    version: str | None
    root: Path
    entries: tuple[TreeEntry, ...]
    fingerprint: str
    recorded_dirs: tuple[str, ...]


class ClaudeTreatment(NamedTuple):
    """What an admitted treatment declares, in the terms discovery reports."""

    guidance: bytes
    skills: tuple[DeclaredSkill, ...]
    agents: tuple[str, ...]  # "plugin:agent"
    plugins: tuple[DeclaredPlugin, ...]
    hooks: tuple[DeclaredHook, ...]
    loose_skills: tuple[SkillInfo, ...]

    @property
    def commands(self) -> tuple[str, ...]:
        """Non-built-in commands: every declared skill not marked user-invocable: false."""
        return tuple(sorted(s.name for s in self.skills if s.user_invocable))


def check_skill_frontmatter(info: SkillInfo, *, plugin: bool) -> DeclaredSkill | None:
    """Apply the skill-frontmatter rules; returns nothing (callers build the declaration)."""
    fm, skill_md = info.frontmatter, info.root / "SKILL.md"
    allowed = PLUGIN_SKILL_KEYS if plugin else SKILL_KEYS
    for key in fm:
        if key == "paths" and not plugin:
            raise refuse("skill-frontmatter-key", skill_md,
                         "a loose skill with paths is hidden until a matching file is touched",
                         "remove paths, or ship the skill inside a plugin")
        if key not in allowed:
            raise refuse("skill-frontmatter-key", skill_md, f"frontmatter key {key!r} is not allowed",
                         f"use only: {', '.join(sorted(allowed))}")
    for key in ("disable-model-invocation", "user-invocable"):
        if key in fm and not isinstance(fm[key], bool):
            raise refuse("skill-frontmatter-key", skill_md, f"{key} must be a YAML boolean",
                         "write true or false")
    if "paths" in fm:
        paths = fm["paths"]
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p.strip() for p in paths):
            raise refuse("skill-frontmatter-key", skill_md, "paths must be a list of non-empty globs",
                         "write paths: [\"src/**\"]")
    return None


def _skill_decl(info: SkillInfo, plugin: str | None, relpath: str) -> DeclaredSkill:
    fm = info.frontmatter
    return DeclaredSkill(
        name=f"{plugin}:{info.name}" if plugin else info.name,
        source="plugin" if plugin else "userSettings",
        plugin=plugin, relpath=relpath,
        user_invocable=fm.get("user-invocable", True) is not False,
        model_invocable=fm.get("disable-model-invocation", False) is not True,
    )


def admit_claude_skill(path: Path) -> tuple[SkillInfo, DeclaredSkill]:
    """A loose skill, delivered as ``<config>/skills/<name>/``."""
    info = admit_skill(path)
    check_skill_frontmatter(info, plugin=False)
    return info, _skill_decl(info, None, f"skills/{info.name}/SKILL.md")


def _load_json(path: Path, rule: str) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise refuse(rule, path, f"is not valid JSON ({exc.__class__.__name__})", "fix the JSON") from None


def _manifest(root: Path, files: set[str]) -> dict[str, object]:
    if "plugin.json" in files:
        raise refuse("plugin-manifest", root / "plugin.json",
                     "a root plugin.json is ignored by Claude Code",
                     "move it to .claude-plugin/plugin.json")
    path = root / ".claude-plugin" / "plugin.json"
    if ".claude-plugin/plugin.json" not in files:
        raise refuse("plugin-manifest", path, "the plugin has no .claude-plugin/plugin.json",
                     "add the manifest")
    data = _load_json(path, "plugin-manifest")
    if not isinstance(data, dict):
        raise refuse("plugin-manifest", path, "the manifest is not a JSON object", "use {\"name\": ...}")
    for key in data:
        if key not in MANIFEST_KEYS:
            raise refuse("plugin-manifest", path, f"manifest field {key!r} is not supported",
                         f"use only: {', '.join(sorted(MANIFEST_KEYS))}")
    name = data.get("name")
    if not isinstance(name, str) or not KEBAB.match(name):
        raise refuse("plugin-manifest", path, "name must be a kebab-case string", "set \"name\": \"my-plugin\"")
    return data


def _rel_list(value: object, path: Path, field: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise refuse("plugin-manifest", path, f"{field} must name relative paths",
                     f"write \"{field}\": \"./{field}/...\"")
    out = []
    for item in items:
        rel = item[2:] if item.startswith("./") else item
        if rel.startswith("/") or ".." in rel.split("/"):
            raise refuse("plugin-manifest", path, f"{field} path {item!r} leaves the plugin", "use ./ paths")
        out.append(rel.rstrip("/"))
    return out


def _check_hook_file(path: Path, plugin: str) -> list[DeclaredHook]:
    data = _load_json(path, "hook-file")
    if not isinstance(data, dict) or set(data) - {"hooks", "description"}:
        raise refuse("hook-file", path, "a hook file may hold only hooks and description",
                     "remove the other keys")
    events = data.get("hooks", {})
    if not isinstance(events, dict):
        raise refuse("hook-file", path, "hooks must be an object of events", "use {\"SessionStart\": [...]}")
    out: list[DeclaredHook] = []
    for event, groups in events.items():
        if event not in HOOK_EVENTS:
            raise refuse("hook-file", path, f"unknown hook event {event!r}", "use a Claude Code hook event")
        if not isinstance(groups, list):
            raise refuse("hook-file", path, f"{event} must be a list of matcher groups", "use a list")
        for group in groups:
            if not isinstance(group, dict) or set(group) - {"matcher", "hooks"}:
                raise refuse("hook-file", path, f"{event}: a group holds only matcher and hooks",
                             "remove the other keys")
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str) or not (matcher in ("", "*") or MATCHER.match(matcher)):
                raise refuse("hook-matcher", path, f"{event}: matcher {matcher!r} is not allowed",
                             "use empty, *, or exact names joined by |")
            hooks = group.get("hooks")
            if not isinstance(hooks, list) or not hooks:
                raise refuse("hook-file", path, f"{event}: hooks must be a non-empty list", "add hooks")
            for hook in hooks:
                if not isinstance(hook, dict) or hook.get("type") != "command":
                    raise refuse("hook-file", path, f"{event}: only command hooks are supported",
                                 "use {\"type\": \"command\", \"command\": ...}")
                if hook.get("async") or set(hook) - {"type", "command", "timeout"}:
                    raise refuse("hook-file", path, f"{event}: only synchronous command hooks "
                                 "(type, command, timeout)", "remove async and other keys")
                cmd = hook.get("command")
                if not isinstance(cmd, str) or not cmd.strip():
                    raise refuse("hook-file", path, f"{event}: command must be a non-empty string",
                                 "set command")
                out.append(DeclaredHook(event, matcher, plugin, cmd))
    return out


def admit_claude_plugin(path: Path) -> tuple[DeclaredPlugin, list[DeclaredSkill], list[str], list[DeclaredHook]]:
    """A plugin folder under the Claude Code table: (plugin, skills, agents, hooks)."""
    root = Path(path)
    entries = admit_plugin_tree(root)
    files = {e.relpath for e in entries}
    tops = {rel.split("/", 1)[0] for rel in files}
    manifest = _manifest(root, files)
    name = str(manifest["name"])
    mpath = root / ".claude-plugin" / "plugin.json"
    for refused in REFUSED_DEFAULT_PATHS:
        if refused in tops:
            raise refuse("plugin-default-path", root / refused,
                         f"{refused} is not supported in a plugin", "remove it from the package")
    if "agents" in manifest:
        raise refuse("plugin-manifest", mpath, "the manifest agents field is refused",
                     "put agents in agents/*.md")
    skill_dirs = ["skills"] + [d for d in _rel_list(manifest.get("skills", []), mpath, "skills") if d != "skills"]
    skills: list[DeclaredSkill] = []
    for sdir in skill_dirs:
        children = sorted({rel[len(sdir) + 1:].split("/", 1)[0] for rel in files if rel.startswith(sdir + "/")})
        for child in children:
            if f"{sdir}/{child}" in files:
                raise refuse("plugin-skills", root / sdir / child, f"{sdir}/ may hold only skill folders",
                             "move the file into a skill folder")
            info = admit_skill(root / sdir / child)
            check_skill_frontmatter(info, plugin=True)
            skills.append(_skill_decl(info, name, f"{sdir}/{child}/SKILL.md"))
    agents: list[str] = []
    if "agents" in tops:
        agent_files = sorted(rel for rel in files if rel.startswith("agents/"))
        if not agent_files:
            raise refuse("plugin-agents", root / "agents", "agents/ is empty", "remove it or add agents")
        for rel in agent_files:
            if rel.count("/") != 1 or not rel.endswith(".md"):
                raise refuse("plugin-agents", root / rel, "agents/ may hold only .md files, directly",
                             "move or remove it")
            fm, _ = read_frontmatter(root / rel, "plugin-agents")
            if set(fm) != {"name", "description"}:
                raise refuse("plugin-agents", root / rel,
                             f"agent frontmatter must be exactly name and description, got {sorted(fm)}",
                             "remove model, tools and other keys")
            if not isinstance(fm["name"], str) or not KEBAB.match(fm["name"]):
                raise refuse("plugin-agents", root / rel, "agent name must be kebab-case", "fix name")
            if not isinstance(fm["description"], str) or not fm["description"].strip():
                raise refuse("plugin-agents", root / rel, "agent description must be non-empty", "fix it")
            agents.append(f"{name}:{fm['name']}")
    elif (root / "agents").is_dir():
        raise refuse("plugin-agents", root / "agents", "agents/ is empty", "remove it or add agents")
    hook_files = ["hooks/hooks.json"] + [
        f for f in _rel_list(manifest.get("hooks", []), mpath, "hooks") if f != "hooks/hooks.json"]
    hooks: list[DeclaredHook] = []
    for rel in hook_files:
        if rel in files:
            hooks.extend(_check_hook_file(root / rel, name))
        elif rel != "hooks/hooks.json":
            raise refuse("hook-file", root / rel, "the manifest names a missing hook file", "add it")
    version = manifest.get("version")
    plugin = DeclaredPlugin(name, str(version) if version is not None else None, root, tuple(entries),
                            fingerprint(entries), tuple(d for d in RECORDED_DIRS if d in tops))
    return plugin, skills, agents, hooks


def admit_claude_treatment(
    guidance: Sequence[Path], skills: Sequence[Path], plugins: Sequence[Path]
) -> ClaudeTreatment:
    """Admit a whole arm for Claude Code, or raise TreatmentError naming rule and path."""
    text = admit_guidance(list(guidance))
    loose: list[SkillInfo] = []
    decl_skills: list[DeclaredSkill] = []
    for s in skills:
        info, decl = admit_claude_skill(Path(s))
        loose.append(info)
        decl_skills.append(decl)
    decl_plugins: list[DeclaredPlugin] = []
    agents: list[str] = []
    hooks: list[DeclaredHook] = []
    seen_hooks: dict[tuple[str, str], str] = {}
    for p in plugins:
        plugin, pskills, pagents, phooks = admit_claude_plugin(Path(p))
        if any(dp.name == plugin.name for dp in decl_plugins):
            raise refuse("plugin-manifest", Path(p), f"two plugins are named {plugin.name!r}", "rename one")
        for h in phooks:
            key = (h.event, h.command)
            if key in seen_hooks:
                raise refuse("hook-duplicate", Path(p) / "hooks",
                             f"{h.event} hook {h.command!r} is declared twice ({seen_hooks[key]} and {h.plugin})",
                             "keep one; the session names a hook run only by event and command")
            seen_hooks[key] = h.plugin
        decl_plugins.append(plugin)
        decl_skills.extend(pskills)
        agents.extend(pagents)
        hooks.extend(phooks)
    names = [s.name for s in decl_skills]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise refuse("skill-name", Path(skills[0]) if skills else Path("."), f"skill {dup[0]!r} is declared twice",
                     "declare each skill once")
    return ClaudeTreatment(text, tuple(decl_skills), tuple(sorted(agents)), tuple(decl_plugins),
                           tuple(hooks), tuple(loose))
