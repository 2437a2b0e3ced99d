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
import threading
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
    """Start hashing the launcher source in a thread (it reads every ``.py`` file of the
    package, ~0.1 s of mostly I/O): ``run`` calls this first, so the worker's
    :func:`current_runtime` finds the hash made while the run was checked and created."""
    threading.Thread(target=launcher_source_sha256, name="pluginbench-source-hash", daemon=True).start()


def launcher_source_sha256() -> str:
    """SHA-256 over this PluginBench's Python source (relative path and bytes of each file),
    computed once per process (by whichever caller or :func:`prefetch_launcher_source`'s
    thread comes first; the others wait for it)."""
    with _HASH_LOCK:
        return _launcher_source_sha256()


_HASH_LOCK = threading.Lock()


@functools.cache
def _launcher_source_sha256() -> str:
    h = hashlib.sha256()
    for p in sorted(_PACKAGE.rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        h.update(p.relative_to(_PACKAGE).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


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
