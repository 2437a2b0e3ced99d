"""The collector pool: up to ``jobs`` collections run at once (a slow collector such as
coverage no longer makes the others queue behind it), and every attempt's measures are the
same as when one collection runs at a time."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from pluginbench import measures
from pluginbench.actors import create_run
from pluginbench.config import load
from pluginbench.events import Measure
from pluginbench.measures import CollectorInput, Column, MeasureSpec
from tests.actors.test_supervisor import _drive
from tests.runs_helpers import write_config

INSIDE: set[str] = set()
#: how long a collection waits for another to be inside at the same time (generous; it returns as
#: soon as one is: a pool of one never has a partner, so the run then just takes this long)
PARTNER_WAIT = {"seconds": 120.0}


async def _overlapping(inp: CollectorInput) -> dict[str, Measure]:
    """A slow collection: it stays inside until another collection is inside too (or the wait ends),
    and reports how many it saw inside at once."""
    INSIDE.add(inp.attempt_id)
    seen = len(INSIDE)
    with anyio.move_on_after(PARTNER_WAIT["seconds"]):
        while seen < 2:
            await anyio.sleep(0.05)
            seen = max(seen, len(INSIDE))
    await anyio.sleep(0.2)  # the partner sees this one inside as well
    INSIDE.discard(inp.attempt_id)
    return {"toy_overlap": Measure(value=seen, unit="collections")}


OVERLAP = MeasureSpec(
    name="toy_overlap", description="How many collections were inside at once.",
    columns=(Column("toy_overlap", "collections", "overlap", "Collections inside at once."),),
    observer_version="1", collect=_overlapping)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _measures(tmp: Path, jobs: int) -> dict[str, dict[str, object]]:
    tmp.mkdir(parents=True)
    config = write_config(tmp, harness="simulated", tasks=["roman-numerals"], repeats=2, jobs=jobs,
                          environment={"isolation": "none"},
                          measurements=["tokens", "lines", "cyclomatic", "cognitive", "toy_overlap"])
    rd = create_run(load(config), tmp / "run")
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    doc = json.loads((rd.report_dir / "results.json").read_text())
    return {r["attempt_id"]: r["measures"] for r in doc["attempts"]}


@pytest.mark.slow  # two whole evaluations (~25 s)
@pytest.mark.anyio
async def test_two_slow_collections_overlap_and_give_the_sequential_results(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """With jobs 2 two slow collections are inside at the same time; the same evaluation with jobs 1
    (one collection at a time) gives every attempt the same lines and complexity values."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    INSIDE.clear()
    with measures.registered(OVERLAP):
        pooled = await _measures(tmp_path / "pooled", jobs=2)
        monkeypatch.setitem(PARTNER_WAIT, "seconds", 0.0)
        sequential = await _measures(tmp_path / "sequential", jobs=1)
    assert len(pooled) == 4 and pooled.keys() == sequential.keys()
    assert max(m["toy_overlap"]["value"] for m in pooled.values()) == 2  # type: ignore[index]
    assert {m["toy_overlap"]["value"] for m in sequential.values()} == {1}  # type: ignore[index]
    for attempt_id, got in pooled.items():
        same = {k: v for k, v in got.items() if k not in ("toy_overlap", "coding_seconds")}
        want = {k: v for k, v in sequential[attempt_id].items() if k not in ("toy_overlap", "coding_seconds")}
        assert same == want, attempt_id
    assert any(m["cyclomatic_added"]["value"] for m in pooled.values())  # type: ignore[index]
