"""The run folder checked against its log before anything is rebuilt or resumed.

:func:`read_checked_log` is what ``report``, ``status``, ``run <dir>`` (resume) and the
worker read a run's log with: :func:`..events.read_run_log` (every line decodes, ``seq``
is contiguous, one ``run.created`` first, known versions, no unknown attempt), then the
log is held against what the run folder says was written after it:

* the ledger (``evidence/ledger.sqlite``) records the ``seq`` of the last event it
  folded; a ledger *ahead* of the log means the log lost its last events (a ledger
  behind it is normal after a crash and is rebuilt from the log);
* every folder under ``evidence/attempts/`` and ``evidence/discarded/`` belongs to an
  attempt whose ``attempt.started`` is in the log; a folder the log never started means
  the log lost the events that made it, and a resume would code that attempt again under
  the same id, over its evidence.

Any mismatch raises :class:`CorruptLogError` (exit 2) naming the file, the line and the
fix; nothing is written, so a damaged log never becomes a silent rebuild or a recode.
"""

import contextlib
import hashlib
import os
import sqlite3
from pathlib import Path
from typing import NamedTuple

from ..errors import CorruptLogError, InputError, RunDirError
from ..events import (
    AttemptReused,
    AttemptStarted,
    Event,
    GuidanceGenerated,
    LogContents,
    StreamedLog,
    VanillaCacheChecked,
    read_run_log,
    stream_run_log,
)
from ..rundir import RunDir
from ..tasks import bind_task_owned, fingerprint, scan_tree
from ._state import RunState, fold

__all__ = ["CheckedFold", "check_frozen", "check_results_version", "fold_checked_log", "frozen_changes",
           "ledger_last_seq", "read_checked_log"]

_FIX = ("restore events.jsonl from a backup (PluginBench only appends to it, so it was cut or replaced "
        "by hand or by another tool), or start a new run; nothing was written")


def ledger_last_seq(path: Path) -> int | None:
    """The ``seq`` the ledger last recorded, read-only; None when there is no ledger (a run
    from before it) or it cannot be read now (locked by the live writer). A ledger that is
    no file, or no SQLite database, is refused: the log could not be checked against it."""
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        raise _damaged_ledger(path, "is not a regular file")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        row = db.execute("SELECT value FROM meta WHERE key='last_seq'").fetchone()
        return int(row[0]) if row else None
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise _damaged_ledger(path, f"is not a readable SQLite ledger ({exc})") from None
        return None
    except (ValueError, TypeError):
        return None
    finally:
        with contextlib.suppress(sqlite3.Error):
            db.close()


def _damaged_ledger(path: Path, what: str) -> CorruptLogError:
    return CorruptLogError(
        f"the ledger {what}, so the event log cannot be checked against it",
        file=str(path),
        fix="restore it from a backup, or delete it: the next resume rebuilds it from the log (the log is the "
            "record); nothing was written",
    )


class CheckedFold(NamedTuple):
    """The fold of a checked log, with what its read found at the end."""

    state: RunState
    last: Event
    torn_tail_bytes: int


def _folders(rd: RunDir) -> list[tuple[str, Path]]:
    return [(folder.name, child) for folder in (rd.evidence / "attempts", rd.evidence / "discarded")
            if folder.is_dir() for child in sorted(folder.iterdir())]


def _folder_names(rd: RunDir) -> list[tuple[str, str]]:
    """``(kind, name)`` of each entry under ``evidence/attempts`` and ``evidence/discarded``, in
    the directory's own order: the streamed check only asks whether every one was started (no
    sort, no path per entry; :func:`read_checked_log` sorts them to name the first it refuses)."""
    out: list[tuple[str, str]] = []
    for kind in ("attempts", "discarded"):
        folder = rd.evidence / kind
        if folder.is_dir():
            with os.scandir(folder) as entries:
                out.extend((kind, entry.name) for entry in entries)
    return out


def fold_checked_log(rd: RunDir, *, folding: bool = True) -> CheckedFold:
    """:func:`read_checked_log` and the fold of its events in one streamed pass: the same
    checks and the same refusals (a log that is not sound is read again by
    :func:`read_checked_log`, whose error names the line), but no list of events is held,
    so a million-event log folds in the memory of its state. ``folding=False`` only checks
    (the state returned is then empty)."""
    recorded = ledger_last_seq(rd.ledger)
    folders = _folder_names(rd)
    state = RunState()
    started: set[str] = set()

    def sink(event: Event) -> None:
        if folding:
            state.apply(event)
        if isinstance(event, AttemptStarted | AttemptReused):
            started.add(event.attempt_id)
        elif isinstance(event, VanillaCacheChecked):
            started.update(d.attempt_id for d in event.decisions if d.decision == "hit")

    streamed: StreamedLog | None = stream_run_log(rd.events, sink)
    if streamed is None or (recorded is not None and recorded > streamed.last.seq) or any(
            (name if name in started or kind == "attempts" else name.rsplit(".", 1)[0])
            not in started for kind, name in folders):
        contents = read_checked_log(rd)  # raises, naming the line; a sound log read again is folded again
        return CheckedFold(fold(contents.events) if folding else RunState(), contents.events[-1],
                           len(contents.torn_tail))
    return CheckedFold(state, streamed.last, len(streamed.torn_tail))


def read_checked_log(rd: RunDir) -> LogContents:
    """The run's log, verified on its own and against the ledger and the attempt folders.

    The ledger's seq and the folder names are taken *before* the log is read: a live
    writer appends an event before the ledger row and before the folder it causes, so
    what was seen first is always explained by the log read after it (no false alarm
    while a run is being written)."""
    recorded = ledger_last_seq(rd.ledger)
    folders = _folders(rd)
    contents = read_run_log(rd.events)
    last = contents.events[-1].seq
    if recorded is not None and recorded > last:
        raise CorruptLogError(
            f"the event log ends at seq {last} (line {len(contents.events)}) but the ledger recorded seq "
            f"{recorded}: the log lost its last {recorded - last} events",
            file=str(rd.events),
            field=f"line {len(contents.events) + 1}",
            fix=_FIX,
        )
    # An attempt's folder is made after its attempt.started, or by a vanilla cache import
    # (after vanilla_cache.checked said "hit", before attempt.reused; a kill in between
    # leaves a folder that the resume imports again, over itself).
    started = {e.attempt_id for e in contents.events if isinstance(e, AttemptStarted | AttemptReused)}
    started |= {d.attempt_id for e in contents.events if isinstance(e, VanillaCacheChecked)
                for d in e.decisions if d.decision == "hit"}
    for kind, child in folders:
        # discarded/ keeps a second archive of one id as ``<id>.<n>``
        aid = child.name if child.name in started or kind == "attempts" else child.name.rsplit(".", 1)[0]
        if aid not in started:
            raise CorruptLogError(
                f"{child.relative_to(rd.root)} holds evidence of attempt {child.name!r}, but the log "
                f"(line {len(contents.events)}, seq {last}) never started it: the log lost the events "
                "that made it",
                file=str(rd.events),
                field=f"line {len(contents.events) + 1}",
                fix=_FIX,
            )
    return contents


def frozen_changes(rd: RunDir, state: RunState) -> list[str]:
    """Each frozen task or treatment whose tree no longer has the fingerprint recorded when
    it was frozen (``task.prepared``, ``treatment.frozen``): a file changed, added or deleted."""
    changed = []
    for task_id, prepared in sorted(state.prepared_tasks.items()):
        if _tree_fingerprint(rd.frozen_task(task_id)) != prepared.fingerprint:
            changed.append(f"frozen task '{task_id}' ({rd.frozen_task(task_id).relative_to(rd.root)})")
    for arm, frozen in sorted(state.frozen_treatments.items()):
        dest = rd.frozen_treatment(arm)
        got = _tree_fingerprint(dest) if dest.exists() else hashlib.sha256(b"").hexdigest()
        # an arm with task_owned: remove records the tree's fingerprint with that setting bound in
        if got is None or frozen.fingerprint not in (got, bind_task_owned(got, "remove")):
            changed.append(f"frozen treatment '{arm}' ({dest.relative_to(rd.root)})")
    for (arm, task), gen in sorted(state.generations.by_pair.items()):
        done = gen.result
        if isinstance(done, GuidanceGenerated) and _file_sha256(rd.root / done.path) != done.sha256:
            changed.append(f"the guidance generated for arm '{arm}' on task '{task}' ({done.path})")
    return changed


def _file_sha256(path: Path) -> str | None:
    try:
        return None if path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _tree_fingerprint(root: Path) -> str | None:
    try:
        return fingerprint(scan_tree(root, context=f"frozen evidence {root.name}"))
    except (InputError, OSError):
        return None  # unreadable or unsafe now: not what was frozen


def check_frozen(rd: RunDir, state: RunState) -> None:
    """Refuse (exit 2) a run whose frozen evidence changed since it was frozen."""
    changed = frozen_changes(rd, state)
    if changed:
        raise RunDirError(
            f"{changed[0]} changed since it was frozen" + (f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""),
            file=str(rd.evidence / "frozen"),
            fix="restore the run directory from a backup, or start a new run; the results of a run whose "
            "frozen inputs changed cannot be rebuilt or continued",
        )


def check_results_version(doc: dict[str, object], path: Path) -> None:
    """Refuse (exit 2) a ``results.json`` of a schema version this PluginBench does not
    write: read as the current one, its fields could mean something else."""
    from ._report_data import RESULTS_SCHEMA_VERSION

    got = doc.get("schema_version")
    if got != RESULTS_SCHEMA_VERSION:
        raise InputError(
            f"results.json has schema_version {got!r}; this PluginBench reads version {RESULTS_SCHEMA_VERSION}",
            file=str(path),
            field="schema_version",
            fix=f"rebuild it with `pluginbench report {path.parent.parent}`, or read it with the PluginBench "
            "release that wrote it",
        )
