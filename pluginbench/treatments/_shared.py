"""Admission rules every harness shares: safe trees, guidance size, skill shape.

Small, stable API (the Codex rules build on it too):

* :func:`admit_guidance` — the combined instruction text, ≤ 32,768 bytes with separators.
* :func:`admit_skill` — a skill folder with ``SKILL.md`` and YAML frontmatter.
* :func:`admit_plugin_tree` — a plugin folder's safe file inventory.
* :func:`admit_shared` — all of the above on every treatment of an evaluation, whatever the harness.
* :func:`refuse` — the one way to build a :class:`~pluginbench.errors.TreatmentError`:
  the message starts with ``[rule]``, ``field`` is the rule name and ``file`` the path,
  so every refusal names the rule and the path.

Shared rules: no symlinks, hardlinks or special files (via ``scan_tree``), no dotenv
files (``.env``, ``.env.*``, ``.envrc``) anywhere, and ``.git`` is excluded, never copied.
"""

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from ..errors import TreatmentError
from ..tasks import TreeEntry, fingerprint, scan_tree

#: Combined guidance limit, separators included: larger files are truncated natively.
GUIDANCE_LIMIT = 32_768
#: Joins guidance files in the order declared.
GUIDANCE_SEPARATOR = b"\n\n"
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class SkillInfo(NamedTuple):
    """An admitted skill folder."""

    name: str
    description: str
    frontmatter: dict[str, object]
    root: Path
    entries: tuple[TreeEntry, ...]
    fingerprint: str


def refuse(rule: str, path: Path | str, message: str, fix: str) -> TreatmentError:
    """A TreatmentError naming ``rule`` (also its ``field``) and ``path``."""
    return TreatmentError(f"[{rule}] {message}", file=str(path), field=rule, fix=fix)


def _is_dotenv(name: str) -> bool:
    return name == ".env" or name.startswith(".env.") or name == ".envrc"


def safe_tree(root: Path, context: str) -> list[TreeEntry]:
    """Every regular file under ``root`` (``.git`` excluded) or a refusal naming the rule."""
    if not root.is_dir() or root.is_symlink():
        raise refuse("shared-tree", root, f"{context} is not a folder", "declare a folder")
    try:
        entries = scan_tree(root, context=context, error=TreatmentError)
    except TreatmentError as err:
        raise refuse("shared-tree", err.file or root, err.message, err.fix or "") from None
    for e in entries:
        if _is_dotenv(e.relpath.rsplit("/", 1)[-1]):
            raise refuse(
                "shared-dotenv", root / e.relpath, f"{context} contains a dotenv file",
                "remove ambient .env files from the package",
            )
    return entries


def admit_guidance(paths: Sequence[Path]) -> bytes:
    """The declared guidance files joined by a blank line; refused over 32,768 bytes."""
    parts: list[bytes] = []
    for path in paths:
        p = Path(path)
        if p.is_symlink() or not p.is_file():
            raise refuse("guidance-file", p, "guidance must be a regular file", "declare a regular .md file")
        if _is_dotenv(p.name):
            raise refuse("shared-dotenv", p, "a dotenv file cannot be guidance", "declare a .md file")
        data = p.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise refuse("guidance-file", p, "guidance is not UTF-8 text", "save it as UTF-8") from None
        if not text.strip():
            raise refuse("guidance-empty", p, "the guidance file is empty (a treatment that delivers nothing "
                         "would be measured as if it were guidance)", "write the guidance, or remove the file from the treatment")
        parts.append(data)
    combined = GUIDANCE_SEPARATOR.join(parts)
    if len(combined) > GUIDANCE_LIMIT:
        raise refuse(
            "guidance-size", paths[-1] if paths else "-",
            f"combined guidance is {len(combined)} bytes, over the {GUIDANCE_LIMIT}-byte limit "
            "(separators included)", "shorten the guidance or move detail into a skill",
        )
    return combined


def read_frontmatter(path: Path, rule: str) -> tuple[dict[str, object], str]:
    """The YAML frontmatter mapping and the body of a Markdown file, or a refusal."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise refuse(rule, path, "cannot be read as UTF-8 text", "save it as UTF-8") from None
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise refuse(rule, path, "has no YAML frontmatter", "start the file with a --- frontmatter block")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            try:
                data = yaml.safe_load("".join(lines[1:i])) or {}
            except yaml.YAMLError as exc:
                raise refuse(rule, path, f"frontmatter is not valid YAML ({exc.__class__.__name__})",
                             "fix the YAML between the --- lines") from None
            if not isinstance(data, dict):
                raise refuse(rule, path, "frontmatter is not a mapping", "use key: value lines")
            return {str(k): v for k, v in data.items()}, "".join(lines[i + 1:])
    raise refuse(rule, path, "frontmatter is not closed", "end the frontmatter with a --- line")


def admit_skill(path: Path) -> SkillInfo:
    """A skill folder: safe tree, ``SKILL.md`` with a kebab-case ``name`` equal to the
    folder name and a non-empty ``description``."""
    root = Path(path)
    entries = safe_tree(root, "the skill")
    skill_md = root / "SKILL.md"
    if not any(e.relpath == "SKILL.md" for e in entries):
        raise refuse("skill-manifest", skill_md, "the skill has no SKILL.md", "add SKILL.md at the skill's root")
    fm, _ = read_frontmatter(skill_md, "skill-frontmatter")
    name, desc = fm.get("name"), fm.get("description")
    if not isinstance(name, str) or not KEBAB.match(name):
        raise refuse("skill-frontmatter", skill_md, "name must be a kebab-case string", "set name: my-skill")
    if name != root.name:
        raise refuse("skill-name", skill_md, f"name {name!r} differs from the folder name {root.name!r}",
                     "rename the folder or the skill so they match")
    if not isinstance(desc, str) or not desc.strip():
        raise refuse("skill-frontmatter", skill_md, "description must be a non-empty string",
                     "add description: ...")
    return SkillInfo(name, desc, fm, root, tuple(entries), fingerprint(entries))


def admit_shared(treatments: Mapping[str, Any]) -> None:
    """The rules every harness shares (the simulated one included), on each treatment of an
    evaluation: guidance files, skill folders (safe tree, no dotenv, SKILL.md frontmatter)
    and plugin folders (safe tree, no dotenv). A harness's own table adds to these."""
    for t in treatments.values():
        if t.guidance:
            admit_guidance([Path(p) for p in t.guidance])
        for p in t.skills:
            admit_skill(Path(p))
        for p in t.plugins:
            admit_plugin_tree(Path(p))


def admit_plugin_tree(path: Path) -> list[TreeEntry]:
    """A plugin folder's file inventory under the shared rules."""
    return safe_tree(Path(path), "the plugin")
