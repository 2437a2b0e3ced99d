"""A toy execution backend that lives only in the tests: the proof that a backend is its
module plus one registration (``register_backend(ToyBackend())``), with no other file of
the package changed.

Its sandboxes are the local backend's unisolated ones, wrapped: every sandbox it makes is
appended to a journal named in its own settings block (``environment.settings.journal``),
and a marker file under ``<journal>.live/`` exists while the sandbox lives, which is what
its ``left_running`` lists.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec

from pluginbench.config import Evaluation
from pluginbench.environments import Backend, LeftRunning, LocalEnvironment, Sandbox, SandboxSpec


class ToySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``environment.settings`` of the toy backend."""

    #: a file every sandbox is appended to as ``run attempt role``
    journal: str
    #: a label that only goes into the readiness key (to test that the backend owns it)
    flavour: str = "plain"


class ToyEnvironment:
    """Local unisolated sandboxes that leave a journal line and a live marker."""

    name = "toy"

    def __init__(self, journal: Path) -> None:
        self.journal = Path(journal)
        self.inner = LocalEnvironment(isolation="none")

    async def check(self) -> None:
        await self.inner.check()

    @asynccontextmanager
    async def sandbox(self, spec: SandboxSpec) -> AsyncIterator[Sandbox]:
        with self.journal.open("a", encoding="utf-8") as fh:
            fh.write(f"{spec.run_id} {spec.attempt_id} {spec.role}\n")
        live = live_marker(self.journal, spec.run_id, spec.attempt_id)
        live.parent.mkdir(parents=True, exist_ok=True)
        live.touch()
        try:
            async with self.inner.sandbox(spec) as sb:
                yield sb
        finally:
            live.unlink(missing_ok=True)

    async def stop_left_running(self, run_id: str) -> list[str]:
        gone = await self.inner.stop_left_running(run_id)
        for marker in sorted(live_folder(self.journal).glob(f"{run_id}--*")):
            marker.unlink()
            gone.append(f"toy sandbox {marker.name}")
        return gone


def live_folder(journal: Path) -> Path:
    return journal.with_name(journal.name + ".live")


def live_marker(journal: Path, run_id: str, attempt_id: str) -> Path:
    return live_folder(journal) / f"{run_id}--{attempt_id}"


class ToyBackend(Backend):
    """The toy backend's port adapter."""

    name = "toy"
    summary = "a test-only backend: local unisolated sandboxes with a journal"
    settings_type = ToySettings
    needs_workspace = True
    uses_images = False

    def __init__(self) -> None:
        #: the journals of environments made so far (left_running reads their markers)
        self.journals: set[Path] = set()

    def environment(self, **options: Any) -> ToyEnvironment:
        env = ToyEnvironment(**options)
        self.journals.add(env.journal)
        return env

    def options(self, ev: Evaluation, run_id: str) -> dict[str, Any]:
        return {"journal": Path(self.settings(ev).journal)}

    def isolation(self, ev: Evaluation) -> str:
        return "none"

    def isolated(self, ev: Evaluation) -> bool:
        return False

    def readiness_key(self, ev: Evaluation) -> list[str]:
        return [self.name, self.isolation(ev), self.settings(ev).flavour]

    def left_running(self, run_id: str) -> LeftRunning:
        folders = sorted(str(m) for j in self.journals for m in live_folder(j).glob(f"{run_id}--*"))
        return LeftRunning(folders=folders)
