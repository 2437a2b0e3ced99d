"""History mining, the git side: a private hermetic clone and the candidates in it.

Nothing from the mined repository runs on the host. The repository (a folder or a git
bundle) is cloned into a private bare repository with no system or global git config, so
none of its hooks, filters or ``core.fsmonitor`` settings apply; trees are written out with
``read-tree``/``checkout-index`` (symlinks as plain files) and diffs with ``diff --binary``.

A **candidate** is one first-parent step of history: an ordinary commit against its parent,
or a merge commit (a merged pull request) against its first parent. Its changed paths are
classified by :func:`classify_path` (pure) into tests, source and other files.
"""

import re
import tempfile
from pathlib import Path, PurePosixPath
from typing import Literal

import msgspec

from ..errors import GitFailed
from ._remote import git

PathKind = Literal["test", "source", "other"]

#: file endings counted as source code (anything else that is not a test is "other": docs, data, config)
SOURCE_SUFFIXES = frozenset({
    ".py", ".pyx", ".pyi", ".c", ".h", ".cc", ".cpp", ".hpp", ".rs", ".go", ".java", ".kt", ".scala", ".js",
    ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".rb", ".php", ".cs", ".swift", ".m", ".sh", ".lua", ".ex", ".exs",
    ".erl", ".hs", ".ml", ".clj", ".r", ".jl", ".dart", ".zig", ".sql",
})
_TEST_DIR = re.compile(r"(^|/)(tests?|testing|__tests__|spec)/")
_TEST_NAME = re.compile(r"(^test_.*|.*_test|.*\.test|.*\.spec|^conftest)\.[A-Za-z0-9]+$")


def classify_path(path: str) -> PathKind:
    """``test`` for a file under a tests folder or named like a test (``test_*.py``,
    ``*_test.go``, ``*.spec.ts``, ``conftest.py``), ``source`` for other code, ``other`` for
    the rest (documentation, data, configuration)."""
    name = PurePosixPath(path).name
    if _TEST_DIR.search(path) or _TEST_NAME.match(name):
        return "test"
    if PurePosixPath(path).suffix.lower() in SOURCE_SUFFIXES:
        return "source"
    return "other"


class Change(msgspec.Struct, frozen=True):
    """One changed path of a candidate: git's status letter (A, M, D, ...) and its kind."""

    status: str
    path: str
    kind: PathKind


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """One first-parent step of history that may become a task."""

    commit: str
    parent: str | None
    merge: bool
    subject: str
    message: str
    author_date: str
    changes: tuple[Change, ...]
    #: a merge's merged commits' subjects, oldest first (the pull request's commits)
    merged: tuple[str, ...] = ()

    @property
    def tests(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.kind == "test")

    @property
    def sources(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.kind == "source")


class MinedRepo:
    """A private bare clone of the repository to mine, read only through hermetic git."""

    def __init__(self, origin: str, scratch: Path) -> None:
        self.origin = origin
        #: how tasks name the repository: its folder or bundle name (no host path), or the URL
        self.origin_label = origin if "://" in origin else (Path(origin).name.removesuffix(".git") or origin)
        self.path = scratch / "repo.git"
        self.home = str(scratch)
        git("clone", "--quiet", "--bare", "--no-local", "--no-hardlinks", origin, str(self.path), home=self.home)

    def _git(self, *args: str, extra: dict[str, str] | None = None) -> str:
        return git("-c", "core.symlinks=false", "-c", "core.autocrlf=false", *args, cwd=self.path, home=self.home,
                   extra=extra)

    def resolve(self, rev: str) -> str:
        """The commit ``rev`` names; :class:`GitFailed` when it names none."""
        try:
            return self._git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}").strip()
        except GitFailed:
            raise GitFailed(f"{rev!r} names no commit") from None

    def head(self) -> str:
        return self.resolve("HEAD")

    def files(self, commit: str) -> list[str]:
        """Every file path of ``commit``'s tree (POSIX, relative to the root)."""
        return [p for p in self._git("ls-tree", "-r", "--name-only", "-z", commit).split("\x00") if p]

    def read(self, commit: str, path: str) -> str | None:
        """The text of ``path`` at ``commit`` (None when it has no such file)."""
        try:
            return self._git("show", f"{commit}:{path}")
        except GitFailed:
            return None

    def first_parent_steps(self, since: str | None, limit: int | None) -> list[str]:
        """Commits on HEAD's first-parent line after ``since`` (newest first), at most ``limit``."""
        args = ["rev-list", "--first-parent"]
        if limit is not None:
            args.append(f"--max-count={limit}")
        args.append("HEAD")
        if since is not None:
            args.append(f"^{since}")
        return self._git(*args).split()

    def candidate(self, commit: str) -> Candidate:
        """The candidate ``commit``: its first parent, message and classified changes."""
        meta = self._git("show", "-s", "--format=%P%x00%s%x00%aI%x00%B", commit).split("\x00", 3)
        parents = meta[0].split()
        parent = parents[0] if parents else None
        changes: list[Change] = []
        if parent is not None:
            raw = self._git("diff", "--no-renames", "--name-status", "-z", parent, commit).split("\x00")
            for status, path in zip(raw[0::2], raw[1::2], strict=False):
                if path:
                    changes.append(Change(status[:1], path, classify_path(path)))
        merged: tuple[str, ...] = ()
        if len(parents) > 1:
            merged = tuple(self._git("log", "--reverse", "--format=%s", "--no-merges", f"{parent}..{commit}").splitlines())
        return Candidate(commit=commit, parent=parent, merge=len(parents) > 1, subject=meta[1],
                         author_date=meta[2], message=meta[3].strip(), changes=tuple(changes), merged=merged)

    def write_tree(self, commit: str, dest: Path) -> None:
        """The files of ``commit`` into ``dest`` (created), no ``.git``; symlinks as plain files."""
        dest.mkdir(parents=True)
        with tempfile.TemporaryDirectory(prefix="pluginbench-mine-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git("read-tree", commit, extra=env)
            self._git("--work-tree", str(dest), "checkout-index", "--all", "--force", extra=env)

    def diff(self, parent: str, commit: str, paths: list[str]) -> str:
        """The binary diff of ``paths`` from ``parent`` to ``commit`` (what ``git apply`` takes)."""
        if not paths:
            return ""
        return self._git("diff", "--binary", "--no-renames", "--full-index", parent, commit, "--", *paths)


__all__ = ["Candidate", "Change", "GitFailed", "MinedRepo", "PathKind", "classify_path"]
