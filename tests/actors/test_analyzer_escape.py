"""Repository code never runs on the host: an agent's ``build.rs`` and ``knip.config.js``
(which ``cargo check`` and knip execute) run only inside the analysis sandbox, also when a
second run reuses the attempt from the vanilla cache and measures it again.

The simulated agent (local backend, bubblewrap) submits the escape patches of
``tests/data/escape-tasks`` with ``@MARKER@`` set to a host path in this test's folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from pluginbench.actors import create_run
from pluginbench.config import load
from pluginbench.measures._deadcode_scan import cargo_status
from pluginbench.measures._js_analyzers import tool_status
from tests._prereq import require
from tests.cache.test_reuse_runs import drive
from tests.runs_helpers import events_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ESCAPE = Path(__file__).resolve().parents[1] / "data" / "escape-tasks"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tasks(tmp: Path) -> tuple[Path, dict[str, Path]]:
    """The escape tasks with their patches filled in; the host marker paths by task."""
    source = tmp / "tasks"
    shutil.copytree(ESCAPE, source, ignore=shutil.ignore_patterns("README.md"))
    markers = {}
    for task in ("crate-build", "js-config"):
        markers[task] = tmp / f"{task}.marker"
        sim = source / task / "simulated"
        text = (sim / "escape.patch.in").read_text()
        (sim / "escape.patch").write_text(text.replace("@MARKER@", str(markers[task])))
        (sim / "escape.patch.in").unlink()
    return source, markers


def _config(tmp: Path, source: Path, name: str, backend: str) -> Path:
    import yaml

    folder = tmp / f"cfg-{name}"
    folder.mkdir()
    path = folder / "evaluation.yaml"
    path.write_text(yaml.safe_dump({
        "name": "analyzer-escape", "tasks": {"source": str(source), "ids": ["crate-build", "js-config"]},
        "treatments": {}, "runner": {"harness": "simulated", "model": "simulated-1"}, "repeats": 1, "jobs": 1,
        "seed": 5, "timeout_seconds": 120,
        "environment": {"backend": "docker"} if backend == "docker" else {"isolation": "bubblewrap"},
        "measurements": ["tokens", "lines", "cyclomatic", "dead_code"],
    }))
    return path


def _measures(run: Path) -> dict[str, dict[str, object]]:
    doc = json.loads((run / "report" / "results.json").read_text())
    return {a["task"]: a["measures"] for a in doc["attempts"]}


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
async def test_build_scripts_and_analyzer_configs_run_only_in_the_sandbox(tmp_path: Path, backend: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A submission whose build.rs and knip.config.js write a host file leaves no file on the host, though cargo
    check and knip measured it (in their bubblewrap sandbox; on docker in a container of the frozen image, which
    lacks the tools, so the values are unknown with that reason); a second run that reuses it from the vanilla cache
    and measures it again leaves none either."""
    if backend == "docker":
        require(shutil.which("docker") is not None and subprocess.run(
            ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0,
            "docker engine and pluginbench/base:bookworm")
    else:
        require(shutil.which("bwrap") is not None, "bubblewrap")
    require(cargo_status()[0] is not None, "cargo on PATH (the machine's Rust toolchain)")
    for tool in ("knip", "jscpd"):
        require(tool_status(tool)[0] is not None, f"{tool} (tools/install-analyzers.sh)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PLUGINBENCH_VANILLA_CACHE", raising=False)
    source, markers = _tasks(tmp_path)
    for name in ("run1", "run2"):
        # creating a docker run checks the engine with its own event loop: not inside this one
        rd = await anyio.to_thread.run_sync(create_run, load(_config(tmp_path, source, name, backend)), tmp_path / name)
        state = await drive(rd.root)
        assert state.finished  # type: ignore[attr-defined]
        assert [p for p in markers.values() if p.exists()] == [], f"{name}: repository code ran on the host"
        got = _measures(rd.root)
        crate, js = got["crate-build"], got["js-config"]
        values = [crate["dead_code_candidates_added"], js["dead_code_candidates_added"], js["duplicate_groups_added"]]
        if backend == "docker":  # the frozen image carries no cargo, knip or jscpd: unknown, never run on the host
            assert all(v["status"] == "unknown" and "not in the analysis sandbox" in v["reason"] for v in values), values
            continue
        # the analyzers did run (in the sandbox) and measured the submission
        assert [(v["status"], v["value"]) for v in values] == [("measured", 0), ("measured", 0), ("measured", 0)], values
    reused = [e["attempt_id"] for e in events_of(tmp_path / "run2") if e["type"] == "attempt.reused"]
    assert sorted(reused) == ["crate-build__vanilla__r1", "js-config__vanilla__r1"]
