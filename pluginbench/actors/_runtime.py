"""The runtime a run codes under, recorded at each worker start and checked on resume.

Every ``run.started`` records ``runtime``: the launcher (PluginBench) version and the
SHA-256 of its Python source, the backend, and on the docker backend the engine's ID,
version, OS type and architecture. A resume with coding left compares the current runtime
with the last recorded one (:func:`runtime_drift`, pure); a run whose every attempt is
complete finishes without these coding checks:

* **must match exactly** (:data:`EXACT`): the launcher version, its source hash, the
  backend, and the engine's OS type and architecture (its platform). A change refuses
  the resume (exit 2) naming each field with its saved and current values; restore that
  runtime, or start a new run.
* **recorded, not compared** (:data:`RECORDED`): the engine ID and version, its user
  namespace (``userns``, ``rootless``, or ``none``: container root is the host's root), and
  the host CLI version when the coding images carry the frozen CLI. A change is accepted,
  said in a progress line and recorded in ``run.started.accepted``; an engine the backend
  refuses (docker: ``none`` without ``environment.allow_host_root``) refuses the resume.

Container CPU and memory limits are frozen in ``evaluation.json``; the engine's capacity
for them is checked again before preparation (they only have to fit).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from .. import __version__
from ..config import Evaluation
from ..errors import RunDirError
from ..events import Event, RunStarted

#: runtime fields a resume requires unchanged
EXACT = ("launcher_version", "launcher_source_sha256", "backend", "engine_os", "engine_arch")
#: runtime fields a resume records when they changed, without refusing
RECORDED = ("engine_id", "engine_version", "engine_user_namespace", "host_cli_version")

_PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache  # once per process: later calls find the thread started
def prefetch_launcher_source() -> None:
    """Start hashing the launcher source in a thread (unchanged source only stats its
    ``.py`` files, see :func:`launcher_source_sha256`): ``run`` calls this first, so the
    worker's :func:`current_runtime` finds the hash made while the run was checked and created."""
    threading.Thread(target=launcher_source_sha256, name="pluginbench-source-hash", daemon=True).start()


def launcher_source_sha256() -> str:
    """SHA-256 over this PluginBench's Python source (relative path and bytes of each file),
    computed once per process (by whichever caller or :func:`prefetch_launcher_source`'s
    thread comes first; the others wait for it). The bytes are read only when the files'
    stat signature differs from the one stored beside the hash in the user's cache root
    (:data:`SOURCE_HASH_CACHE`): an unchanged install is not read again on every run."""
    with _HASH_LOCK:
        return _launcher_source_sha256()


_HASH_LOCK = threading.Lock()


#: the cache file (under the user's cache root) that maps the source files' stat signature
#: to their hash, so a run of unchanged source reads no file of it
SOURCE_HASH_CACHE = "launcher-source.json"


@functools.cache
def _launcher_source_sha256() -> str:
    files = _source_files()
    signature, settled = _stat_signature(files)
    cached = _cached_hash(signature)
    if cached is not None:
        return cached
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(_PACKAGE).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    digest = h.hexdigest()
    if settled:
        _store_hash(signature, digest)
    return digest


def _source_files() -> list[Path]:
    """Every ``.py`` file of the package outside ``__pycache__``, in path order (os.walk: a
    third of pathlib's rglob's time)."""
    found: list[Path] = []
    for folder, dirs, names in os.walk(_PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found.extend(Path(folder, n) for n in names if n.endswith(".py"))
    return sorted(found)


#: a file changed less than this long ago may change again within the file system's clock
#: tick and keep its stat (git's "racy" entries): the hash is then not stored
SETTLE_NS = 2_000_000_000


def _stat_signature(files: Iterable[Path]) -> tuple[str, bool]:
    """What changes whenever a source file's bytes can have changed (its path, size, inode and
    modification and change times in nanoseconds; the change time cannot be set back by a
    user, so an edit that restores the old modification time still changes it), and whether
    every file is older than :data:`SETTLE_NS` (only then may the signature stand for bytes)."""
    h = hashlib.sha256()
    newest = 0
    for p in files:
        st = p.stat()
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        h.update(f"{p.relative_to(_PACKAGE).as_posix()}\0{st.st_size}\0{st.st_ino}\0{st.st_dev}\0"
                 f"{st.st_mtime_ns}\0{st.st_ctime_ns}\n".encode())
    return f"{_PACKAGE}\0{h.hexdigest()}", newest < time.time_ns() - SETTLE_NS


def _cache_file() -> Path:
    from ..cache import resolve_cache_root

    return resolve_cache_root() / SOURCE_HASH_CACHE


def _cached_hash(signature: str) -> str | None:
    """The hash stored for exactly this signature, or None (no cache, unreadable, other source)."""
    try:
        saved = json.loads(_cache_file().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("signature") != signature:
        return None
    digest = saved.get("sha256")
    return digest if isinstance(digest, str) and len(digest) == 64 else None


def _store_hash(signature: str, digest: str) -> None:
    """Best effort: a cache root that cannot be written only means the next run hashes again.
    Written to a temporary name and renamed, so a reader never sees half a file."""
    try:
        target = _cache_file()
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"signature": signature, "sha256": digest}))
        os.replace(tmp, target)
    except OSError:
        return


def current_runtime(ev: Evaluation, host_cli_version: str | None = None) -> dict[str, str]:
    """The runtime this process would code under (asks the Docker engine on the docker backend;
    an engine that does not answer leaves its fields out, and preparation's own check says why)."""
    rt = {"launcher_version": __version__, "launcher_source_sha256": launcher_source_sha256(),
          "backend": ev.environment.backend}
    if host_cli_version:
        rt["host_cli_version"] = host_cli_version
    if ev.environment.backend == "docker":
        import contextlib

        import anyio

        from ..environments import backend_of
        from ..errors import EnvironmentFailure

        got: dict[str, str] = {}

        def ask() -> None:
            with contextlib.suppress(EnvironmentFailure):  # preparation's own engine check says why
                got.update(anyio.run(backend_of(ev).environment().runtime, backend="asyncio"))  # type: ignore[attr-defined]  # DockerEnvironment's own

        # its own thread: the caller may already run an event loop (a test, the measure command)
        asker = threading.Thread(target=ask, name="pluginbench-engine-runtime")
        asker.start()
        asker.join()
        rt.update(got)
    return rt


def recorded_runtime(events: Iterable[Event]) -> dict[str, str] | None:
    """The runtime the last ``run.started`` recorded (None: no worker recorded one yet)."""
    last: dict[str, str] | None = None
    for e in events:
        if isinstance(e, RunStarted) and e.runtime is not None:
            last = dict(e.runtime)
    return last


def runtime_drift(saved: Mapping[str, str], now: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """``(refused, accepted)``: each changed field as ``field: saved -> current`` (pure). A field
    either side lacks (an engine that did not answer, an older record) is not compared."""
    refused = [f"{k}: {saved[k]} -> {now[k]}" for k in EXACT if k in saved and k in now and saved[k] != now[k]]
    accepted = [f"{k}: {saved[k]} -> {now[k]}" for k in RECORDED if k in saved and k in now and saved[k] != now[k]]
    return refused, accepted


def coding_left(events: Iterable[Event]) -> bool:
    """Whether the run still has coding to do (no attempt yet, or one not complete): a run
    whose every attempt is complete finishes without the coding checks (pure)."""
    from ..projections import fold

    attempts = list(fold(list(events)).live_attempts())
    return not attempts or any(a.state != "complete" for a in attempts)


def check_runtime(events: Iterable[Event], now: Mapping[str, str], events_file: Path,
                  ev: Evaluation | None = None) -> list[str]:
    """Refuse (exit 2) a resume with coding left whose runtime changed where it must match,
    or (given the run's settings ``ev``) one its backend refuses to start sandboxes under
    (:meth:`Backend.refuse_runtime`: docker, an engine whose container root is the host's);
    the accepted changes (none are checked when nothing is left to code)."""
    events = list(events)
    saved = recorded_runtime(events)
    if saved is None or not coding_left(events):
        return []
    if ev is not None:
        from ..environments import backend_of

        backend_of(ev).refuse_runtime(ev, now, events_file)
    refused, accepted = runtime_drift(saved, now)
    if refused:
        raise RunDirError("the runtime changed since the run last coded: " + "; ".join(refused),
                          file=str(events_file), field="run.started.runtime",
                          fix="restore that runtime (the PluginBench build and Docker engine platform the run "
                              "started with) and resume, or start a new evaluation from the config")
    return accepted
