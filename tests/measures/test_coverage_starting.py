"""The starting source's coverage report is computed once per task and run: concurrent
collectors share one run of the command, a published report is reused, a folder a killed
collection left behind is never read, and another profile gets its own report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.measures import CoverageProfile
from pluginbench.measures._coverage_starting import starting_key, starting_report

FIXTURE = Path(__file__).parents[1] / "data" / "coverage" / "pyrepo" / "base"


@pytest.fixture
def starting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("coverage")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    src = tmp_path / "start"
    shutil.copytree(FIXTURE, src)
    subprocess.run(["git", "init", "-q"], cwd=src, check=True)
    return src


def _profile(counter: Path, report: str = "coverage.json") -> CoverageProfile:
    """The fixture's coverage command, counting its runs in ``counter`` (outside the sandbox)."""
    return CoverageProfile(command=["sh", "-c", f"echo run >> {counter}; sh coverage.sh"], report_path=report,
                           format="coverage-py-json", tool_version="7.17.3")


@pytest.mark.anyio
async def test_concurrent_collectors_share_one_starting_run_and_later_ones_reuse_it(starting: Path,
                                                                                    tmp_path: Path) -> None:
    """Three collectors of one task asking at once run the command once; the report is published as
    evidence (raw report and parsed report.json) and a fourth call reuses it without running it."""
    env = LocalEnvironment(isolation="none")
    counter = tmp_path / "runs.txt"
    profile = _profile(counter)
    shared = tmp_path / "shared"
    key = starting_key("pyrepo", str(starting), profile, "2")

    def opener():  # type: ignore[no-untyped-def]
        return env.sandbox(SandboxSpec(run_id="t", attempt_id="cov", role="readiness", task="pyrepo",
                                       workspace=starting))

    got: list[tuple[object, Path, bool]] = []

    async def one() -> None:
        got.append(await starting_report(opener, starting, profile, shared, key))

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(one)
    assert counter.read_text().count("run") == 1
    assert sorted(reused for _, _, reused in got) == [False, True, True]
    assert len({r.files["calc/core.py"].executable for r, _, _ in got}) == 1  # type: ignore[attr-defined]
    folder = got[0][1]
    assert folder == shared / f"starting-{key}" and (folder / "report.raw").is_file() and (folder / "report.json").is_file()
    again, _, reused = await starting_report(opener, starting, profile, shared, key)
    assert reused and again == got[0][0] and counter.read_text().count("run") == 1
    assert [p.name for p in shared.iterdir()] == [folder.name], "no partial folder is left after success"


@pytest.mark.anyio
async def test_a_killed_collection_is_never_read_and_another_profile_gets_its_own_report(starting: Path,
                                                                                         tmp_path: Path) -> None:
    """A partial folder a killed worker left (no report.json, not renamed) is ignored and the report is
    computed again; a profile with another report path has another key and its own run."""
    env = LocalEnvironment(isolation="none")
    counter = tmp_path / "runs.txt"
    profile = _profile(counter)
    shared = tmp_path / "shared"
    key = starting_key("pyrepo", str(starting), profile, "2")
    killed = shared / f".starting-{key}.deadbeef.partial"
    killed.mkdir(parents=True)
    (killed / "report.raw").write_text("{torn")
    (shared / f"starting-{key}").mkdir()  # a folder without report.json is not a published report

    def opener():  # type: ignore[no-untyped-def]
        return env.sandbox(SandboxSpec(run_id="t", attempt_id="cov", role="readiness", task="pyrepo",
                                       workspace=starting))

    report, folder, reused = await starting_report(opener, starting, profile, shared, key)
    assert not reused and counter.read_text().count("run") == 1 and "calc/core.py" in report.files
    assert folder == shared / f"starting-{key}" and (folder / "report.json").is_file()
    other = _profile(counter, report="lcov-unused.json")
    assert starting_key("pyrepo", str(starting), other, "2") != key
    assert starting_key("pyrepo", str(starting), profile, "3") != key
