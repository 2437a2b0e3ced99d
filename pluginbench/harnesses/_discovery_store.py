"""The cross-run store of passing discovery answers, with its trust rules (file I/O only).

A harness keeps a passing discovery receipt for the rest of a run under a digest of its
setup (:mod:`._claude_cache`, :meth:`~._codex.CodexHarness._cache_key`). This store keeps it across runs: one JSON file per digest,
``<cache root>/discovery/<harness>/<key>.json`` (``<cache root>`` is
``$XDG_CACHE_HOME/pluginbench``), holding the raw answers the discovery gave (Claude Code's
control answers, Codex's prompt-input and app-server output), the receipt judged from them
and the run and attempt that produced them.

Trust rules (an entry that breaks one is ignored and the reason recorded; the attempt
then discovers as if the store were empty):

* written only by PluginBench on the host, by the harness object of a run: Claude Code's
  after the coding process of the attempt that discovered it answered the same (two CLI
  processes agreed), Codex's once its discovery passed (``codex exec`` answers no control
  requests; :mod:`._codex_reuse`); never from a sandbox (the cache root is hidden from
  every sandbox), and an attempt in an unisolated sandbox neither reads nor writes it;
* the folder is a real folder (not a symlink) owned by the current user and writable by
  nobody else; it is created ``0700``;
* an entry is a regular file opened without following a symlink, owned by the current
  user, mode exactly ``0600``, at most :data:`MAX_BYTES`, of :data:`SCHEMA`, naming the
  key it is stored under;
* a reader trusts only the answers: the receipt is judged again from them with this
  attempt's facts (:meth:`~._claude.ClaudeHarness._judge`,
  :meth:`~._codex.CodexHarness._judged`), and a Claude Code coding process's own answers
  must still equal it field by field before the task is sent; a mismatch drops the entry
  (:meth:`DiscoveryStore.drop`).

``PLUGINBENCH_DISCOVERY_STORE=off`` (or ``0``, ``false``, ``no``) turns the store off for
one process: every run's first attempt of a setup discovers again, as before.
"""

import contextlib
import json
import os
import stat
import uuid
from pathlib import Path
from typing import Any, NamedTuple

#: The process switch (the test suite turns the store off, as it does the vanilla cache).
ENV_SWITCH = "PLUGINBENCH_DISCOVERY_STORE"
SCHEMA = "pluginbench.discovery-store/1"
#: An entry larger than this is refused unread (a discovery's answers are a few KiB).
MAX_BYTES = 4 * 1024 * 1024
_OFF = ("0", "off", "false", "no")


class StoreRead(NamedTuple):
    """What a read found: ``hit`` (with the entry), ``miss`` or ``refused`` (with the reason)."""

    status: str
    entry: dict[str, Any] | None = None
    reason: str | None = None


def store_enabled(environ: dict[str, str] | None = None) -> bool:
    """True unless :data:`ENV_SWITCH` turns the store off."""
    env = os.environ if environ is None else environ
    return env.get(ENV_SWITCH, "").strip().lower() not in _OFF


def _folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be trusted (None: it can, or it does not exist yet)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"the store folder {folder} cannot be read: {exc.strerror}"
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return f"the store folder {folder} is not a plain folder (a symlink or a file)"
    if st.st_uid != os.geteuid():
        return f"the store folder {folder} is owned by uid {st.st_uid}, not the current user (uid {os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"the store folder {folder} is writable by others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


class DiscoveryStore:
    """One harness's store folder (see the module docstring for the rules)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_harness(cls, harness: str, environ: dict[str, str] | None = None) -> "DiscoveryStore | None":
        """The store of ``harness`` under the user's cache root, or None when switched off."""
        if not store_enabled(environ):
            return None
        from ..cache import resolve_cache_root

        return cls(resolve_cache_root(environ) / "discovery" / harness)

    def _path(self, key: str) -> Path:
        if not key or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a digest: {key!r}")
        return self.folder / f"{key}.json"

    def read(self, key: str) -> StoreRead:
        """The entry stored under ``key`` if every trust rule holds."""
        problem = _folder_problem(self.folder)
        if problem:
            return StoreRead("refused", reason=problem)
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return StoreRead("miss")
        except OSError as exc:
            return StoreRead("refused", reason=f"the entry {path.name} cannot be opened without following a "
                                               f"symlink: {exc.strerror}")
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return StoreRead("refused", reason=f"the entry {path.name} is not a regular file")
            if st.st_uid != os.geteuid():
                return StoreRead("refused", reason=f"the entry {path.name} is owned by uid {st.st_uid}, "
                                                   f"not the current user (uid {os.geteuid()})")
            if stat.S_IMODE(st.st_mode) != 0o600:
                return StoreRead("refused", reason=f"the entry {path.name} has mode "
                                                   f"{stat.S_IMODE(st.st_mode):04o}, not 0600")
            if st.st_size > MAX_BYTES:
                return StoreRead("refused", reason=f"the entry {path.name} is larger than {MAX_BYTES} bytes")
            raw = f.read(MAX_BYTES + 1)
        try:
            entry = json.loads(raw)
        except ValueError:
            return StoreRead("refused", reason=f"the entry {path.name} is not JSON")
        if not isinstance(entry, dict) or entry.get("schema") != SCHEMA:
            return StoreRead("refused", reason=f"the entry {path.name} is not a {SCHEMA} entry")
        if entry.get("key") != key:
            return StoreRead("refused", reason=f"the entry {path.name} names another key ({entry.get('key')!r})")
        return StoreRead("hit", entry=entry)

    def write(self, key: str, entry: dict[str, Any]) -> str | None:
        """Store ``entry`` under ``key`` (mode 0600, renamed into place in one step); the
        reason it was not stored, or None."""
        path = self._path(key)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            return f"the store folder {self.folder} cannot be made: {exc.strerror}"
        problem = _folder_problem(self.folder)
        if problem:
            return problem
        data = json.dumps({**entry, "schema": SCHEMA, "key": key}, sort_keys=True).encode()
        tmp = self.folder / f".{key}.{uuid.uuid4().hex}.tmp"  # two attempts of one run may race: both land whole
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as f:
                os.fchmod(f.fileno(), 0o600)  # whatever the umask
                f.write(data)
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return f"the entry {path.name} cannot be written: {exc.strerror}"
        return None

    def drop(self, key: str) -> None:
        """Remove the entry under ``key`` (a later run discovers again); only from a trusted folder."""
        if _folder_problem(self.folder) is None:
            with contextlib.suppress(OSError):
                os.unlink(self._path(key))


# -- what both harnesses' reuse (:mod:`._claude_reuse`, :mod:`._codex_reuse`) records ----------

#: The copy of a reused store entry in the attempt's ``agent/`` folder.
ORIGIN_FILE = "discovery.origin.json"


def store_note(read: str, reason: str | None = None) -> dict[str, Any]:
    """``cache.store`` of a receipt: how the store was read and whether this attempt wrote it."""
    return {"read": read, "reason": reason, "written": False}


def has_origin(entry: dict[str, Any]) -> bool:
    """Whether ``entry`` names the run and attempt that produced it."""
    origin = entry.get("origin")
    return isinstance(origin, dict) and isinstance(origin.get("run"), str) and isinstance(origin.get("attempt"), str)


def copy_origin(entry: dict[str, Any], agent_dir: Path) -> None:
    """The reused entry, verbatim, into the attempt (``agent/discovery.origin.json``): the
    run's evidence does not depend on the cache root or on the origin run still existing."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / ORIGIN_FILE).write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n")


def write_noted(store: DiscoveryStore, key: str, entry: dict[str, Any], receipt: dict[str, Any]) -> None:
    """Store ``entry`` under ``key`` and say so in ``receipt["cache"]["store"]`` (``written``,
    and ``write_problem`` when it could not be)."""
    problem = store.write(key, entry)
    receipt["cache"]["store"]["written"] = problem is None
    if problem:
        receipt["cache"]["store"]["write_problem"] = problem
