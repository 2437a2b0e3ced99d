"""A second evaluation reuses the first one's vanilla attempts through the shared cache
(simulated harness, local backend, real sandboxes and verifier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.actors import Supervisor, build_engine, create_run, load_saved
from pluginbench.config import load
from pluginbench.events import EventLog
from pluginbench.projections import Ledger, fold
from pluginbench.rundir import RunDir
from pluginbench.status import status_snapshot
from tests.runs_helpers import events_of, write_config

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache root with the vanilla cache switched on."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PLUGINBENCH_VANILLA_CACHE", raising=False)
    return tmp_path / "xdg" / "pluginbench"


async def drive(run_dir: Path) -> object:
    rd = RunDir(run_dir)
    saved = load_saved(rd)
    log = EventLog(rd.events)
    state = fold(log.recovered)
    ledger = Ledger(rd.ledger)
    engine = build_engine(rd, saved.evaluation, None)
    try:
        return await Supervisor(engine, log, ledger, state, handle_signals=False).run(resumed=state.workers > 0)
    finally:
        log.close()
        ledger.close()


def _config(tmp: Path, **extra: object) -> Path:
    folder = tmp / "cfg"
    folder.mkdir(exist_ok=True)
    return write_config(folder, tasks=["roman-numerals"], repeats=2, environment={"isolation": "none"}, **extra)


def _types(run: Path, kind: str) -> list[dict[str, object]]:
    return [e for e in events_of(run) if e["type"] == kind]


async def _evaluate(tmp: Path, name: str, **extra: object) -> tuple[Path, object]:
    rd = create_run(load(_config(tmp, **extra)), tmp / name)
    state = await drive(rd.root)
    return rd.root, state


async def test_a_second_run_reuses_every_vanilla_attempt_and_codes_none(tmp_path: Path, cache: Path) -> None:
    """Run 1 codes and publishes both vanilla repeats; run 2 imports them (attempt.reused), launches no vanilla agent, regrades them, and codes only the treatment."""
    first, s1 = await _evaluate(tmp_path, "run1")
    assert s1.finished  # type: ignore[attr-defined]
    cached = _types(first, "attempt.cached")
    assert sorted(e["entry"].rsplit("/", 1)[1] for e in cached) == ["1", "2"]
    assert all(e["entry"].startswith("vanilla/simulated-") for e in cached)
    assert all((cache / e["entry"] / "entry.json").is_file() for e in cached)

    second, s2 = await _evaluate(tmp_path, "run2")
    assert s2.finished  # type: ignore[attr-defined]
    reused = _types(second, "attempt.reused")
    assert sorted(e["attempt_id"] for e in reused) == ["roman-numerals__vanilla__r1", "roman-numerals__vanilla__r2"]
    launched = [e["attempt_id"] for e in _types(second, "agent.launched")]
    assert launched and not any("__vanilla__" in a for a in launched)
    graded = {e["attempt_id"] for e in _types(second, "attempt.graded")}
    assert {"roman-numerals__vanilla__r1", "roman-numerals__vanilla__r2"} <= graded
    # the same coding facts as the origin: patch and usage
    origin = {e["attempt_id"]: e for e in _types(first, "submission.captured")}
    for e in reused:
        assert e["patch_sha256"] == origin[e["attempt_id"]]["patch_sha256"]
        assert e["origin_cohort"] == cached[0]["entry"].rsplit("/", 1)[0]
        assert (second / "evidence" / "attempts" / e["attempt_id"] / "reused.json").is_file()
        current = json.loads((second / "evidence" / "attempts" / e["attempt_id"] / "execution-current.json").read_text())
        assert current["revalidated"] is False and current["usage"] == e["usage"]  # the simulated agent has no validator
    snap = status_snapshot(second)
    assert snap["reuse"] == {"vanilla_attempts": 2, "planned_hits": 2, "reused": 2}
    assert snap["arms"]["vanilla"]["reused"] == 2
    treatment_total = sum(r["tokens"] for r in snap["attempts"] if r["arm"] != "vanilla")
    assert snap["tokens"]["total_tokens"] == treatment_total  # reused tokens excluded from what this run spent
    assert snap["arms"]["vanilla"]["tokens"]["total_tokens"] > 0  # but counted per arm
    results = json.loads((second / "report" / "results.json").read_text())
    assert results  # the report was built from the regraded reused attempts


async def test_a_corrupt_entry_is_skipped_and_that_repeat_is_coded_fresh(tmp_path: Path, cache: Path) -> None:
    """An entry whose saved patch was altered fails admission: that repeat is coded again, the other is reused."""
    first, _ = await _evaluate(tmp_path, "run1")
    entries = {e["attempt_id"]: e["entry"] for e in _types(first, "attempt.cached")}
    patch = cache / entries["roman-numerals__vanilla__r1"] / "attempt" / "model.patch"
    patch.write_bytes(patch.read_bytes() + b"\n# tampered\n")
    second, s2 = await _evaluate(tmp_path, "run2")
    assert s2.finished  # type: ignore[attr-defined]
    (checked,) = _types(second, "vanilla_cache.checked")
    decisions = {d["repeat"]: d for d in checked["decisions"]}
    assert decisions[1]["decision"] == "rejected" and "model.patch" in decisions[1]["reason"]
    assert decisions[2]["decision"] == "hit"
    launched = {e["attempt_id"] for e in _types(second, "agent.launched")}
    assert "roman-numerals__vanilla__r1" in launched and "roman-numerals__vanilla__r2" not in launched


async def test_settings_in_the_key_miss_and_guidance_does_not(tmp_path: Path, cache: Path) -> None:
    """Another seed misses the cohort; another treatment's guidance still hits it."""
    await _evaluate(tmp_path, "run1")
    other_seed, _ = await _evaluate(tmp_path, "run2", seed=11)
    assert not _types(other_seed, "attempt.reused")
    g = tmp_path / "other-guidance.md"
    g.write_text("Write small functions.\n")
    other_guidance, _ = await _evaluate(tmp_path, "run3", treatments={"other": {"guidance": [str(g)]}})
    assert len(_types(other_guidance, "attempt.reused")) == 2


async def test_opting_out_neither_reads_nor_publishes(tmp_path: Path, cache: Path) -> None:
    """runner.vanilla_cache: false codes vanilla afresh and publishes nothing."""
    await _evaluate(tmp_path, "run1")
    cfg = _config(tmp_path)
    import yaml

    data = yaml.safe_load(cfg.read_text())
    data["runner"]["vanilla_cache"] = False
    cfg.write_text(yaml.safe_dump(data))
    rd = create_run(load(cfg), tmp_path / "run2")
    await drive(rd.root)
    assert not _types(rd.root, "attempt.reused")
    assert not _types(rd.root, "vanilla_cache.checked")
    assert not _types(rd.root, "attempt.cached")


async def test_plan_check_and_report_name_hits_and_origin_cohorts(tmp_path: Path, cache: Path) -> None:
    """run --dry-run --json and check print hit/miss per vanilla attempt before the second run; its report names each reused attempt and its origin cohort."""
    from typer.testing import CliRunner

    from pluginbench.cli import app

    cli = CliRunner()
    config = _config(tmp_path)
    before = json.loads(cli.invoke(app, ["run", str(config), "--dry-run", "--json"]).output)["vanilla_cache"]
    assert [a["decision"] for a in before["attempts"]] == ["miss", "miss"]
    first, _ = await _evaluate(tmp_path, "run1")
    plan = cli.invoke(app, ["run", str(config), "--dry-run", "--json"])
    after = json.loads(plan.output)["vanilla_cache"]
    assert [a["decision"] for a in after["attempts"]] == ["hit", "hit"] and after["planned_hits"] == 2
    cohort = after["attempts"][0]["cohort"]
    assert cohort.startswith("vanilla/") and not cohort.startswith("/")
    text = cli.invoke(app, ["check", str(config), "--no-readiness", "--verbose"]).output
    assert "roman-numerals__vanilla__r1: hit" in text and "2 of 2 vanilla attempts hit" in text
    second, _ = await _evaluate(tmp_path, "run2")
    results = json.loads((second / "report" / "results.json").read_text())
    reused = results["reused_attempts"]
    assert [r["attempt_id"] for r in reused] == ["roman-numerals__vanilla__r1", "roman-numerals__vanilla__r2"]
    assert {r["origin_cohort"] for r in reused} == {cohort}
    # The reused vanilla attempts made no call in this run: only the treatment's sessions count.
    calls = results["actual_calls"]
    assert calls["by_arm"]["vanilla"] == 0 and calls["coding_sessions"] == sum(calls["by_arm"].values()) > 0
    assert any("reused from the vanilla cache" in n for n in results["notes"])
    html = (second / "report" / "report.html").read_text()
    assert 'id="reused-table"' in html and cohort in html
    resumed = json.loads(cli.invoke(app, ["run", str(second), "--dry-run", "--json"]).output)["vanilla_cache"]
    assert [a["decision"] for a in resumed["attempts"]] == ["hit", "hit"]
    status = cli.invoke(app, ["status", str(second)]).output
    assert "2 of 2 vanilla attempts reused" in status


async def test_dry_run_of_a_run_directory_labels_recorded_decisions_and_counts_resume_work(tmp_path: Path, cache: Path) -> None:
    """run <run-dir> --dry-run says its cache lines are what preparation decided (a finished run's own misses stay misses) and counts the resume work in words, not a Python dict."""
    from typer.testing import CliRunner

    from pluginbench.cli import app

    first, _ = await _evaluate(tmp_path, "run1")
    text = CliRunner().invoke(app, ["run", str(first), "--dry-run"]).output
    flat = " ".join(text.split())
    assert "vanilla cache (as decided when the run prepared): 0 of 2 vanilla attempts hit" in flat, text
    assert "resume: 4 complete (never coded again), 0 to code" in flat, text
    assert "{'" not in text
