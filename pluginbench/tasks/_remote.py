"""Remote task folders: resolve a link's ref to a commit once, fetch, cache, verify.

``resolve_pins`` turns each ``tasks.urls`` link into a :class:`TaskPin` (the commit its ref
named at freeze time, the git tree of the folder, the file/permission fingerprint) and a
verified local folder. Folders are cached under ``<cache>/tasks/<key>/`` (``task/`` plus
``origin.json``), keyed by repository, commit and path; an entry is reused only when its
origin matches the pin and both fingerprints recomputed from the files match (the git tree
id covers content and executable bits as git stores them, the SHA-256 fingerprint covers
content and exact modes). Anything else is fetched again from the pinned commit.

Every git call runs hermetically (no system or global config, no prompts) in its own
session, with a deadline. Nothing here reads the run directory: callers freeze the result.
"""

import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

from ..errors import BadTaskUrl, GitFailed, TaskError
from ._tree import fingerprint, scan_tree
from ._urls import COMMIT, TaskUrl, parse_task_url

GIT_TIMEOUT = 300.0


class TaskPin(msgspec.Struct, frozen=True, kw_only=True):
    """One remote task pinned at freeze time: where it came from and what it was."""

    task_id: str
    url: str  # as written in the config
    pinned_url: str  # the same link at the resolved commit
    repo: str
    ref: str
    commit: str
    path: str
    tree: str  # git tree id of <commit>:<path>
    fingerprint: str  # SHA-256 over (path, mode, content) of every file
    files: int


def _git_env(home: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": home,
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
    }


def git(*args: str, cwd: Path | None = None, home: str = "/nonexistent", extra: dict[str, str] | None = None,
        timeout: float = GIT_TIMEOUT) -> str:
    """Run git hermetically in its own session; stdout, or :class:`GitFailed` with stderr."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=_git_env(home) | (extra or {}), stdin=subprocess.DEVNULL,
            capture_output=True, timeout=timeout, check=False, start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {args[0]} took longer than {timeout:g} s") from None
    except OSError as exc:
        raise GitFailed(f"cannot run git: {exc}") from None
    if done.returncode != 0:
        raise GitFailed(done.stderr.decode(errors="replace").strip() or f"git {args[0]} exited {done.returncode}")
    return done.stdout.decode(errors="replace")


def resolve_commit(link: TaskUrl) -> str:
    """The commit ``link.ref`` names now: itself when it is a full SHA, else the branch or
    (peeled) tag of that exact name. Raises :class:`GitFailed` or :class:`BadTaskUrl`."""
    if COMMIT.match(link.ref):
        return link.ref
    wanted = (f"refs/heads/{link.ref}", f"refs/tags/{link.ref}", f"refs/tags/{link.ref}^{{}}")
    out = git("ls-remote", link.repo, *wanted)
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name in wanted:
            found[name] = sha
    branch, tag = found.get(wanted[0]), found.get(wanted[2]) or found.get(wanted[1])
    if branch and tag and branch != tag:
        raise BadTaskUrl(f"{link.ref!r} is both a branch and a tag of {link.repo}; link the commit instead")
    commit = branch or tag
    if commit is None:
        hint = " (a commit must be the full 40-hex SHA)" if all(c in "0123456789abcdef" for c in link.ref) else ""
        raise BadTaskUrl(f"{link.repo} has no branch or tag named {link.ref!r}{hint}")
    return commit


def git_tree_id(folder: Path) -> str:
    """The id git gives ``folder`` as a tree (files only; executable bit as git keeps it)."""

    def tree(d: Path) -> bytes | None:
        items: list[tuple[bytes, bytes]] = []
        for child in os.scandir(d):
            st = child.stat(follow_symlinks=False)
            name = child.name.encode()
            if stat.S_ISDIR(st.st_mode):
                sub = tree(Path(child.path))
                if sub is not None:
                    items.append((name + b"/", b"40000 " + name + b"\0" + sub))
            elif stat.S_ISREG(st.st_mode):
                data = Path(child.path).read_bytes()
                blob = hashlib.sha1(b"blob %d\0" % len(data) + data).digest()  # noqa: S324 - git's object id
                mode = b"100755" if st.st_mode & 0o100 else b"100644"
                items.append((name, mode + b" " + name + b"\0" + blob))
            else:
                raise TaskError(f"{child.path} is not a regular file or folder", file=child.path)
        if not items:
            return None  # git keeps no empty folders
        body = b"".join(entry for _, entry in sorted(items))
        return hashlib.sha1(b"tree %d\0" % len(body) + body).digest()  # noqa: S324

    top = tree(folder)
    return (top or hashlib.sha1(b"tree 0\0").digest()).hex()  # noqa: S324


def _entry_key(repo: str, commit: str, path: str) -> str:
    return hashlib.sha256(f"{repo}\0{commit}\0{path}".encode()).hexdigest()[:32]


def check_cached(entry: Path, pin_fields: dict[str, str]) -> TaskPin | None:
    """The cached pin when ``entry`` holds exactly what its origin says, else None."""
    try:
        origin = msgspec.json.decode((entry / "origin.json").read_bytes(), type=TaskPin)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if any(getattr(origin, k) != v for k, v in pin_fields.items()):
        return None
    folder = entry / "task"
    try:
        entries = scan_tree(folder, context="cached task")
        if fingerprint(entries) != origin.fingerprint or len(entries) != origin.files:
            return None
        if git_tree_id(folder) != origin.tree:
            return None
    except (OSError, TaskError):
        return None
    return origin


def _fetch(link: TaskUrl, commit: str, scratch: Path, fetched: set[tuple[str, str]]) -> str:
    """Fetch ``commit`` of ``link.repo`` into ``scratch`` once; the tree id of the folder."""
    if not (scratch / ".git").is_dir():
        git("init", "-q", "--template=", str(scratch))
    if (link.repo, commit) not in fetched:
        git("fetch", "-q", "--depth", "1", "--no-tags", link.repo, commit, cwd=scratch)
        fetched.add((link.repo, commit))
    try:
        kind = git("cat-file", "-t", f"{commit}:{link.path}", cwd=scratch).strip()
    except GitFailed:
        raise BadTaskUrl(f"{link.path} does not exist in {link.repo} at {commit}") from None
    if kind != "tree":
        raise BadTaskUrl(f"{link.path} in {link.repo} at {commit} is a file, not a task folder")
    listing = git("ls-tree", "-r", f"{commit}:{link.path}", cwd=scratch)
    for line in listing.splitlines():
        mode, _, rest = line.partition(" ")
        if mode in ("120000", "160000"):
            what = "a symlink" if mode == "120000" else "a submodule"
            raise BadTaskUrl(f"{link.path}/{rest.split(chr(9), 1)[-1]} is {what}; task folders hold regular files only")
    return git("rev-parse", f"{commit}:{link.path}", cwd=scratch).strip()


def _materialize(scratch: Path, tree: str, dest: Path) -> None:
    """Write the files of ``tree`` into ``dest`` with modes 0644/0755 (umask-independent)."""
    index = scratch / ".git" / f"index-{tree}"
    git("read-tree", tree, cwd=scratch, extra={"GIT_INDEX_FILE": str(index)})
    git("checkout-index", "-a", "-f", f"--prefix={dest}/", cwd=scratch, extra={"GIT_INDEX_FILE": str(index)})
    for root, dirs, files in os.walk(dest):
        os.chmod(root, 0o755)
        for name in files:
            p = os.path.join(root, name)
            os.chmod(p, 0o755 if os.stat(p).st_mode & 0o100 else 0o644)
        dirs.sort()


def fetch_into_cache(link: TaskUrl, commit: str, cache: Path, scratch: Path,
                     fetched: set[tuple[str, str]]) -> tuple[TaskPin, Path, bool]:
    """The verified cache entry for ``link`` at ``commit``: ``(pin, task folder, reused)``."""
    entry = cache / _entry_key(link.repo, commit, link.path)
    fields = {"repo": link.repo, "commit": commit, "path": link.path}
    cached = check_cached(entry, fields)
    if cached is not None:
        return msgspec.structs.replace(cached, url=link.url, ref=link.ref), entry / "task", True
    tree = _fetch(link, commit, scratch, fetched)
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=cache))
    os.chmod(staging, 0o755)
    try:
        _materialize(scratch, tree, staging / "task")
        entries = scan_tree(staging / "task", context=f"the fetched task {link.url}")
        got = git_tree_id(staging / "task")
        if got != tree:
            raise BadTaskUrl(f"the files written for {link.url} do not match git tree {tree} (got {got})")
        pin = TaskPin(
            task_id=link.task_id, url=link.url, pinned_url=link.pinned(commit), repo=link.repo, ref=link.ref,
            commit=commit, path=link.path, tree=tree, fingerprint=fingerprint(entries), files=len(entries),
        )
        (staging / "origin.json").write_bytes(msgspec.json.encode(pin))
        if entry.exists():  # a broken entry: set it aside, then replace it
            trash = Path(tempfile.mkdtemp(prefix=".broken-", dir=cache))
            os.replace(entry, trash / "entry")
            shutil.rmtree(trash, ignore_errors=True)
        os.replace(staging, entry)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return pin, entry / "task", False


def resolve_pins(
    urls: list[str],
    cache: Path,
    *,
    error: Callable[[int, str, str], Exception],
) -> list[tuple[TaskPin, Path]]:
    """Resolve, fetch and verify every link; ``error(index, message, fix)`` builds the
    exception for a bad one (so the caller names its file and field)."""
    links: list[TaskUrl] = []
    for i, url in enumerate(urls):
        try:
            links.append(parse_task_url(url))
        except BadTaskUrl as exc:
            raise error(i, str(exc), "write https://github.com/<owner>/<repo>/tree/<ref>/<path>") from None
    seen: dict[str, int] = {}
    for i, link in enumerate(links):
        if link.task_id in seen:
            raise error(i, f"task id {link.task_id!r} is also the last folder of tasks.urls[{seen[link.task_id]}]",
                        "link each task once; two tasks need different folder names")
        seen[link.task_id] = i
    out: list[tuple[TaskPin, Path]] = []
    with tempfile.TemporaryDirectory(prefix="pluginbench-fetch-") as tmp:
        scratch, fetched = Path(tmp) / "repo", set[tuple[str, str]]()
        for i, link in enumerate(links):
            try:
                commit = resolve_commit(link)
                pin, folder, _ = fetch_into_cache(link, commit, cache, scratch, fetched)
            except BadTaskUrl as exc:
                raise error(i, str(exc), "fix the link: a commit, tag or single-component branch, and a folder "
                                         "that exists at it") from None
            except GitFailed as exc:
                raise error(i, f"cannot fetch {link.repo}: {exc}",
                            "check the repository url and your network, then run again") from None
            out.append((pin, folder))
    return out


def write_pins(pins: list[TaskPin], path: Path) -> None:
    path.write_bytes(json.dumps([msgspec.to_builtins(p) for p in pins], indent=2).encode() + b"\n")


def read_pins(path: Path) -> list[TaskPin]:
    return msgspec.json.decode(path.read_bytes(), type=list[TaskPin])


class TaskChoice(msgspec.Struct, frozen=True, kw_only=True):
    """A task folder offered by ``tasks pick``: its link at the pinned commit and its prompt."""

    task_id: str
    link: TaskUrl
    instruction: str


def browse(link: TaskUrl, scratch: Path, fetched: set[tuple[str, str]]) -> tuple[str, list[TaskChoice]]:
    """The commit ``link`` names now and every task folder directly under its folder (those
    holding ``task.toml``), each with its ``instruction.md`` for previews."""
    commit = resolve_commit(link)
    _fetch(link, commit, scratch, fetched)
    listing = git("ls-tree", "-r", "--name-only", f"{commit}:{link.path}", cwd=scratch)
    ids = sorted({name.split("/", 1)[0] for name in listing.splitlines() if name.count("/") == 1
                  and name.endswith("/task.toml")})
    choices = []
    for task_id in ids:
        child = msgspec.structs.replace(link, ref=commit, path=f"{link.path}/{task_id}", url=link.pinned(commit) + f"/{task_id}")
        try:
            text = git("show", f"{commit}:{child.path}/instruction.md", cwd=scratch)
        except GitFailed:
            text = "(no instruction.md)"
        choices.append(TaskChoice(task_id=task_id, link=child, instruction=text))
    return commit, choices
