"""Treatment admission: shared rules and the Claude Code table.

A refusal is always a :class:`~pluginbench.errors.TreatmentError` whose message starts
with ``[rule]``, whose ``field`` is the rule name and whose ``file`` is the offending path.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy

if TYPE_CHECKING:
    from ._claude_rules import (
        MARKETPLACE,
        ClaudeTreatment,
        DeclaredHook,
        DeclaredPlugin,
        DeclaredSkill,
        admit_claude_plugin,
        admit_claude_skill,
        admit_claude_treatment,
    )
    from ._codex_rules import CodexPlugin, installed_command, read_codex_plugin
    from ._shared import (
        GUIDANCE_LIMIT,
        GUIDANCE_SEPARATOR,
        SkillInfo,
        admit_guidance,
        admit_plugin_tree,
        admit_shared,
        admit_skill,
        read_frontmatter,
        refuse,
        safe_tree,
    )

__all__ = [
    "GUIDANCE_LIMIT",
    "GUIDANCE_SEPARATOR",
    "MARKETPLACE",
    "ClaudeTreatment",
    "CodexPlugin",
    "DeclaredHook",
    "DeclaredPlugin",
    "DeclaredSkill",
    "SkillInfo",
    "admit_claude_plugin",
    "admit_claude_skill",
    "admit_claude_treatment",
    "admit_guidance",
    "admit_plugin_tree",
    "admit_shared",
    "admit_skill",
    "installed_command",
    "read_codex_plugin",
    "read_frontmatter",
    "refuse",
    "safe_tree",
]

__getattr__ = lazy(__name__, __file__)
