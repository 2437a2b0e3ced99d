"""The source-only filter: the saved ``model.patch`` without the agent's test files.

A DeepSWE verifier replaces only the test files its hidden ``test.patch`` touches; every
other test file the agent wrote is built or collected with the hidden suite, so an agent
test that calls a missing helper can fail a correct solution. The source-only grade reruns
the unchanged verifier on the patch this module filters (revision :data:`FILTER_REVISION`):

* a test file is one the test-line classifier (:func:`is_test_path`) matches, or any
  ``conftest.py``; test data, fixtures, examples and shared configuration outside test
  directories and test-named files stay (``src/fixtures/b.css`` stays,
  ``tests/fixtures/a.json`` is left out) and are listed in ``kept_test_setup_files``;
* a file the task's ``solution/solution.patch`` changes and its ``tests/test.patch`` does
  not is kept whole even when it looks like a test (``kept_reference_solution_files``);
* a task without ``solution.patch``, or a rename between a test file and another file,
  gives an ``unavailable`` grade with the reason;
* ``trusted_test_overlap`` lists kept paths the hidden tests still overwrite.

Patches are handled as ``latin-1`` text so every byte survives the round trip: decode the
saved bytes with ``latin-1`` and encode the filtered text the same way.
"""

import hashlib
import re
from collections.abc import Callable
from typing import NamedTuple

from .._parsing import git_lines
from ._lines import is_test_path

#: the revision of the rule above; a grade under another revision is graded again
FILTER_REVISION = "1"

_SETUP_DIRS = {"testdata", "fixtures", "examples"}
_SETUP_NAMES = re.compile(r"^(pyproject\.toml|package\.json|jest\.config\..*|pytest\.ini|tox\.ini)$")
_DIFF_GIT = "diff --git "
_EXTENDED = ("rename from ", "rename to ", "copy from ", "copy to ")
_C_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def _c_string(text: str) -> tuple[str, int] | None:
    """The C-quoted string git wrote at the start of ``text`` (``"a/x\\ty"``, octal
    bytes for non-ASCII) and the index just past its closing quote; None if unclosed."""
    raw, i = bytearray(), 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return raw.decode("utf-8", "replace"), i + 1
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "0123" and text[i + 1: i + 4].isdigit():
                raw.append(int(text[i + 1: i + 4], 8) & 0xFF)
                i += 4
            else:
                raw.extend(_C_ESCAPES.get(nxt, nxt).encode())
                i += 2
            continue
        raw.extend(c.encode())
        i += 1
    return None


def _unquote(text: str) -> str:
    """A path as git wrote it on a line of its own: C-quoted or plain."""
    parsed = _c_string(text) if text.startswith('"') else None
    return parsed[0] if parsed is not None and parsed[1] == len(text) else text


def _head_paths(rest: str) -> tuple[str, str] | None:
    """(old, new) of a ``diff --git`` line's ``a/<old> b/<new>``. Unquoted paths may hold
    spaces and `` b/``, so a file that is neither renamed nor copied (both paths the same)
    is split at its middle; quoted ones are read as C strings; a rename's or copy's paths
    are then taken from its ``rename from``/``rename to`` lines (see :func:`sections`)."""
    if rest.startswith('"'):
        parsed = _c_string(rest)
        if parsed is None or rest[parsed[1]: parsed[1] + 1] != " ":
            return None
        first, second = parsed[0], _unquote(rest[parsed[1] + 1:])
    else:
        n = len(rest) - len("a/ b/")
        half = rest[2: 2 + n // 2] if n >= 0 and n % 2 == 0 else None
        if half is not None and rest == f"a/{half} b/{half}":
            return half, half
        cut = rest.rfind(' "b/') if rest.endswith('"') else rest.find(" b/")
        if cut == -1:
            return None
        first, second = rest[:cut], _unquote(rest[cut + 1:])
    if not (first.startswith("a/") and second.startswith("b/")):
        return None
    return first[2:], second[2:]


class FileSection(NamedTuple):
    old: str
    new: str
    text: str
    rename: bool

    @property
    def path(self) -> str:
        return self.new


class FilteredPatch(NamedTuple):
    text: str
    sha256: str
    removed_test_files: list[str]
    kept_reference_solution_files: list[str]
    kept_test_setup_files: list[str]
    trusted_test_overlap: list[str]
    #: why no source-only grade can exist for this patch under this filter (final)
    unavailable: str | None

    @property
    def nothing_removed(self) -> bool:
        return not self.removed_test_files


def sections(patch: str) -> list[FileSection]:
    """A ``git diff`` split per file, each section's text kept byte for byte."""
    out: list[FileSection] = []
    current: list[str] = []
    head: tuple[str, str] | None = None
    rename = False

    def flush() -> None:
        if head is not None:
            out.append(FileSection(head[0], head[1], "".join(current), rename))

    for line in git_lines(patch, keepends=True):
        bare = line.rstrip("\n")
        paths = _head_paths(bare[len(_DIFF_GIT):]) if bare.startswith(_DIFF_GIT) else None
        if paths is not None:
            flush()
            head, current, rename = paths, [], False
        elif head is not None and current and len(current) < 8 and bare.startswith(_EXTENDED):
            # git's extended header: a rename's or copy's paths, whole on their own lines
            field, _, value = bare.partition(" ")
            which, _, path = value.partition(" ")
            if which in ("from", "to") and field in ("rename", "copy"):
                rename = True
                head = (_unquote(path), head[1]) if which == "from" else (head[0], _unquote(path))
        current.append(line)
    flush()
    return out


def without_sections(patch: str, leaves_out: Callable[[str], bool]) -> str:
    """``patch`` without its file sections whose path, on either side of a rename, is one
    ``leaves_out`` names; every other section byte for byte."""
    return "".join(s.text for s in sections(patch) if not (leaves_out(s.old) or leaves_out(s.new)))


def is_source_only_test(path: str) -> bool:
    """A test file for the filter: the test-line classifier's match, or any conftest.py,
    but not test data, fixtures or examples outside test directories."""
    parts = path.split("/")
    if parts[-1] == "conftest.py":
        return True
    if not is_test_path(path):
        return False
    dirs = set(parts[:-1])
    # testdata/ is a test folder to the line classifier; outside test dirs it is setup
    if dirs & {"testdata"} and not dirs & {"tests", "test", "__tests__", "spec", "specs", "testing"}:
        return is_test_path(parts[-1])
    return True


def _is_setup(path: str) -> bool:
    parts = path.split("/")
    return bool(set(parts[:-1]) & _SETUP_DIRS) or bool(_SETUP_NAMES.match(parts[-1]))


def filter_patch(patch: str, solution_patch: str | None, test_patch_paths: list[str]) -> FilteredPatch:
    """The source-only patch of ``patch`` (see the module docstring)."""
    if solution_patch is None:
        return FilteredPatch(patch, hashlib.sha256(patch.encode("latin-1")).hexdigest(), [], [], [], [],
                             "the task has no solution/solution.patch, so edits a correct solution needs cannot be kept")
    solution = {p for s in sections(solution_patch) for p in (s.old, s.new)}
    replaced = set(test_patch_paths)
    kept: list[str] = []
    removed: list[str] = []
    reference: list[str] = []
    for sec in sections(patch):
        old_test, new_test = is_source_only_test(sec.old), is_source_only_test(sec.new)
        if sec.rename and old_test != new_test:
            return FilteredPatch(patch, hashlib.sha256(patch.encode("latin-1")).hexdigest(), [], [], [], [],
                                 f"the patch renames {sec.old} to {sec.new}, between a test file and another "
                                 "file; that change cannot be left out alone")
        if not (old_test or new_test):
            kept.append(sec.text)
            continue
        if (sec.new in solution or sec.old in solution) and sec.new not in replaced and sec.old not in replaced:
            kept.append(sec.text)
            reference.append(sec.path)
            continue
        removed.append(sec.path)
    text = "".join(kept)
    kept_paths = [s.path for s in sections(text)]
    return FilteredPatch(
        text=text,
        sha256=hashlib.sha256(text.encode("latin-1")).hexdigest(),
        removed_test_files=sorted(removed),
        kept_reference_solution_files=sorted(reference),
        kept_test_setup_files=sorted(p for p in kept_paths if _is_setup(p) and p not in reference),
        trusted_test_overlap=sorted(p for p in kept_paths if p in replaced),
        unavailable=None,
    )
