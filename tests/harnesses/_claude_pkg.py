"""The sample treatment package (guidance, a skill, a plugin with a SessionStart hook)."""

from __future__ import annotations

import json
from pathlib import Path

from pluginbench.harnesses._port import FrozenTreatment

MARKER = "PLUGINBENCH-GUIDANCE-MARKER"


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def sample_treatment(tmp: Path) -> FrozenTreatment:
    """The package the recorded samples in data/claude-2.1.328/ were made with."""
    guidance = write(tmp / "pkg" / "core.md", f"# Guidance\n{MARKER}: write guided answers.\n")
    skill = tmp / "pkg" / "skills" / "tidy-code"
    write(skill / "SKILL.md", "---\nname: tidy-code\ndescription: Keep code tidy.\n---\nBe tidy.\n")
    plugin = tmp / "pkg" / "plugins" / "pb-hooks"
    write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "pb-hooks", "version": "0.1.0"}))
    write(plugin / "hooks" / "mark.sh", "#!/bin/sh\necho session-start-ran >> \"$HOME/hook.log\"\n", 0o755)
    write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh\""}]}]}}))
    write(plugin / "skills" / "plug-skill" / "SKILL.md",
          "---\nname: plug-skill\ndescription: A plugin skill.\n---\nbody\n")
    return FrozenTreatment("core", tmp / "pkg", (guidance,), (skill,), (plugin,), "fp")


def vanilla() -> FrozenTreatment:
    return FrozenTreatment("vanilla", None, (), (), (), "fp0")
