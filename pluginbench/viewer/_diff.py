"""Patches as files, and two attempts compared: pure functions over text.

:func:`split_patch` cuts a ``git diff`` into one :class:`PatchFile` per file with its
added and removed line counts (binary hunks counted as neither). :func:`patch_delta`
is the unified diff between two patches, and :func:`divergence` the first step where two
tool-call sequences differ (where two agents' transcripts part ways).
"""

import difflib
from collections.abc import Sequence

import msgspec


class PatchFile(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    added: int
    removed: int
    binary: bool
    text: str  # this file's part of the patch, from its ``diff --git`` line


def _path(header: str) -> str:
    # "diff --git a/x b/x": the b/ side (a rename's new name); quoted names kept as written
    rest = header[len("diff --git "):]
    if " b/" in rest:
        return rest.rsplit(" b/", 1)[1]
    return rest


def split_patch(patch: str) -> list[PatchFile]:
    """One entry per ``diff --git`` section, in patch order."""
    out: list[PatchFile] = []
    chunk: list[str] = []

    def close() -> None:
        if not chunk:
            return
        added = removed = 0
        binary = False
        in_hunk = False
        for line in chunk[1:]:
            if line.startswith("@@"):
                in_hunk = True
            elif line.startswith(("GIT binary patch", "Binary files ")):
                binary = True
                in_hunk = False
            elif in_hunk and line.startswith("+"):
                added += 1
            elif in_hunk and line.startswith("-"):
                removed += 1
        out.append(PatchFile(path=_path(chunk[0]), added=added, removed=removed, binary=binary, text="\n".join(chunk)))

    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            close()
            chunk = [line]
        elif chunk:
            chunk.append(line)
    close()
    return out


def patch_delta(left: str, right: str, left_name: str = "left", right_name: str = "right") -> str:
    """The unified diff from one patch's text to the other's (empty when equal)."""
    return "".join(difflib.unified_diff(left.splitlines(keepends=True), right.splitlines(keepends=True),
                                        fromfile=left_name, tofile=right_name, n=2))


def divergence(left: Sequence[str], right: Sequence[str]) -> int | None:
    """The 0-based index of the first tool call that differs, or None when both are equal."""
    for i, (a, b) in enumerate(zip(left, right, strict=False)):
        if a != b:
            return i
    return None if len(left) == len(right) else min(len(left), len(right))
