"""The repository's own guidance (task-owned files), and an arm that starts without it.

``task_owned: remove`` on a treatment makes that arm's coding sandbox start from the
starting source minus the repository's own instruction files and skills, at any depth:

* files named ``AGENTS.md``, ``AGENTS.override.md`` (Codex, opencode), ``CLAUDE.md`` and
  ``CLAUDE.local.md`` (Claude Code), ``QWEN.md`` (Qwen Code), ``GEMINI.md`` (Gemini CLI);
* every file under a folder named ``.claude``, ``.agents``, ``.qwen``, ``.opencode`` or ``.gemini``
  (skills, agents, commands, settings, hooks, plugins).

The patch base, the verifier and the measures keep the whole starting source:
:func:`restore_removed` puts each removed file back into the exported tree unless the agent
left something at that path (or any folder above it is not a plain folder), so the
canonical patch shows only what the agent did. A file the agent wrote where a removed one
was is a change to that file. :func:`task_owned_paths` is pure; the rest copy files.

A task whose starting source lives only in its image (no ``workspace/`` folder) has no host
copy to strip: the tree exported from the image at preparation says what to remove
(:func:`owned_in_tree`), and :func:`removal_roots` (pure) names the paths the coding sandbox
deletes **inside itself** before the agent starts (a whole ``.claude``/``.agents`` folder, or
the file). Nothing from the task runs on the host.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from ._tree import TreeEntry, copy_tree, scan_tree

#: instruction file names removed at any depth
TASK_OWNED_FILES = frozenset({"AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", "QWEN.md", "GEMINI.md"})
#: folders removed whole at any depth
TASK_OWNED_DIRS = frozenset({".claude", ".agents", ".qwen", ".opencode", ".gemini"})


def bind_task_owned(fingerprint: str, task_owned: str) -> str:
    """An arm's fingerprint with its ``task_owned`` setting bound in: unchanged for ``keep``;
    for ``remove`` a SHA-256 over the frozen tree's fingerprint and the setting (an arm that
    removes the repository's guidance is never the same package as one that keeps it)."""
    if task_owned == "keep":
        return fingerprint
    return hashlib.sha256(f"{fingerprint}\0task_owned={task_owned}".encode()).hexdigest()


def task_owned_paths(relpaths: Iterable[str]) -> tuple[str, ...]:
    """The repository's own instruction files and skill/settings files among ``relpaths``
    (POSIX paths relative to the repository root), sorted."""
    out = []
    for rel in relpaths:
        parts = rel.split("/")
        if parts[-1] in TASK_OWNED_FILES or any(p in TASK_OWNED_DIRS for p in parts[:-1]):
            out.append(rel)
    return tuple(sorted(out))


def stripped_copy(source: Path, dest: Path) -> tuple[str, ...]:
    """Copy ``source`` into ``dest`` without its task-owned files; the paths left out."""
    entries = scan_tree(source, context="the starting source")
    removed = set(task_owned_paths(e.relpath for e in entries))
    keep: list[TreeEntry] = [e for e in entries if e.relpath not in removed]
    copy_tree(source, dest, keep)
    return tuple(sorted(removed))


def owned_in_tree(source: Path) -> tuple[str, ...]:
    """The task-owned files of the tree at ``source`` (an image task's exported starting
    source), sorted: what its removing arm's sandbox deletes inside itself."""
    return task_owned_paths(e.relpath for e in scan_tree(source, context="the starting source"))


def removal_roots(removed: Iterable[str]) -> tuple[str, ...]:
    """The fewest paths whose recursive removal deletes every ``removed`` file and nothing
    else task-owned rules would keep: each file under a ``.claude``/``.agents`` folder
    becomes its outermost such folder, any other file itself. Sorted, no duplicates."""
    roots = set()
    for rel in removed:
        parts = rel.split("/")
        cut = next((i for i, p in enumerate(parts[:-1]) if p in TASK_OWNED_DIRS), None)
        roots.add("/".join(parts[: cut + 1]) if cut is not None else rel)
    return tuple(sorted(roots))


def _plain_parents(root: Path, rel: str) -> bool:
    """Whether every folder above ``rel`` under ``root`` is absent or a real folder (never a
    symlink or a file), so writing ``rel`` cannot leave ``root``."""
    cur = root
    for part in rel.split("/")[:-1]:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return True
        if not stat.S_ISDIR(st.st_mode):
            return False
    return True


def restore_removed(source: Path, export: Path, removed: Iterable[str]) -> tuple[str, ...]:
    """Put each ``removed`` file from ``source`` back into ``export`` where the agent left
    nothing at that path; the paths restored, sorted. A path the agent wrote (a file, a
    folder, a symlink) or one under a non-folder is left as the agent left it."""
    restored = []
    for rel in sorted(removed):
        target = export / rel
        if os.path.lexists(target) or not _plain_parents(export, rel):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target, follow_symlinks=False)
        os.chmod(target, stat.S_IMODE(os.lstat(source / rel).st_mode))
        restored.append(rel)
    return tuple(restored)
