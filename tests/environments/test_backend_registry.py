"""The backend registry: a toy backend registered from inside the tests runs a whole nop
evaluation and passes the backend contract (local and docker inherit it in their own test
modules); an unknown backend is a config error (exit 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pluginbench.actors import create_run, load_config, load_saved, run_worker
from pluginbench.environments import LocalSandbox, get_backend, register_backend, unregister_backend
from pluginbench.errors import ConfigError
from pluginbench.rundir import RunDir
from pluginbench.status import status_snapshot
from tests.cli._cli_helpers import assert_refused, run_cli
from tests.environments.contract import BackendContract
from tests.environments.toy_backend import ToyBackend
from tests.runs_helpers import events_of, write_config


@pytest.fixture
def toy() -> Iterator[ToyBackend]:
    """The toy backend, registered for one test (the one registration it needs)."""
    backend = ToyBackend()
    register_backend(backend)
    try:
        yield backend
    finally:
        unregister_backend("toy")


class _FolderOwned:
    """owned/released for backends whose sandboxes are host folders."""

    def owned(self, sb: LocalSandbox) -> Path:
        return sb.root

    def assert_released(self, owned: Path) -> None:
        assert not owned.exists(), f"{owned} was not removed"


class TestToyBackendContract(_FolderOwned, BackendContract):
    """The backend contract (and the environment contract under it) on the toy backend."""

    backend_name = "toy"

    @pytest.fixture(autouse=True)
    def _registered(self, toy: ToyBackend) -> None:
        pass

    def backend_settings(self, tmp_path: Path) -> dict[str, Any]:
        return {"journal": str(tmp_path / "toy-journal.txt")}


def _toy_config(tmp_path: Path, harness: str = "nop", **settings: Any) -> Path:
    journal = tmp_path / "journal.txt"
    return write_config(tmp_path, harness=harness, tasks=["roman-numerals"], repeats=1, treatments={},
                        environment={"backend": "toy", "settings": {"journal": str(journal), **settings}})


def test_a_whole_nop_evaluation_runs_through_a_registered_toy_backend(
        tmp_path: Path, toy: ToyBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend registered from the tests runs a whole nop evaluation: every sandbox
    (readiness, coding, verifier) is the toy's, its settings block reached it, the run
    records it, and the nop attempt ends with an empty patch."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = _toy_config(tmp_path)
    rd = create_run(load_config(config), tmp_path / "run")
    state = run_worker(rd.root, handle_signals=False)
    assert state.finished
    assert {a.outcome for a in state.live_attempts()} == {"empty"}
    readiness = {(r.task, r.control): r.ok for r in state.readiness.values()}
    assert readiness == {("roman-numerals", "oracle"): True, ("roman-numerals", "nop"): True}
    journal = [line.split() for line in (tmp_path / "journal.txt").read_text().splitlines()]
    attempt = next(iter(state.live_attempts())).attempt_id
    assert {role for run, aid, role in journal if run == rd.run_id and aid == attempt} == {"coding", "verifier"}
    assert len([line for line in journal if line[0] == rd.run_id]) > 2, "readiness controls ran elsewhere"
    created = next(e for e in events_of(rd.root) if e["type"] == "run.created")
    assert (created["backend"], created["isolation"]) == ("toy", "none")
    results = json.loads((rd.report_dir / "results.json").read_text())
    assert (results["run"]["backend"], results["run"]["isolated"]) == ("toy", False)


def test_status_asks_the_toy_backend_what_was_left_running(
        tmp_path: Path, toy: ToyBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """Status reaches a run's backend only through the port: a toy sandbox marker left by a
    killed worker is what status lists for a toy run, and nothing once it is gone."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load_config(_toy_config(tmp_path)), tmp_path / "run")
    toy.make(load_config(_toy_config(tmp_path)).evaluation, rd.run_id)  # the journal status will look in
    marker = tmp_path / "journal.txt.live" / f"{rd.run_id}--t.vanilla.0"
    marker.parent.mkdir(parents=True)
    marker.touch()
    left = status_snapshot(rd.root)["left_running"]
    assert left["checked"] is True and left["folders"] == [str(marker)] and left["containers"] == []
    marker.unlink()
    assert status_snapshot(rd.root)["left_running"]["folders"] == []


def test_an_unknown_backend_is_a_config_error_exit_2(tmp_path: Path) -> None:
    """`check` and `run --dry-run` refuse an unregistered backend with exit 2, naming
    environment.backend and the registered backends; nothing is created."""
    config = write_config(tmp_path, harness="nop", tasks=["roman-numerals"],
                          environment={"backend": "kubernetes"})
    for args in (("check", str(config), "--no-readiness"), ("run", str(config), "--dry-run")):
        code, output = run_cli(*args)
        assert_refused(code, output, "unknown environment backend 'kubernetes'", "field: environment.backend",
                       "local", "docker")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evaluation.yaml"]


def test_a_backend_settings_block_is_checked_by_its_backend(tmp_path: Path, toy: ToyBackend) -> None:
    """A misspelt key in environment.settings is refused by the selected backend's own type
    (exit 2, the dotted field), and a backend without settings refuses any block."""
    code, output = run_cli("check", str(_toy_config(tmp_path, jurnal="x")), "--no-readiness")
    assert_refused(code, output, "toy backend settings", "field: environment.settings")
    local = write_config(tmp_path, harness="nop", tasks=["roman-numerals"],
                         environment={"backend": "local", "settings": {"journal": "x"}})
    code, output = run_cli("check", str(local), "--no-readiness")
    assert_refused(code, output, "the local backend takes no environment.settings", "field: environment.settings")


def test_a_saved_run_of_an_unregistered_backend_is_a_config_error(
        tmp_path: Path, toy: ToyBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resuming a run whose backend is no longer registered says so as a config error
    (exit 2) naming the saved evaluation.json, instead of failing inside the worker."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load_config(_toy_config(tmp_path)), tmp_path / "run")
    unregister_backend("toy")
    with pytest.raises(ConfigError) as refused:
        load_saved(RunDir(rd.root))
    assert refused.value.exit_code == 2 and refused.value.file == str(RunDir(rd.root).evaluation)
    assert refused.value.field == "environment.backend"


def test_registering_a_taken_name_is_refused(toy: ToyBackend) -> None:
    """A second backend under a registered name is refused unless it asks to replace it,
    so a plugin cannot silently shadow a built-in."""
    with pytest.raises(ValueError, match="already registered"):
        register_backend(ToyBackend())
    with pytest.raises(ValueError, match="already registered"):
        register_backend("tests.environments.toy_backend:ToyBackend", name="local")
    again = ToyBackend()
    register_backend(again, replace=True)
    assert get_backend("toy") is again
