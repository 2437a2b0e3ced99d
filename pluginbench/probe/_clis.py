"""Finding the pinned coding-agent CLIs (installed by ``tools/install-clis.sh``).

Which CLIs there are, and at which version, is each harness's own declaration
(:attr:`~pluginbench.harnesses.HarnessBase.cli`), read from the harness registry."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..harness_registry import CliPin, cli_pins, harness_class, is_registered

_REPO_ROOT = Path(__file__).resolve().parents[2]  # parent of the `pluginbench` package dir


def clis_dir() -> Path:
    """The project-local install folder's ``bin`` (may not exist)."""
    return _REPO_ROOT / ".tools" / "clis" / "node_modules" / ".bin"


class _PinnedVersions(Mapping[str, str]):
    """Harness name -> the CLI version it pins, read from the registry on each access (the
    adapters are imported on first use, not when this module is)."""

    def __getitem__(self, name: str) -> str:
        return cli_pins()[name].version

    def __iter__(self) -> Iterator[str]:
        return iter(cli_pins())

    def __len__(self) -> int:
        return len(cli_pins())


#: The versions ``tools/install-clis.sh`` pins, by harness (each harness's ``cli.version``).
PINNED: Mapping[str, str] = _PinnedVersions()


def find_cli(name: str) -> Path | None:
    """The CLI of the harness ``name``: the project-local install first, then ``PATH``;
    else None. A harness without a pinned CLI is a ValueError."""
    pin: CliPin | None = harness_class(name).cli if is_registered(name) else None  # this one adapter, not all
    if pin is None:
        raise ValueError(f"unknown CLI {name!r} (use one of: {', '.join(cli_pins())})")
    command: str = pin.command
    local = clis_dir() / command
    if local.is_file() and local.stat().st_mode & 0o111:
        return local
    found = shutil.which(command)
    return Path(found) if found else None


#: (real path, inode, size, mtime) -> the version that file reported: a run asks once per
#: process (creation, preparation and the reviewer's setup ask about the same CLI), and a
#: CLI replaced on disk is a new key, so asked again.
_VERSIONS: dict[tuple[str, int, int, int], str | None] = {}
#: The variable through which ``pluginbench run`` hands the versions it asked to the worker
#: it starts (:func:`versions_env`), so a run asks its CLI once, not once per process.
VERSIONS_ENV = "PLUGINBENCH_CLI_VERSIONS"
_inherited = False


def versions_env() -> dict[str, str]:
    """The environment entry that hands the versions this process asked (and those it was
    handed) to a process it starts: same keys, so a CLI replaced on disk since is asked again."""
    _inherit()
    known = [[*key, version] for key, version in sorted(_VERSIONS.items()) if version is not None]
    return {VERSIONS_ENV: json.dumps(known, separators=(",", ":"))}


def adopt_versions(handed: str) -> None:
    """Take the versions a parent hands over after this process started (``run``'s early
    worker gets them on its stdin), as if they had been in :data:`VERSIONS_ENV` from the
    start; versions this process asked already stay."""
    global _inherited
    os.environ[VERSIONS_ENV] = handed
    _inherited = False
    _inherit()


def _inherit() -> None:
    """Adopt the versions the parent process handed over (malformed entries are ignored)."""
    global _inherited
    if _inherited:
        return
    _inherited = True
    try:
        entries = json.loads(os.environ.get(VERSIONS_ENV) or "[]")
    except ValueError:
        return
    for entry in entries if isinstance(entries, list) else []:
        if (isinstance(entry, list) and len(entry) == 5 and isinstance(entry[0], str)
                and all(isinstance(n, int) and not isinstance(n, bool) for n in entry[1:4])
                and isinstance(entry[4], str)):
            _VERSIONS.setdefault((entry[0], entry[1], entry[2], entry[3]), entry[4])


def cli_version(path: str | Path, timeout: float = 30.0, *, argv: list[str] | None = None) -> str | None:
    """The version a CLI reports with ``--version`` (``2.1.328``, ``0.169.0``), or None
    when it cannot be run or prints no version. Remembered per file for this process and
    the worker it starts (:func:`versions_env`); a question already being asked (by
    :func:`prefetch_version`) is waited for, not asked twice."""
    _inherit()
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    key = (real, st.st_ino, st.st_size, st.st_mtime_ns)
    with _LOCK:
        if key in _VERSIONS:
            return _VERSIONS[key]
        asking = _ASKING.get(key)
        mine = asking is None
        if asking is None:
            asking = _ASKING[key] = threading.Event()
    if not mine:
        asking.wait()
        return _VERSIONS.get(key)
    version = None
    try:
        version = _ask_version(argv if argv is not None else _version_argv(path), timeout)
    finally:
        with _LOCK:
            _VERSIONS[key] = version
            del _ASKING[key]
        asking.set()
    return version


def prefetch_version(path: str | Path) -> None:
    """Ask ``path --version`` in a thread now (a CLI start, 0.01-0.3 s), so the imports and
    checks that run meanwhile overlap it and the :func:`cli_version` call that needs it
    finds it asked. The command is worked out here, in the caller's thread: the thread
    itself imports nothing, so it never races the caller's imports for a module lock."""
    argv = _version_argv(path)
    threading.Thread(target=cli_version, args=(path,), kwargs={"argv": argv}, name="pluginbench-cli-version",
                     daemon=True).start()


#: questions being asked right now, by key: the others asking wait for the one answer
_ASKING: dict[tuple[str, int, int, int], threading.Event] = {}
_LOCK = threading.Lock()


def _version_argv(path: str | Path) -> list[str]:
    """``<path> --version``, or what the harness whose pinned command ``path`` is named
    after declares instead (Codex: its native binary, skipping the npm node wrapper)."""
    name = Path(path).name
    cls = harness_class(name) if is_registered(name) else None
    if cls is not None and cls.cli is not None and cls.cli.command == name:
        return list(cls.version_argv(path))
    return [str(path), "--version"]


def _ask_version(argv: list[str], timeout: float) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, check=False,
                              start_new_session=True)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    for token in proc.stdout.split():
        parts = token.split(".")
        if len(parts) >= 3 and all(p.isdigit() for p in parts[:3]):
            return token
    return None
