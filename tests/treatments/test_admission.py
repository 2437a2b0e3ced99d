"""Admission: the shared rules and the Claude Code table refuse bad packages, naming rule and path."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from pluginbench.errors import TreatmentError
from pluginbench.treatments import (
    GUIDANCE_LIMIT,
    admit_claude_treatment,
    admit_guidance,
    admit_skill,
)
from tests.harnesses._claude_pkg import sample_treatment, write


def _plugin(tmp: Path, name: str = "good-plugin") -> Path:
    root = tmp / name
    write(root / ".claude-plugin" / "plugin.json", json.dumps({"name": name, "version": "1.0.0"}))
    write(root / "skills" / "s-one" / "SKILL.md", "---\nname: s-one\ndescription: one\n---\n")
    return root


def _skill(tmp: Path, front: str, name: str = "a-skill") -> Path:
    write(tmp / name / "SKILL.md", f"---\nname: {name}\ndescription: d\n{front}---\nbody\n")
    return tmp / name


def _refused(rule: str, fn: Callable[[], object]) -> TreatmentError:
    with pytest.raises(TreatmentError) as info:
        fn()
    err = info.value
    assert err.field == rule and f"[{rule}]" in err.message and err.file
    return err


def test_sample_package_is_admitted_with_its_declared_inventory(tmp_path: Path) -> None:
    """The sample package yields its skills, commands, plugin and SessionStart hook."""
    ft = sample_treatment(tmp_path)
    t = admit_claude_treatment(ft.guidance, ft.skills, ft.plugins)
    assert [s.name for s in t.skills] == ["tidy-code", "pb-hooks:plug-skill"]
    assert t.commands == ("pb-hooks:plug-skill", "tidy-code")
    assert [(h.event, h.matcher) for h in t.hooks] == [("SessionStart", "startup")]
    assert t.guidance.startswith(b"# Guidance")


def test_guidance_limit_counts_separators(tmp_path: Path) -> None:
    """Files whose bytes sum to the limit are refused once the separator is counted; the exact limit fits."""
    half = GUIDANCE_LIMIT // 2
    a, b = write(tmp_path / "a.md", "a" * half), write(tmp_path / "b.md", "b" * half)
    _refused("guidance-size", lambda: admit_guidance([a, b]))
    c, d = write(tmp_path / "c.md", "c" * (half - 1)), write(tmp_path / "d.md", "d" * (half - 1))
    assert len(admit_guidance([c, d])) == GUIDANCE_LIMIT


def test_symlink_hardlink_special_and_dotenv_are_refused(tmp_path: Path) -> None:
    """Symlinks, hardlinks, sockets and dotenv files fail the shared tree rules."""
    s1 = _skill(tmp_path / "1", "")
    os.symlink("/etc/passwd", s1 / "link")
    assert "symlink" in _refused("shared-tree", lambda: admit_skill(s1)).message
    s2 = _skill(tmp_path / "2", "")
    os.link(s2 / "SKILL.md", tmp_path / "2" / "hard")
    _refused("shared-tree", lambda: admit_skill(s2))
    s3 = _skill(tmp_path / "3", "")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(s3 / "sock"))
        _refused("shared-tree", lambda: admit_skill(s3))
    finally:
        sock.close()
    s4 = _skill(tmp_path / "4", "")
    write(s4 / "scripts" / ".env.local", "TOKEN=x\n")
    assert _refused("shared-dotenv", lambda: admit_skill(s4)).file.endswith(".env.local")


def test_git_internals_are_excluded_not_refused(tmp_path: Path) -> None:
    """A .git folder inside a skill is skipped, not copied and not refused."""
    s = _skill(tmp_path, "")
    write(s / ".git" / "HEAD", "ref\n")
    assert [e.relpath for e in admit_skill(s).entries] == ["SKILL.md"]


def test_skill_needs_skill_md_with_frontmatter(tmp_path: Path) -> None:
    """A skill without SKILL.md, without frontmatter or with a mismatched name is refused."""
    (tmp_path / "empty").mkdir()
    _refused("skill-manifest", lambda: admit_skill(tmp_path / "empty"))
    write(tmp_path / "nofm" / "SKILL.md", "# no frontmatter\n")
    _refused("skill-frontmatter", lambda: admit_skill(tmp_path / "nofm"))
    write(tmp_path / "other" / "SKILL.md", "---\nname: different\ndescription: d\n---\n")
    _refused("skill-name", lambda: admit_skill(tmp_path / "other"))


@pytest.mark.parametrize("front", ["model: opus\n", "effort: high\n", "context: fork\n", "hooks: {}\n",
                                   "user-invocable: \"yes\"\n", "paths: [\"src/**\"]\n"])
def test_loose_skill_frontmatter_keys_are_refused(tmp_path: Path, front: str) -> None:
    """Refused keys, non-boolean flags and paths on a loose skill break the frontmatter rule."""
    s = _skill(tmp_path, front)
    _refused("skill-frontmatter-key", lambda: admit_claude_treatment([], [s], []))


def test_plugin_skill_may_set_paths_but_not_empty_globs(tmp_path: Path) -> None:
    """A plugin skill may declare paths as non-empty globs only."""
    p = _plugin(tmp_path)
    write(p / "skills" / "s-one" / "SKILL.md", "---\nname: s-one\ndescription: d\npaths: [\"src/**\"]\n---\n")
    assert admit_claude_treatment([], [], [p]).skills[0].name == "good-plugin:s-one"
    write(p / "skills" / "s-one" / "SKILL.md", "---\nname: s-one\ndescription: d\npaths: [\"\"]\n---\n")
    _refused("skill-frontmatter-key", lambda: admit_claude_treatment([], [], [p]))


def test_plugin_manifest_location_and_fields(tmp_path: Path) -> None:
    """A root plugin.json, a missing manifest and the agents/commands fields are refused."""
    p = _plugin(tmp_path, "p-one")
    write(p / "plugin.json", "{}")
    _refused("plugin-manifest", lambda: admit_claude_treatment([], [], [p]))
    q = tmp_path / "p-two"
    write(q / "skills" / "s-one" / "SKILL.md", "---\nname: s-one\ndescription: d\n---\n")
    _refused("plugin-manifest", lambda: admit_claude_treatment([], [], [q]))
    for field in ("agents", "commands", "mcpServers"):
        r = _plugin(tmp_path, f"p-{field.lower()}")
        write(r / ".claude-plugin" / "plugin.json", json.dumps({"name": f"p-{field.lower()}", field: "./x"}))
        _refused("plugin-manifest", lambda r=r: admit_claude_treatment([], [], [r]))
    ok = _plugin(tmp_path, "p-meta")
    write(ok / ".claude-plugin" / "plugin.json", json.dumps({"name": "p-meta", "displayName": "Meta"}))
    assert admit_claude_treatment([], [], [ok]).plugins[0].name == "p-meta"


@pytest.mark.parametrize("path", ["commands/x.md", "workflows/w.md", "output-styles/o.md", "monitors/m.json",
                                  ".mcp.json", ".lsp.json", "settings.json", "SKILL.md"])
def test_plugin_default_paths_are_refused(tmp_path: Path, path: str) -> None:
    """Each refused default path in a plugin stops admission and is named."""
    p = _plugin(tmp_path)
    write(p / path, "{}")
    err = _refused("plugin-default-path", lambda: admit_claude_treatment([], [], [p]))
    assert path.split("/")[0] in err.file


def test_bin_and_themes_are_admitted_and_recorded(tmp_path: Path) -> None:
    """bin/ and themes/ are admitted and recorded on the plugin."""
    p = _plugin(tmp_path)
    write(p / "bin" / "tool", "#!/bin/sh\n", 0o755)
    write(p / "themes" / "t.json", "{}")
    assert admit_claude_treatment([], [], [p]).plugins[0].recorded_dirs == ("bin", "themes")


def test_skills_folder_holds_only_skill_folders(tmp_path: Path) -> None:
    """A loose file in a plugin's skills/ is refused."""
    p = _plugin(tmp_path)
    write(p / "skills" / "notes.md", "x")
    _refused("plugin-skills", lambda: admit_claude_treatment([], [], [p]))


@pytest.mark.parametrize(("rel", "text"), [
    ("agents/sub/a.md", "---\nname: a\ndescription: d\n---\n"),
    ("agents/a.txt", "x"),
    ("agents/a.md", "---\nname: a\ndescription: d\nmodel: haiku\n---\n"),
    ("agents/a.md", "---\nname: Not_Kebab\ndescription: d\n---\n"),
])
def test_plugin_agents_rules(tmp_path: Path, rel: str, text: str) -> None:
    """Agents must be direct .md files whose frontmatter is only a kebab-case name and a description."""
    p = _plugin(tmp_path)
    write(p / rel, text)
    _refused("plugin-agents", lambda: admit_claude_treatment([], [], [p]))


def test_empty_agents_folder_is_refused_and_good_agents_are_declared(tmp_path: Path) -> None:
    """An empty agents/ is refused; a valid agent is declared as plugin:name."""
    p = _plugin(tmp_path)
    (p / "agents").mkdir()
    _refused("plugin-agents", lambda: admit_claude_treatment([], [], [p]))
    write(p / "agents" / "helper.md", "---\nname: helper\ndescription: helps\n---\nbody\n")
    assert admit_claude_treatment([], [], [p]).agents == ("good-plugin:helper",)


def _hooks(p: Path, data: object, rel: str = "hooks/hooks.json") -> None:
    write(p / rel, json.dumps(data))


@pytest.mark.parametrize(("rule", "data"), [
    ("hook-file", {"hooks": {}, "extra": 1}),
    ("hook-file", {"hooks": {"SessionStart": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}}),
    ("hook-file", {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "x", "async": True}]}]}}),
    ("hook-matcher", {"hooks": {"PreToolUse": [{"matcher": "Bash*", "hooks": [{"type": "command", "command": "x"}]}]}}),
    ("hook-matcher", {"hooks": {"PreToolUse": [{"matcher": "Edit|", "hooks": [{"type": "command", "command": "x"}]}]}}),
])
def test_hook_file_and_matcher_rules(tmp_path: Path, rule: str, data: object) -> None:
    """Extra keys, non-command or async hooks, and non-exact matchers are refused."""
    p = _plugin(tmp_path)
    _hooks(p, data)
    _refused(rule, lambda: admit_claude_treatment([], [], [p]))


def test_default_hook_file_is_checked_even_when_the_manifest_names_others(tmp_path: Path) -> None:
    """hooks/hooks.json is checked although the manifest points at another hook file."""
    p = _plugin(tmp_path)
    write(p / ".claude-plugin" / "plugin.json", json.dumps({"name": "good-plugin", "hooks": "./extra/h.json"}))
    _hooks(p, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo ok"}]}]}}, "extra/h.json")
    _hooks(p, {"hooks": {}, "bad": True})
    _refused("hook-file", lambda: admit_claude_treatment([], [], [p]))


def test_duplicate_hooks_across_plugins_are_refused(tmp_path: Path) -> None:
    """The same event and command in two plugins is refused."""
    hook = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}
    a, b = _plugin(tmp_path, "plug-a"), _plugin(tmp_path, "plug-b")
    write(b / "skills" / "s-one" / "SKILL.md", "---\nname: s-one\ndescription: d\n---\n")
    _hooks(a, hook)
    _hooks(b, hook)
    _refused("hook-duplicate", lambda: admit_claude_treatment([], [], [a, b]))
