"""``tasks.urls`` and ``tasks.dataset`` at the edges of a run: resolved once at freeze time,
then only read back.

``resolve_remote`` resolves every link (ref → commit), or the dataset through its Harbor
registry index (name@version → each task's git commit), fetches each folder through the task
cache (``$XDG_CACHE_HOME/pluginbench/tasks``) and verifies it; ``run``, ``check`` and
``--dry-run`` call it in the foreground. ``create_run`` then writes the pins (and, for a
dataset, ``dataset.json`` with its content hash) and a copy of each folder into the run
(``evidence/remote/``), so the worker, a resume and the report read the run's own evidence
and never resolve a link or consult a registry again.
"""

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..cache import resolve_cache_root
from ..config import Evaluation
from ..errors import NotInDataset, RunDirError, TaskError
from ..rundir import RunDir

# The pinning, fetching and registry code (``tasks._remote``, ``_registry``, ``_urls``)
# loads with a run that links its tasks; a run of local task folders never needs it.
if TYPE_CHECKING:
    from ..tasks import DatasetPin, TaskPin


class RemoteTasks(NamedTuple):
    """Fetched task folders, each with its pin; for a dataset also the dataset's pin."""

    tasks: "list[tuple[TaskPin, Path]]"
    dataset: "DatasetPin | None" = None


def task_cache() -> Path:
    """Where fetched task folders are cached (the vanilla cache's root, folder ``tasks``)."""
    return resolve_cache_root() / "tasks"


def resolve_remote(ev: Evaluation, config: Path) -> RemoteTasks:
    """Every ``tasks.urls`` link, or every ``tasks.dataset`` task, pinned and fetched."""
    from ..tasks import HARBOR_REGISTRY, resolve_dataset, resolve_pins

    ds = ev.tasks.dataset_source()
    if ds is None:
        def error(i: int, message: str, fix: str) -> TaskError:
            return TaskError(message, file=str(config), field=f"tasks.urls[{i}]", fix=fix)

        return RemoteTasks(resolve_pins(list(ev.tasks.urls or []), task_cache(), error=error))

    def dataset_error(part: str, message: str, fix: str) -> TaskError:
        base, _, index = part.partition("[")
        return TaskError(message, file=str(config), field=ev.tasks.dataset_field(base) + (f"[{index}" if index else ""),
                         fix=fix)

    try:
        pin, tasks = resolve_dataset(ds.name, ds.version, ds.ids, ds.registry or HARBOR_REGISTRY, task_cache(),
                                     error=dataset_error)
    except NotInDataset as exc:  # a name the index does not list: the config's field
        raise dataset_error(exc.field or "name", exc.message, exc.fix or "") from None
    return RemoteTasks(tasks, pin)


def freeze_remote(rd: RunDir, remote: RemoteTasks) -> None:
    """Copy each fetched folder into the run and write the pins beside them."""
    from ..tasks import freeze_tree, write_dataset_pin, write_pins

    pins = []
    for pin, folder in remote.tasks:
        fp, entries = freeze_tree(folder, rd.remote_task(pin.task_id), context=f"task '{pin.task_id}'")
        if fp != pin.fingerprint:
            raise TaskError(
                f"the cached folder of task '{pin.task_id}' changed while it was frozen", file=str(folder),
                fix="run again; the cache entry is fetched afresh when it does not match its fingerprints",
            )
        pins.append(pin)
    rd.remote_pins.parent.mkdir(parents=True, exist_ok=True)
    write_pins(pins, rd.remote_pins)
    if remote.dataset is not None:
        write_dataset_pin(remote.dataset, rd.remote_dataset)


def frozen_pins(rd: RunDir) -> "list[TaskPin]":
    """The pins a run froze (never resolved again); a missing or broken file is refused."""
    from ..tasks import read_pins

    try:
        return read_pins(rd.remote_pins)
    except (OSError, ValueError) as exc:
        raise RunDirError(
            f"the run's task pins cannot be read: {exc}", file=str(rd.remote_pins),
            fix="the run directory is incomplete; start a new run from the config",
        ) from None


def task_sources(rd: RunDir, ev: Evaluation) -> dict[str, Path]:
    """Task id → the folder preparation freezes from: ``tasks.source/<id>``, or for links the
    run's own fetched copy."""
    if ev.tasks.remote:
        return {pin.task_id: rd.remote_task(pin.task_id) for pin in frozen_pins(rd)}
    source = Path(ev.tasks.source or "")
    return {tid: source / tid for tid in ev.tasks.ids or []}
