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

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from ._lines import is_test_path

#: the revision of the rule above; a grade under another revision is graded again
FILTER_REVISION = "1"

_SETUP_DIRS = {"testdata", "fixtures", "examples"}
_SETUP_NAMES = re.compile(r"^(pyproject\.toml|package\.json|jest\.config\..*|pytest\.ini|tox\.ini)$")
_DIFF_GIT = re.compile(r'^diff --git "?a/(.*?)"? "?b/(.*?)"?$')


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

    for line in patch.splitlines(keepends=True):
        m = _DIFF_GIT.match(line.rstrip("\n"))
        if m:
            flush()
            head, current, rename = (m.group(1), m.group(2)), [], False
        elif head is not None and (line.startswith("rename from ") or line.startswith("copy from ")):
            rename = True
        current.append(line)
    flush()
    return out


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
