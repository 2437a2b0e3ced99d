"""Read a run for ``status``: every piece of I/O the pure view must not do.

The log is read once and verified like ``events``, ``report`` and ``run`` do (a missing,
empty or corrupt log is refused). Attempt states come from ``evidence/ledger.sqlite``
opened read-only when it is usable and at exactly the log's last complete event;
otherwise from a fold of that same read (``states_source`` says which), so states and
``last_event`` are one moment. A torn last line is ignored and counted
(``torn_tail_bytes``). The owner comes from ``run.lock`` (a held lock with the recorded
start time), the heartbeat from the newest write to the log, ``run.log`` or the ledger.
Nothing here writes. The backend is asked what a killed worker left only for a run no
process owns, and only when the caller wants it (the dashboard's page polls do not).
"""

import contextlib
import hashlib
import io
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

import msgspec

from .._gc import paused_gc
from ..events import (
    decode,
    encode,
    last_line_before,
    live_owner,
    log_mark_holds,
    read_run_log,
    require_regular,
)

# Only the ledger's reader and the group view at import: ``status --json`` answered from the
# ledger loads neither the fold nor the report behind the other names (see :func:`_read`).
from ..projections import (
    LedgerSummary,
    LedgerView,
    LeftRunning,
    Owner,
    RunFacts,
    ledger_summary,
    read_ledger,
    status_of_groups,
    summable,
)
from ..rundir import RunDir

if TYPE_CHECKING:
    from ..projections import Status


def read_status(
    run_dir: Path,
    *,
    now: float | None = None,
    clock: Callable[[], float] = time.time,
    ledger_reader: Callable[[Path], LedgerView | None] = read_ledger,
    check_left_running: bool = True,
) -> "Status":
    """The typed ``status --json`` object of ``run_dir``. Read-only.

    ``now`` (else ``clock()``) is the moment the heartbeat's age is measured at;
    ``ledger_reader`` lets an async caller (the dashboard) hand in the ledger view it read
    itself; ``check_left_running=False`` keeps the backend out of a page poll
    (``left_running`` is then null, as the dashboard's contract says)."""
    with paused_gc():
        return _read(RunDir(run_dir.resolve()), clock() if now is None else now, ledger_reader, check_left_running)


def status_snapshot(
    run_dir: Path,
    *,
    now: float | None = None,
    ledger_reader: Callable[[Path], LedgerView | None] = read_ledger,
    check_left_running: bool = True,
) -> dict[str, Any]:
    """:func:`read_status` as plain JSON-able data (what the terminal view and the
    dashboard's page models read)."""
    status = read_status(run_dir, now=now, ledger_reader=ledger_reader, check_left_running=check_left_running)
    with paused_gc():
        out: dict[str, Any] = msgspec.to_builtins(status)
        return out


_ENCODER = msgspec.json.Encoder(order="sorted")


class _Cell(msgspec.Struct):
    """The fields of an attempt row the terminal view reads (the rest are skipped unread)."""

    id: Any = None
    task: Any = None
    arm: Any = None
    repeat: Any = None
    state: Any = None
    outcome: Any = None
    node: Any = None


_CELLS = msgspec.json.Decoder(list[_Cell])


def terminal_snapshot(run_dir: Path, *, now: float | None = None) -> dict[str, Any]:
    """What plain ``status`` draws: :func:`status_snapshot`, but from the ledger's groups and
    rows when :func:`write_status_json` could answer from it, each attempt holding only the
    fields the terminal view reads (id, task, arm, repeat, state, outcome, node)."""
    with paused_gc():
        snap = _ledger_snapshot(RunDir(run_dir.resolve()), time.time() if now is None else now, None)
    return status_snapshot(run_dir, now=now) if snap is None else snap


def status_json(run_dir: Path, *, now: float | None = None, clock: Callable[[], float] = time.time) -> bytes:
    """``status --json``'s bytes; see :func:`write_status_json`."""
    out = io.BytesIO()
    write_status_json(run_dir, out, now=now, clock=clock)
    return out.getvalue()


def write_status_json(run_dir: Path, out: BinaryIO, *, now: float | None = None,
                      clock: Callable[[], float] = time.time) -> None:
    """Write ``status --json`` to ``out`` (indented, sorted keys, a newline at the end): the
    JSON of :func:`status_snapshot`. When the ledger records the log bytes it was written
    at, the log still holds exactly those bytes (:func:`~pluginbench.events.log_mark_holds`:
    the file's inode, change time, size and last 16 KiB, else the CRC-32 of every byte) and
    no event past them, the log is not decoded again: the counts and sums are SQL groups
    over a covering index, and the attempt rows are the ledger's own bytes of them, already
    indented, streamed a batch at a time. Otherwise, and whenever anything differs,
    :func:`status_snapshot`."""
    rd = RunDir(run_dir.resolve())
    with paused_gc():
        if _from_summary(rd, clock() if now is None else now, out):
            return
    out.write(msgspec.json.format(_ENCODER.encode(read_status(run_dir, now=now)), indent=2) + b"\n")


_EMPTY = b'\n  "attempts": [],'


def _evidence_names(rd: RunDir) -> tuple[list[str], list[str]]:
    """The names under ``evidence/attempts/`` and under ``evidence/discarded/``."""
    out: list[list[str]] = []
    for kind in ("attempts", "discarded"):
        try:
            out.append(os.listdir(rd.evidence / kind))
        except (FileNotFoundError, NotADirectoryError):
            out.append([])
    return out[0], out[1]


class _Trusted(NamedTuple):
    last: Any
    torn_tail_bytes: int
    selected: list[str]


def _trusted(rd: RunDir, summary: LedgerSummary | None, names: tuple[list[str], list[str]]) -> _Trusted | None:
    """What the ledger's summary may be shown with, or ``None`` when the log must be folded:
    the log still holds exactly the bytes the ledger was written at (:func:`log_mark_holds`)
    and no complete event after them, its last event is the ledger's, every evidence folder
    belongs to an attempt the ledger has started, and the groups can answer."""
    if summary is None:
        return None
    rest = log_mark_holds(rd.events, summary.log_mark)
    if rest is None or b"\n" in rest or not summary.log_mark.size:
        return None
    try:
        decode(rest)
        return None  # a complete event past the ledger: it lags the log
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass  # nothing, or a torn tail
    try:
        last = decode(last_line_before(rd.events, summary.log_mark.size))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if last.seq != summary.last_seq:
        return None
    started = summary.started or frozenset()
    attempts, discarded = names
    if not started.issuperset(attempts) or any(n not in started and n.rsplit(".", 1)[0] not in started for n in discarded):
        return None  # a folder the ledger does not explain: the full check decides
    selected = _selected_measures(rd)
    if not summable(summary.run, summary.groups, selected):
        return None
    return _Trusted(last, len(rest), selected)


@contextlib.contextmanager
def _trusted_summary(rd: RunDir) -> Iterator[tuple[LedgerSummary, RunFacts] | None]:
    """The ledger's summary and the run's facts when the ledger can be trusted
    (:func:`_trusted`), held in one read transaction for the ``with``; else ``None``. The
    facts ask the backend about sandboxes left running (the callers are the CLI's views,
    never a page poll)."""
    require_regular(rd.events)
    names = _evidence_names(rd)
    lock = live_owner(rd.root)
    with ledger_summary(rd.ledger, started=bool(names[0] or names[1])) as summary:
        trusted = _trusted(rd, summary, names)
        if summary is None or trusted is None:
            yield None
            return
        yield summary, _facts(rd, lock, summary.run, trusted.last, trusted.torn_tail_bytes, "ledger",
                              trusted.selected, check_left_running=True)


def _from_summary(rd: RunDir, now: float, out: BinaryIO) -> bool:
    with _trusted_summary(rd) as got:
        if got is None:
            return False
        summary, facts = got
        whole = msgspec.json.format(_ENCODER.encode(status_of_groups(summary.run, summary.groups, facts, now)), indent=2)
        at = whole.find(_EMPTY)  # the top-level key, one level in ("active" and "arms" come first)
        if at < 0:
            return False
        out.write(whole[:at + len(_EMPTY) - 3])
        opened = b"[\n"
        for batch in summary.attempt_batches():  # each row is already its final bytes
            out.write(opened)
            out.write(b",\n".join(batch))  # one write a batch: no copy of it beyond the join
            opened = b",\n"
        out.write(b"[]" if opened == b"[\n" else b"\n  ]")
        out.write(whole[at + len(_EMPTY) - 1:] + b"\n")
    return True


#: At most about this many attempt rows in a live view's table (fewer tasks when each has many).
WATCH_ROWS = 2_000


def watch_snapshot(run_dir: Path, *, tasks: int, now: float | None = None) -> dict[str, Any]:
    """:func:`status_snapshot` for a live view that shows the first tasks: the same counts,
    sums and run facts, but ``attempts`` holds only the live attempts of the first ``tasks``
    tasks (fewer when they would hold more than :data:`WATCH_ROWS` attempts) and the running
    ones; ``tasks_total`` says how many tasks the run has and ``tasks_limit`` how many it
    lists. From the ledger's groups and those rows alone when :func:`write_status_json`
    could answer from it (no other attempt row is decoded); else the full read, with every
    attempt."""
    with paused_gc():
        snap = _ledger_snapshot(RunDir(run_dir.resolve()), time.time() if now is None else now, tasks)
    if snap is not None:
        return snap
    snap = status_snapshot(run_dir, now=now)
    n_tasks = len({a["task"] for a in snap["attempts"]})
    return {**snap, "tasks_total": n_tasks, "tasks_limit": _tasks_limit(tasks, snap["attempts_total"], n_tasks)}


def _ledger_snapshot(rd: RunDir, now: float, tasks: int | None) -> dict[str, Any] | None:
    """The snapshot from the ledger's groups and rows when it can be trusted (:func:`_trusted`),
    else ``None``: every live attempt's terminal cell (``tasks`` None), or :func:`watch_snapshot`'s rows of the
    first ``tasks`` tasks with ``tasks_total`` and ``tasks_limit``."""
    with _trusted_summary(rd) as got:
        if got is None:
            return None
        summary, facts = got
        snap: dict[str, Any] = msgspec.to_builtins(status_of_groups(summary.run, summary.groups, facts, now))
        if tasks is None:  # the terminal view's cells, a batch at a time
            cells = [c for batch in summary.attempt_batches() for c in _CELLS.decode(b"[" + b",".join(batch) + b"]")]
            snap["attempts"] = msgspec.to_builtins(cells)
            return snap
        all_tasks = sorted(summary.run.get("tasks") or [])
        limit = _tasks_limit(tasks, snap["attempts_total"], len(all_tasks))
        rows = summary.attempts_of(all_tasks[:limit])
        snap["attempts"] = msgspec.json.decode(b"[" + b",".join(rows) + b"]")
        return {**snap, "tasks_total": len(all_tasks), "tasks_limit": limit}


def _tasks_limit(tasks: int, attempts: int, n_tasks: int) -> int:
    per_task = -(-attempts // max(1, n_tasks))
    return max(1, min(tasks, WATCH_ROWS // max(1, per_task)))


def _facts(rd: RunDir, lock: Any, run: dict[str, Any], last: Any, torn_tail_bytes: int, source: str,
           selected: list[str], *, check_left_running: bool) -> RunFacts:
    owner = None if lock is None else Owner(pid=lock.pid, pgid=lock.pgid, started_at=lock.started_at)
    report_html = rd.report_dir / "report.html"
    return RunFacts(
        run_dir=str(rd.root),
        owner=owner,
        newest_write=_newest_write(rd),
        last_event=msgspec.json.decode(encode(last)),
        torn_tail_bytes=torn_tail_bytes,
        states_source=source,
        selected_measures=selected,
        report_html=str(report_html) if report_html.exists() else None,
        log=str(rd.log) if rd.log.exists() else None,
        left_running=None if owner is not None or not check_left_running else ask_backend(run.get("backend"), rd.run_id),
        settings_warning=settings_warning(rd),
    )


def _read(rd: RunDir, now: float, ledger_reader: Callable[[Path], LedgerView | None], check_left_running: bool) -> "Status":
    from ..projections import attempt_rows, fold_checked_log, run_row, status_view

    lock = live_owner(rd.root)
    # One snapshot: the ledger is read, then the log (verified: every line decodes, seq is
    # contiguous, it begins with run.created); last_event is its last complete event, and
    # the states come from the ledger only when the ledger is at exactly that event and was
    # written at the log's bytes as they are (its log mark), else from a fold of the same
    # read. States and last_event never mix two moments.
    view = ledger_reader(rd.ledger)
    checked = fold_checked_log(rd, folding=view is None)
    if view is not None and view.last_seq == checked.last.seq and (
            view.log_mark is None or log_mark_holds(rd.events, view.log_mark) is not None):
        run, rows, source = view.run, view.attempts, "ledger"
    else:
        if view is not None:  # the log moved on after the ledger was read: fold this read of it
            checked = fold_checked_log(rd)
        run, rows, source = run_row(checked.state), attempt_rows(checked.state), "events"
    last, torn_tail_bytes = checked.last, checked.torn_tail_bytes
    del checked
    facts = _facts(rd, lock, run, last, torn_tail_bytes, source, _selected_measures(rd),
                   check_left_running=check_left_running)
    return status_view(run, rows, facts, now)


def _newest_write(rd: RunDir) -> float | None:
    mtimes = []
    for p in (rd.events, rd.log, rd.ledger):
        try:
            mtimes.append(p.stat().st_mtime)
        except FileNotFoundError:
            continue
    return max(mtimes) if mtimes else None


def settings_warning(rd: RunDir) -> str | None:
    """Why ``report`` and ``run`` would refuse the run's saved settings, as one sentence naming
    the file and the fix, or ``None``: evaluation.json's SHA-256 is not the one its binding
    records, or the binding cannot be read (status warns and still shows the run)."""
    try:
        bound = json.loads(rd.binding.read_text(encoding="utf-8")).get("evaluation_sha256")
    except FileNotFoundError:
        return None  # no binding (a hand-built evidence folder): nothing to hold the settings to
    except (OSError, ValueError, AttributeError) as exc:
        return (f"{rd.binding} cannot be read ({exc}): report and resume refuse this run; restore the run's "
                "evaluation-binding.json (PluginBench never edits it)")
    try:
        digest = hashlib.sha256(rd.evaluation.read_bytes()).hexdigest()
    except OSError as exc:
        return f"{rd.evaluation} cannot be read ({exc.strerror}): report and resume refuse this run; restore it"
    if bound == digest:
        return None
    return (f"{rd.evaluation} does not match its hash binding ({rd.binding.name}): the saved settings were edited, "
            "so report and resume refuse this run; restore the original evaluation.json, or start a new run")


def _selected_measures(rd: RunDir) -> list[str]:
    """The measurements the run's frozen settings select (tokens and time are always taken)."""
    try:
        selected = json.loads(rd.evaluation.read_text()).get("measurements")
    except (OSError, ValueError, AttributeError):
        return []
    return sorted(m for m in selected if isinstance(m, str)) if isinstance(selected, list) else []


def left_running_check(run_dir: Path) -> dict[str, Any]:
    """The ``left_running`` object of a run no process owns, from its backend: the
    dashboard's "check for containers left running" action."""
    from ..projections import fold, run_row

    rd = RunDir(run_dir.resolve())
    view = read_ledger(rd.ledger)
    run = view.run if view is not None else run_row(fold(read_run_log(rd.events).events))
    left: dict[str, Any] = msgspec.to_builtins(ask_backend(run.get("backend"), rd.run_id))
    return left


def ask_backend(backend: str | None, run_id: str) -> LeftRunning:
    """What the run's backend says a killed worker of ``run_id`` left; ``checked: false``
    with the reason when it could not be asked (status always answers)."""
    try:
        left = _left_on_backend(backend or "local", run_id)
    except Exception as exc:  # noqa: BLE001 - reported, not raised: status must always answer
        return LeftRunning(checked=False, error=str(exc), containers=[], folders=[], stop_command=None)
    return msgspec.convert({"checked": True, "error": None, **left}, LeftRunning)


def _left_on_backend(backend: str, run_id: str) -> dict[str, Any]:
    """Asks the run's backend through the backend port (``Backend.left_running``)."""
    from ..environments import left_running

    left = left_running(backend, run_id)
    return {"containers": left.containers, "folders": left.folders, "stop_command": left.stop_command}
