"""The Supervisor and its actors end to end on real local sandboxes, under asyncio and trio."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.actors import Supervisor, build_engine, create_run, load_saved
from pluginbench.config import load
from pluginbench.events import EventLog
from pluginbench.projections import Ledger, fold
from pluginbench.rundir import RunDir
from tests.runs_helpers import write_config


async def _drive(run_dir: Path) -> object:
    rd = RunDir(run_dir)
    saved = load_saved(rd)
    log = EventLog(rd.events)
    state = fold(log.recovered)
    ledger = Ledger(rd.ledger)
    engine = build_engine(rd, saved.evaluation, None)
    try:
        return await Supervisor(engine, log, ledger, state, handle_signals=False).run(resumed=False)
    finally:
        log.close()
        ledger.close()


@pytest.mark.anyio
@pytest.mark.parametrize("harness, expected", [("nop", {"empty"}), ("oracle", {"pass"})])
async def test_controls_run_to_completion(tmp_path: Path, harness: str, expected: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """nop leaves every patch empty and oracle passes every task, through the same path real agents take."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = write_config(tmp_path, harness=harness, tasks=["roman-numerals"], repeats=1, environment={"isolation": "none"})
    rd = create_run(load(config), tmp_path / "run")
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    outcomes = {a.outcome for a in state.live_attempts()}  # type: ignore[attr-defined]
    assert outcomes == expected
    assert (rd.report_dir / "report.html").is_file()
    readiness = {(r.task, r.control): r.ok for r in state.readiness.values()}  # type: ignore[attr-defined]
    assert readiness == {("roman-numerals", "oracle"): True, ("roman-numerals", "nop"): True}


@pytest.mark.anyio
async def test_collect_commands_run_and_only_the_canonical_patch_reaches_the_verifier(tmp_path: Path) -> None:
    """[[verifier.collect]] runs after the agent and its output is kept as evidence, but the separate verifier's
    /logs/artifacts holds only the canonical patch PluginBench made (issue 20: nothing the agent's sandbox wrote)."""
    from tests._prereq import require

    require(__import__("shutil").which("bwrap") is not None, "bubblewrap")
    source = tmp_path / "tasks"
    t = source / "collect"
    for d in ("workspace", "tests", "solution"):
        (t / d).mkdir(parents=True)
    (t / "workspace" / "a.txt").write_text("a\n")
    (t / "instruction.md").write_text("Create b.txt.\n")
    (t / "task.toml").write_text(
        'schema_version = "1.4"\n[[verifier.collect]]\n'
        'command = "echo collected-$(cat /app/b.txt) > /logs/artifacts/note.txt"\ntimeout_sec = 30\n'
    )
    test = t / "tests" / "test.sh"
    test.write_text(
        '#!/bin/sh\nif [ ! -e "$LOGS_DIR/artifacts/note.txt" ] && grep -q "b.txt" "$LOGS_DIR/artifacts/model.patch"; '
        'then echo 1; else echo 0; fi > "$LOGS_DIR/verifier/reward.txt"\n'
    )
    test.chmod(0o755)
    solve = t / "solution" / "solve.sh"
    solve.write_text('#!/bin/sh\necho b > "$APP_DIR/b.txt"\n')
    solve.chmod(0o755)
    import yaml

    cfg = tmp_path / "evaluation.yaml"
    cfg.write_text(yaml.safe_dump({"tasks": {"source": str(source), "ids": ["collect"]}, "treatments": {},
                                   "runner": {"harness": "oracle"}, "repeats": 1,
                                   "environment": {"isolation": "bubblewrap"}}))
    rd = create_run(load(cfg), tmp_path / "run")
    state = await _drive(rd.root)
    (attempt,) = list(state.live_attempts())  # type: ignore[attr-defined]
    assert attempt.outcome == "pass"
    assert (rd.attempt(attempt.attempt_id) / "artifacts" / "note.txt").read_text() == "collected-b\n"
