"""The starting source's base repository, built once per worker process and copied.

Every attempt of a task needs the same repository three times: its coding sandbox's
``app/.git``, the canonical patch's base on the host (:mod:`pluginbench.actors._patch`)
and its grading sandbox's ``app/.git``. Each built it with ``git init``, ``git add -A``
and ``git commit`` of its own (eleven git processes an attempt). A :class:`BaseTemplate`
is that repository built once (the :mod:`._gitbase` recipe: same exclude, identity, dates
and message, so the same commit), kept under the source's fingerprint (paths, modes and
contents) in the temp folder of the moment (a worker's is its run's own temp root, removed
with the run), and *copied*, never shared: each user gets its own ``.git``
(objects, refs, reflog, index), so nothing one attempt does reaches another or the template.

A copied index holds the template's file stat data, which never matches another file: the
template's own files stay on disk while it is kept, so their inode numbers are not reused.
Users that keep the index (:func:`copy_git`) refresh it against their own files or mark it
racy (every entry then compared by content, git's own rule for an index as new as its files).
The last :data:`KEEP` templates are kept; the folders go at exit.
"""

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import anyio

from ..errors import EnvironmentFailure
from ._gitbase import (
    BASE_DATE,
    BASE_IDENTITY,
    BASE_MESSAGE,
    GIT_EXCLUDE,
    NO_MAINTENANCE,
    _set_identity,
    init_base_repo,
)
from ._gitbase import (
    _git as _sandbox_git,
)

if TYPE_CHECKING:
    from ..tasks import TreeEntry

#: how many sources' templates a process keeps (the oldest is removed first)
KEEP = 8


class BaseTemplate(NamedTuple):
    """A repository whose one commit is a starting source, with that commit's tree."""

    repo: Path
    commit: str
    tree: str


_lock = threading.Lock()
_kept: OrderedDict[str, BaseTemplate] = OrderedDict()


def _git(repo: Path, *args: str) -> str:
    name, email = BASE_IDENTITY
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "HOME": str(repo),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
           "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": BASE_DATE,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": BASE_DATE}
    done = subprocess.run(["git", *NO_MAINTENANCE, *args], cwd=repo, env=env, capture_output=True, check=True,
                          start_new_session=True)  # a stop signals the worker's group; this work must finish
    return done.stdout.decode().strip()


def _build(source: Path, entries: "Sequence[TreeEntry]", folder: Path) -> BaseTemplate:
    from ..tasks import copy_tree  # not at import: `status` asks this package

    repo = folder / "repo"
    copy_tree(source, repo, list(entries))
    _git(repo, "-c", "init.defaultBranch=main", "init", "-q", "--template=")
    (repo / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text(GIT_EXCLUDE)
    _git(repo, "add", "-A")
    _git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "--no-verify", "-m", BASE_MESSAGE)
    commit = (repo / ".git" / "refs" / "heads" / "main").read_text().strip()
    # The commit's tree from its loose object (``commit <size>\0tree <sha>\n...``): no process.
    body = zlib.decompress((repo / ".git" / "objects" / commit[:2] / commit[2:]).read_bytes())
    tree = body.split(b"\0", 1)[1].split(b"\n", 1)[0].removeprefix(b"tree ").decode()
    return BaseTemplate(repo, commit, tree)


def template_for(source: Path, entries: "Sequence[TreeEntry]") -> BaseTemplate:
    """The template of ``source`` as scanned in ``entries`` (built now unless kept).
    Raises ``subprocess.CalledProcessError`` or ``OSError`` when git fails."""
    from ..tasks import fingerprint

    # Under the temp folder of the moment: a worker points it at the run's own temp root,
    # removed with the run, so a template is kept per run and a removed one is built again.
    parent = tempfile.gettempdir()
    key = f"{parent}\0{fingerprint(list(entries))}"
    with _lock:
        kept = _kept.get(key)
        if kept is not None and (kept.repo / ".git" / "HEAD").is_file():
            _kept.move_to_end(key)
            return kept
        _kept.pop(key, None)
    folder = Path(tempfile.mkdtemp(prefix="pluginbench-gitbase-", dir=parent))
    try:
        built = _build(source, entries, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    gone: list[Path] = []
    with _lock:
        if key in _kept:  # another thread built it meanwhile
            gone.append(folder)
            built = _kept[key]
        else:
            _kept[key] = built
            while len(_kept) > KEEP:
                gone.append(_kept.popitem(last=False)[1].repo.parent)
    for old in gone:
        shutil.rmtree(old, ignore_errors=True)
    return built


def copy_git(template: BaseTemplate, dest_git: Path) -> None:
    """Copy the template's ``.git`` to ``dest_git`` (a real copy: nothing is linked)."""
    shutil.copytree(template.repo / ".git", dest_git, symlinks=True, copy_function=shutil.copy)


def mark_index_racy(git_dir: Path) -> None:
    """Make every entry of ``git_dir``'s index racily clean: git then compares each one by
    content even when its stat data happens to match a file."""
    os.utime(git_dir / "index", (1, 1))


async def base_repo(app: Path, home: Path, identity: tuple[str, str], source: Path | None,
                    entries: "Sequence[TreeEntry] | None") -> str:
    """Make ``app`` (a copy of ``source`` as scanned in ``entries``) the base repository with
    the agent's ``identity``; return the base commit. From the kept template: its ``.git``
    copied, the index refreshed against ``app``'s own files (``git update-index --refresh``:
    one process where :func:`._gitbase.init_base_repo` takes three, the same repository);
    without a source, or when that fails, by the recipe itself."""
    if source is None or entries is None:
        return await init_base_repo(app, home, identity)
    try:
        template = await anyio.to_thread.run_sync(template_for, source, entries)
    except (OSError, subprocess.CalledProcessError):
        return await init_base_repo(app, home, identity)
    try:
        await anyio.to_thread.run_sync(copy_git, template, app / ".git")
        await _sandbox_git(app, home, "update-index", "--refresh")  # fails when a file differs from the template
    except (OSError, EnvironmentFailure):
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(app / ".git", ignore_errors=True))
        return await init_base_repo(app, home, identity)
    _set_identity(app / ".git" / "config", identity)
    return template.commit


@atexit.register
def _remove_all() -> None:
    with _lock:
        folders = [t.repo.parent for t in _kept.values()]
        _kept.clear()
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
