"""The canonical patch: the stopped working tree compared with the frozen starting source.

The agent's own ``.git`` is never trusted: the patch is made on the host in a fresh
repository whose single commit is the frozen starting source (committed exactly as the
sandboxes commit it), with the exported working tree laid over it. That repository is a
copy of the source's base kept for the worker process
(:mod:`pluginbench.environments._gitbase_template`): a patch then costs two git processes
(``add -A`` and ``diff``), the same bytes as the five of a base built afresh. Generated caches
(``.pytest_cache``, ``__pycache__``) are excluded and the exclusions are documented.

What the agent left is data: a nested ``.git`` (a folder, or a file whose ``gitdir:``
points at another repository) is dropped, so no other repository's HEAD becomes a gitlink
in the patch and host-side git reads no repository but the fresh one; a gitlink that still
reaches the index is removed from it; devices, FIFOs and sockets are dropped; symlinks are
copied as symlinks, never followed; git records only 644/755 modes (no setuid). Each drop is
named with its reason in ``PatchInfo.dropped`` and in ``<patch>.dropped.txt`` beside the
patch. Git runs with no system or global configuration and no hooks, and nothing here runs
``git submodule`` (a ``.gitmodules`` ``update = !cmd`` is a text file, never executed). The
diff leaves the tree's ``diff`` attributes aside (``* !diff`` in the repository's own
``info/attributes``): git tells text from binary by content, so a ``.gitattributes`` of the
agent's cannot turn a text change into a binary one.

Host memory is bounded: the patch is streamed to its file and refused over
:data:`PATCH_BYTES`, and a file over that bound that the starting source does not hold
unchanged is refused before git runs (git would hold it whole in memory to diff it).
"""

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

from ..environments import (
    BASE_DATE,
    BASE_IDENTITY,
    BASE_MESSAGE,
    GIT_EXCLUDE,
    NO_MAINTENANCE,
    copy_git,
    mark_index_racy,
    template_for,
)
from ..errors import ResourceLimitHit
from ..rundir import sha256_file
from ..tasks import TreeEntry, copy_tree, scan_tree

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
    #: "<path>: <reason>" for each thing of the export left out of the patch
    dropped: tuple[str, ...] = ()


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
        ["git", *NO_MAINTENANCE, "-c", "core.autocrlf=false", "-c", "core.fileMode=true", *args],
        cwd=repo,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        check=True,
        # Own session: a stop signals the worker's process group, and work already paid
        # for (this attempt's patch) must still finish.
        start_new_session=True,
    )


def _index_base(repo: Path) -> None:
    """A fresh repository in ``repo`` with everything in it added to the index."""
    _git(repo, "-c", "init.defaultBranch=main", "init", "-q", "--template=")
    info = repo / ".git" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "exclude").write_text(GIT_EXCLUDE)
    _git(repo, "add", "-A")


def init_base_repo(repo: Path) -> str:
    """Commit everything in ``repo`` as the deterministic BASE commit; return its SHA."""
    _index_base(repo)
    _git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "--no-verify", "-m", BASE_MESSAGE)
    return _git(repo, "rev-parse", "HEAD").stdout.decode().strip()


def _changed_files(diff: bytes) -> int:
    """Files a ``git diff`` changes: its distinct ``diff --git`` headers (a type change, file
    to symlink, is a deletion and an addition under one header line; no content line of a
    diff starts with ``diff --git ``: hunk lines start with a sign, binary lines have no space)."""
    return len({line for line in diff.split(b"\n") if line.startswith(b"diff --git ")})


def _clear_worktree(repo: Path) -> None:
    for child in repo.iterdir():
        if child.name == ".git":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


#: the largest canonical patch: the host reads it whole (patch, measures, grading copy); a
#: bigger one is a :class:`~pluginbench.errors.ResourceLimitHit` (the attempt is not graded)
PATCH_BYTES = 256 * 1024 * 1024


def _overlay(export: Path, repo: Path, dropped: list[str], start: dict[str, TreeEntry], rel: str = "") -> None:
    """Lay ``export`` over ``repo``: folders, regular files and symlinks (as symlinks); every
    ``.git`` and every special file is left out and named in ``dropped``. A regular file
    over :data:`PATCH_BYTES` (apparent size) that is not the starting source's own
    (``start``: its scan by path), unchanged, is refused (:class:`ResourceLimitHit`):
    host-side git holds a changed file whole in memory to diff it (a sparse 1 GiB file:
    1 GiB of git's memory), and its change could fit the patch bound only by compressing."""
    for child in sorted(export.iterdir(), key=lambda p: p.name):
        name = f"{rel}{child.name}"
        target = repo / child.name
        st = child.lstat()
        if child.name == ".git":
            if rel:  # the top-level .git is the agent's own history: never trusted, not a finding
                dropped.append(f"{name}: a nested .git (a repository or gitdir pointer) is not part of the submission")
        elif stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(child), target)
        elif stat.S_ISDIR(st.st_mode):
            target.mkdir(exist_ok=True)
            _overlay(child, target, dropped, start, f"{name}/")
        elif stat.S_ISREG(st.st_mode):
            if st.st_size > PATCH_BYTES and not (
                    (kept := start.get(name)) is not None and kept.size == st.st_size
                    and sha256_file(child) == kept.sha256):
                raise ResourceLimitHit(
                    f"disk: {name} is {st.st_size // 2 ** 20} MiB and not the starting source's, over the "
                    f"{PATCH_BYTES // 2 ** 20} MiB patch bound (the host would diff it whole in memory)")
            shutil.copyfile(child, target, follow_symlinks=False)
            os.chmod(target, 0o755 if st.st_mode & 0o111 else 0o644)
        else:
            dropped.append(f"{name}: a device, FIFO or socket carries no content")


#: why a path git refused to index is left out of the patch
REFUSED_PATH = ("a path git refuses to index (a .git look-alike such as .Git or git~1, or a symlinked "
                ".gitmodules) is not part of the submission")


def _add_all(repo: Path, dropped: list[str]) -> None:
    """``git add -A``; a path git refuses (``.Git/``, ``.git./``, ``git~1``, a symlinked
    ``.gitmodules``: git's own path rules) is left out and named in ``dropped`` instead of
    failing the whole patch, so an agent cannot void its submission (an unknown grade in
    place of a fail) by leaving one."""
    try:
        _git(repo, "add", "-A")
        return
    except subprocess.CalledProcessError:
        pass
    # Every path git could index is indexed; the rest is listed below.
    with contextlib.suppress(subprocess.CalledProcessError):
        _git(repo, "add", "-A", "--ignore-errors")
    left = _git(repo, "ls-files", "-z", "--others", "--exclude-standard").stdout
    if not left:
        raise subprocess.CalledProcessError(128, ["git", "add", "-A"], b"", b"git add failed and left nothing out")
    for path in sorted(p for p in left.split(b"\0") if p):
        dropped.append(f"{path.decode('utf-8', 'surrogateescape')}: {REFUSED_PATH}")


def _drop_gitlinks(repo: Path, dropped: list[str]) -> None:
    """Remove every gitlink (mode 160000, a submodule commit) from the index."""
    listed = _git(repo, "ls-files", "-s", "-z").stdout
    for entry in listed.split(b"\0"):
        if entry.startswith(b"160000 "):
            path = entry.split(b"\t", 1)[1].decode("utf-8", "surrogateescape")
            _git(repo, "rm", "-q", "--cached", "--", path)
            dropped.append(f"{path}: a gitlink (another repository's commit) is not part of the submission")


def _base_from_template(starting_source: Path, entries: list[TreeEntry], repo: Path) -> str | None:
    """``repo/.git`` copied from the starting source's kept base repository (the same
    index and tree the recipe below makes, built once per process), its index marked racy
    (so every entry is compared by content); the base tree. ``None`` when git could not
    build it (the recipe below then runs and reports)."""
    try:
        template = template_for(starting_source, entries)
        repo.mkdir(parents=True)
        copy_git(template, repo / ".git")
        mark_index_racy(repo / ".git")
    except (OSError, subprocess.CalledProcessError):
        return None
    return template.tree


def make_patch(starting_source: Path, export: Path, out: Path) -> PatchInfo:
    """Write ``git diff --binary BASE`` of ``export`` over ``starting_source`` to ``out``;
    one over :data:`PATCH_BYTES` is removed again and refused (:class:`ResourceLimitHit`),
    and so, before git runs, is an export holding a file over that bound that the starting
    source does not hold unchanged."""
    with tempfile.TemporaryDirectory(prefix="pluginbench-patch-") as tmp:
        repo = Path(tmp) / "repo"
        entries = scan_tree(starting_source, context="the starting source")
        base = _base_from_template(starting_source, entries, repo)
        if base is None:
            shutil.rmtree(repo, ignore_errors=True)
            copy_tree(starting_source, repo, entries)
            # The base as a tree object (no commit, no HEAD: the diff is the same bytes, and a
            # commit would cost a process and start git's automatic maintenance).
            _index_base(repo)
            base = _git(repo, "write-tree").stdout.decode().strip()
            _clear_worktree(repo)
        dropped: list[str] = []
        _overlay(export, repo, dropped, {e.relpath: e for e in entries})
        _add_all(repo, dropped)
        # The overlay drops every nested .git, so a gitlink can only come from a starting
        # source that holds a repository of its own.
        if any(".git" in e.relpath.split("/") for e in entries):
            _drop_gitlinks(repo, dropped)
        # The diff ignores what the tree's .gitattributes says of diffing (`*.py -diff`, `binary`,
        # `diff=driver`): this repository's own info/attributes, read first, leaves `diff`
        # unspecified, so git looks at the content: a text change is never passed off as
        # binary (which would hide its lines from the lines measure).
        (repo / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("* !diff\n")
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as fh:  # streamed: the diff never sits whole in memory before it is bounded
            _git(repo, "diff", "--cached", "--binary", "--full-index", "--no-color", "--no-ext-diff", base,
                 stdout=fh.fileno())
    size = out.stat().st_size
    if size > PATCH_BYTES:
        out.unlink()
        raise ResourceLimitHit(f"disk: the canonical patch is {size // 2 ** 20} MiB, over the "
                               f"{PATCH_BYTES // 2 ** 20} MiB patch bound (the host reads and measures it whole)")
    diff = out.read_bytes()
    report = out.with_name(out.name + ".dropped.txt")
    if dropped:
        # A name that is not UTF-8 (kept as surrogates) is written escaped, never a crash that
        # would cost the attempt its submission.
        report.write_text("".join(f"{line}\n" for line in dropped), encoding="utf-8", errors="backslashreplace")
    else:
        report.unlink(missing_ok=True)
    return PatchInfo(out, hashlib.sha256(diff).hexdigest(), not diff, _changed_files(diff), tuple(dropped))


def base_commit_of(starting_source: Path) -> str:
    """The BASE SHA a sandbox gets for this starting source (same recipe, same bytes)."""
    with tempfile.TemporaryDirectory(prefix="pluginbench-base-") as tmp:
        repo = Path(tmp) / "repo"
        copy_tree(starting_source, repo, scan_tree(starting_source, context="the starting source"))
        return init_base_repo(repo)
