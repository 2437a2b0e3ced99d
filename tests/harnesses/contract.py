"""The harness contract: what every adapter behind the Harness port must do.

Subclasses provide ``make_harness(probe_url)`` and ``model``; the suite drives each one
through the real attempt pipeline (fresh local sandbox, private delivery, canonical
patch) so the controls and the real CLIs are held to the same promises.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pluginbench.actors._pipeline import code_attempt
from pluginbench.environments import LocalEnvironment
from pluginbench.harnesses import FrozenTreatment, Harness
from pluginbench.probe import SCENARIOS_DIR, ProbeServer, load_scenario
from pluginbench.tasks import load_task

MARKER = "PLUGINBENCH-CONTRACT-GUIDANCE"
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"


def _guided(tmp: Path) -> FrozenTreatment:
    g = tmp / "pkg" / "guidance" / "00-core.md"
    g.parent.mkdir(parents=True)
    g.write_text(f"# Contract guidance\n{MARKER}\n")
    return FrozenTreatment("guided", tmp / "pkg", (g,), (), (), "fp-guided")


VANILLA = FrozenTreatment("vanilla", None, (), (), (), "fp-vanilla")


class HarnessContract:
    """Every harness: private delivery, a recorded launch, honest usage, clean repository."""

    model: str | None = None
    scenario = "text"
    #: controls (nop, oracle) ignore treatments by definition; agents must deliver them
    delivers_guidance = True

    def make_harness(self, probe_url: str | None) -> Harness:
        raise NotImplementedError

    @pytest.fixture
    def probe(self) -> Iterator[str]:
        with ProbeServer(load_scenario(SCENARIOS_DIR / f"{self.scenario}.yaml")) as server:
            yield server.base_url

    async def _attempt(self, tmp: Path, probe: str, treatment: FrozenTreatment) -> tuple[Any, list[list[str]], Path]:
        harness = self.make_harness(probe)
        task = load_task(TASKS / "add-numbers", "add-numbers")
        launches: list[list[str]] = []

        async def launched(argv: object) -> None:
            launches.append([str(a) for a in argv])  # type: ignore[attr-defined]

        result = await code_attempt(
            environment=LocalEnvironment(isolation="auto"), harness=harness, run_id="contract",
            attempt_id=f"c-{treatment.arm}", task=task, starting_source=task.workspace_dir, treatment=treatment,
            attempt_dir=tmp / f"attempt-{treatment.arm}", model=self.model, reasoning="low", seed=1,
            timeout=120, hidden=(), launched=launched,
        )
        return result, launches, tmp / f"attempt-{treatment.arm}"

    def test_vanilla_delivery_declares_nothing(self, tmp_path: Path) -> None:
        """Delivering vanilla writes no memory file, skill or plugin into the private home."""
        home = tmp_path / "home"
        home.mkdir()
        self.make_harness(None if self.model is None else "http://127.0.0.1:9").deliver(VANILLA, home)
        names = {p.name for p in home.rglob("*")}
        assert not names & {"CLAUDE.md", "AGENTS.md", "SKILL.md"}

    @pytest.mark.anyio
    async def test_one_recorded_launch_and_honest_usage(self, tmp_path: Path, probe: str) -> None:
        """The agent launch is recorded once, before it runs; usage is measured or unknown with a reason, never a silent 0."""
        result, launches, _ = await self._attempt(tmp_path, probe, VANILLA)
        assert len(launches) == 1 and launches[0]
        usage = result.run.usage
        assert usage.status in ("exact", "lower_bound", "unknown")
        if usage.status == "unknown":
            assert usage.reason and usage.input_tokens is None and usage.output_tokens is None
        else:
            assert usage.input_tokens is not None and usage.input_tokens >= 0
            assert usage.output_tokens is not None and usage.output_tokens >= 0

    @pytest.mark.anyio
    async def test_guidance_stays_private_and_out_of_the_repository(self, tmp_path: Path, probe: str) -> None:
        """Guidance is delivered into the private home and never appears in the patch or the exported tree."""
        result, _, attempt = await self._attempt(tmp_path, probe, _guided(tmp_path))
        delivered = [p for p in (attempt / "delivery").rglob("*") if p.is_file() and MARKER in p.read_text(errors="replace")]
        assert bool(delivered) == self.delivers_guidance, delivered
        assert result.patch is not None
        assert MARKER not in result.patch.path.read_text(errors="replace")
        for p in (attempt / "export").rglob("*"):
            if p.is_file():
                assert MARKER not in p.read_text(errors="replace"), p
