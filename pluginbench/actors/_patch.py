"""The canonical patch: the stopped working tree compared with the frozen starting source.

The agent's own ``.git`` is never trusted: the patch is made on the host in a fresh
repository whose single commit is the frozen starting source (committed exactly as the
sandboxes commit it), with the exported working tree laid over it. Generated caches
(``.pytest_cache``, ``__pycache__``) are excluded and the exclusions are documented.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

from ..environments import BASE_DATE, BASE_IDENTITY, BASE_MESSAGE, GIT_EXCLUDE
from ..tasks import copy_tree, scan_tree

# The sandboxes' recipe (environments._gitbase), so host-side patches and sandbox base
# commits agree byte for byte.
_BASE_ENV = {
    "GIT_AUTHOR_NAME": BASE_IDENTITY[0],
    "GIT_AUTHOR_EMAIL": BASE_IDENTITY[1],
    "GIT_COMMITTER_NAME": BASE_IDENTITY[0],
    "GIT_COMMITTER_EMAIL": BASE_IDENTITY[1],
    "GIT_AUTHOR_DATE": BASE_DATE,
    "GIT_COMMITTER_DATE": BASE_DATE,
}


class PatchInfo(NamedTuple):
    path: Path
    sha256: str
    empty: bool
    files_changed: int


def _git(repo: Path, *args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LANG": "C.UTF-8",
        **_BASE_ENV,
    }
    return subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "core.fileMode=true", *args],
        cwd=repo,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        check=True,
        # Own session: a stop signals the worker's process group, and work already paid
        # for (this attempt's patch) must still finish.
        start_new_session=True,
    )


def init_base_repo(repo: Path) -> str:
    """Commit everything in ``repo`` as the deterministic BASE commit; return its SHA."""
    _git(repo, "-c", "init.defaultBranch=main", "init", "-q", "--template=")
    info = repo / ".git" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "exclude").write_text(GIT_EXCLUDE)
    _git(repo, "add", "-A")
    _git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "--no-verify", "-m", BASE_MESSAGE)
    return _git(repo, "rev-parse", "HEAD").stdout.decode().strip()


def _clear_worktree(repo: Path) -> None:
    for child in repo.iterdir():
        if child.name == ".git":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _overlay(export: Path, repo: Path) -> None:
    for child in export.iterdir():
        if child.name == ".git":
            continue
        target = repo / child.name
        if child.is_dir() and not child.is_symlink():
            shutil.copytree(child, target, symlinks=True)
        else:
            shutil.copy2(child, target, follow_symlinks=False)


def make_patch(starting_source: Path, export: Path, out: Path) -> PatchInfo:
    """Write ``git diff --binary BASE`` of ``export`` over ``starting_source`` to ``out``."""
    with tempfile.TemporaryDirectory(prefix="pluginbench-patch-") as tmp:
        repo = Path(tmp) / "repo"
        copy_tree(starting_source, repo, scan_tree(starting_source, context="the starting source"))
        init_base_repo(repo)
        _clear_worktree(repo)
        _overlay(export, repo)
        _git(repo, "add", "-A")
        diff = _git(repo, "diff", "--cached", "--binary", "--full-index", "--no-color", "--no-ext-diff", "HEAD").stdout
        names = _git(repo, "diff", "--cached", "--name-only", "-z", "HEAD").stdout
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(diff)
    files = [n for n in names.split(b"\0") if n]
    return PatchInfo(out, hashlib.sha256(diff).hexdigest(), not diff, len(files))


def base_commit_of(starting_source: Path) -> str:
    """The BASE SHA a sandbox gets for this starting source (same recipe, same bytes)."""
    with tempfile.TemporaryDirectory(prefix="pluginbench-base-") as tmp:
        repo = Path(tmp) / "repo"
        copy_tree(starting_source, repo, scan_tree(starting_source, context="the starting source"))
        return init_base_repo(repo)
