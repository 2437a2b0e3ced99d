"""Codex-specific admission: plugin layout, skill identity and hook commands.

Codex 0.169.0 facts (measured by the team on the real CLI, checked again against
the pinned CLI): a plugin is ``.codex-plugin/plugin.json`` (``name``, ``version``,
optional ``skills`` folder, default ``./skills/``) with ``skills/<dir>/SKILL.md`` whose
front matter ``name`` Codex lists as ``<plugin>:<name>``; plugin hooks live in
``hooks/hooks.json`` (or the manifest's ``hooks`` path) in the Claude-style
``{"hooks": {"SessionStart": [{"matcher"?, "hooks": [{"type": "command", ...}]}]}}``
shape, and Codex substitutes ``${PLUGIN_ROOT}``/``${CLAUDE_PLUGIN_ROOT}`` with the
installed root and ``${PLUGIN_DATA}``/``${CLAUDE_PLUGIN_DATA}`` with a data folder that
discovery cannot predict, so a hook naming either is refused.

Unsupported components (product description, "Native treatments"): MCP servers, apps,
custom agents, commands, plugin dependencies, asynchronous and non-command hooks.
Every refusal is a :class:`~pluginbench.errors.TreatmentError` naming the rule and path.
"""

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from ..errors import TreatmentError
from ._shared import admit_plugin_tree

MANIFEST = ".codex-plugin/plugin.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_DATA_VARS = ("${PLUGIN_DATA}", "${CLAUDE_PLUGIN_DATA}")
_ROOT_VARS = ("${PLUGIN_ROOT}", "${CLAUDE_PLUGIN_ROOT}")
_UNSUPPORTED_KEYS = ("mcpServers", "apps", "agents", "commands", "dependencies")
_UNSUPPORTED_FILES = (".mcp.json", ".app.json", "agents", "commands")


class CodexPlugin(NamedTuple):
    """An admitted Codex plugin: identity, skill names as Codex lists them, hook templates."""

    name: str
    version: str
    root: Path
    skills: tuple[str, ...]  # "<plugin>:<skill>"
    hooks: tuple[tuple[str, str], ...]  # (event, command template with ${PLUGIN_ROOT})


def _refuse(rule: str, path: Path, fix: str) -> TreatmentError:
    return TreatmentError(f"Codex admission: {rule}", file=str(path), fix=fix)


def skill_name(skill_dir: Path) -> str:
    """The front matter ``name`` of ``skill_dir/SKILL.md``; refused when absent."""
    path = skill_dir / "SKILL.md"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(f"skill has no readable SKILL.md ({exc})", path, "add a UTF-8 SKILL.md") from exc
    meta: Any = None
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end > 0:
            try:
                meta = yaml.safe_load(text[3:end])
            except yaml.YAMLError as exc:
                raise _refuse(f"SKILL.md front matter is not YAML ({exc})", path, "fix the front matter") from exc
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not _NAME.match(name):
        raise _refuse("SKILL.md front matter needs a `name` (letters, digits, - _ .)", path, "add `name:`")
    return name


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _refuse(f"unreadable JSON ({exc})", path, "write valid JSON") from exc


def _hooks(doc: Any, path: Path) -> list[tuple[str, str]]:
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        raise _refuse('hooks file needs a {"hooks": {...}} object', path, "use the Claude-style hooks shape")
    out: list[tuple[str, str]] = []
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise _refuse(f"hooks.{event} must be a list", path, "list matcher groups")
        for group in groups:
            for hook in (group.get("hooks") if isinstance(group, dict) else None) or []:
                if not isinstance(hook, dict) or hook.get("type") != "command":
                    raise _refuse(f"non-command hook under {event} is unsupported", path, "use type: command")
                if hook.get("async"):
                    raise _refuse(f"asynchronous hook under {event} is unsupported", path, "remove async")
                command = hook.get("command")
                if not isinstance(command, str) or not command.strip():
                    raise _refuse(f"hook under {event} has no command", path, "set command")
                if any(v in command for v in _DATA_VARS):
                    raise _refuse(
                        f"hook command names ${{PLUGIN_DATA}}/${{CLAUDE_PLUGIN_DATA}} under {event}",
                        path,
                        "Codex substitutes a data folder discovery cannot verify; use ${PLUGIN_ROOT}",
                    )
                out.append((event, command))
    return out


def read_codex_plugin(root: Path) -> CodexPlugin:
    """Admit a Codex plugin directory (after the shared tree rules) and describe it."""
    admit_plugin_tree(root)  # the shared rules (symlinks, non-regular files, dotenv, sizes)
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise _refuse(f"plugin has no {MANIFEST}", root, f"add {MANIFEST} with name and version")
    manifest = _load_json(manifest_path)
    if not isinstance(manifest, dict):
        raise _refuse("plugin manifest must be a JSON object", manifest_path, "write an object")
    name, version = manifest.get("name"), manifest.get("version")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _refuse("manifest `name` missing or not a simple name", manifest_path, "set name")
    if not isinstance(version, str) or not version.strip() or "/" in version:
        raise _refuse("manifest `version` missing", manifest_path, 'set version, e.g. "1.0.0"')
    for key in _UNSUPPORTED_KEYS:
        if manifest.get(key):
            raise _refuse(f"manifest declares unsupported `{key}`", manifest_path, f"remove {key}")
    for rel in _UNSUPPORTED_FILES:
        if (root / rel).exists():
            raise _refuse(f"plugin ships unsupported {rel}", root / rel, f"remove {rel}")

    skills_rel = manifest.get("skills", "./skills/")
    if not isinstance(skills_rel, str):
        raise _refuse("manifest `skills` must be a folder path", manifest_path, 'use "./skills/"')
    skills_dir = (root / skills_rel).resolve()
    if not skills_dir.is_relative_to(root.resolve()):
        raise _refuse("manifest `skills` escapes the plugin", manifest_path, "point inside the plugin")
    skills: list[str] = []
    if skills_dir.is_dir():
        for sub in sorted(p for p in skills_dir.iterdir() if p.is_dir()):
            skills.append(f"{name}:{skill_name(sub)}")

    hooks_rel = manifest.get("hooks", "./hooks/hooks.json")
    if not isinstance(hooks_rel, str):
        raise _refuse("manifest `hooks` must be a file path", manifest_path, 'use "./hooks/hooks.json"')
    hooks_path = (root / hooks_rel).resolve()
    if not hooks_path.is_relative_to(root.resolve()):
        raise _refuse("manifest `hooks` escapes the plugin", manifest_path, "point inside the plugin")
    hooks = _hooks(_load_json(hooks_path), hooks_path) if hooks_path.is_file() else []
    return CodexPlugin(name, version, root, tuple(skills), tuple(hooks))


def installed_command(template: str, installed_root: str) -> str:
    """The hook command as Codex lists it: ``${PLUGIN_ROOT}`` forms become the root."""
    for var in _ROOT_VARS:
        template = template.replace(var, installed_root)
    return template
