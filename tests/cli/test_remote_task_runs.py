"""Whole runs from task links on a loopback git server: pinned at freeze time, resumed and reported offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.actors import create_run
from pluginbench.config import load
from pluginbench.projections._results_schema import validate as validate_results
from tests.runs_helpers import events_of
from tests.tasks._gitserver import TaskRepo, git

pytestmark = pytest.mark.slow
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "tasks"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=300)


def _config(tmp: Path, urls: list[str]) -> Path:
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump({
        "name": "remote", "tasks": {"urls": urls}, "treatments": {},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 60,
    }))
    return path


@pytest.fixture
def served(tmp_path: Path):
    repo = TaskRepo(tmp_path / "server")
    repo.add_tree(QUICKSTART / "roman-numerals", "tasks/roman-numerals")
    repo.add_tree(QUICKSTART / "word-wrap", "tasks/word-wrap")
    repo.commit()
    repo.serve()
    yield repo
    repo.stop()


def test_branch_links_are_pinned_at_freeze_and_the_run_never_resolves_them_again(served: TaskRepo, tmp_path: Path) -> None:
    """A run frozen from git:// branch links runs, resumes and reports with the server gone, on the frozen commit."""
    frozen_commit = git("rev-parse", "HEAD", cwd=served.work)
    config = _config(tmp_path, [served.git_url("main", "tasks/roman-numerals"), served.git_url("main", "tasks/word-wrap")])
    rd = create_run(load(config), tmp_path / "run")
    (served.work / "tasks" / "word-wrap" / "instruction.md").write_text("A later instruction.\n")
    served.commit("after the freeze")
    served.stop()  # nothing below may reach the server

    pins = json.loads((rd.root / "evidence" / "remote" / "pins.json").read_text())
    assert [p["task_id"] for p in pins] == ["roman-numerals", "word-wrap"]
    assert {p["commit"] for p in pins} == {frozen_commit} and all(p["ref"] == "main" for p in pins)
    assert events_of(rd.root)[0]["tasks"] == ["roman-numerals", "word-wrap"]

    done = _cli("run", str(rd.root), "--foreground")
    assert done.returncode == 0, done.stdout + done.stderr
    frozen = rd.root / "evidence" / "frozen" / "tasks" / "word-wrap" / "instruction.md"
    assert frozen.read_text() == (QUICKSTART / "word-wrap" / "instruction.md").read_text()
    results = json.loads((rd.root / "report" / "results.json").read_text())
    assert set(results["per_task"]) == {"roman-numerals", "word-wrap"}
    assert [s["pinned_url"] for s in results["run"]["task_sources"]] == [p["pinned_url"] for p in pins]
    assert validate_results(results).run.task_sources is not None  # described in the typed schema
    report = _cli("report", str(rd.root))
    assert report.returncode == 0, report.stdout + report.stderr
    assert served.git_url(frozen_commit, "tasks/word-wrap") in (rd.root / "report" / "report.html").read_text()


def test_a_bad_link_is_refused_before_anything_is_written(served: TaskRepo, tmp_path: Path) -> None:
    """`run` with a link to a missing folder exits 2 naming tasks.urls[1] and the fix; no run folder appears."""
    config = _config(tmp_path, [served.file_url("main", "tasks/word-wrap"), served.file_url("main", "tasks/nope")])
    done = _cli("run", str(config), "--output", str(tmp_path / "run"))
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "tasks/nope does not exist" in out and "tasks.urls[1]" in out and "fix:" in out and "Traceback" not in out
    assert not (tmp_path / "run").exists()


def test_a_registry_dataset_is_pinned_at_freeze_and_runs_and_reports_without_the_registry(served: TaskRepo,
                                                                                        tmp_path: Path) -> None:
    """tasks.dataset from a local registry.json (head commits) freezes pins and a content hash; with the registry file
    deleted and the server stopped the run resumes and reports the dataset, pinned commit and hash."""
    commit = git("rev-parse", "HEAD", cwd=served.work)
    registry = tmp_path / "registry.json"
    url = f"git://127.0.0.1:{served.port}/tasks.git"
    registry.write_text(json.dumps([{"name": "acme/quick", "version": "2.0", "metrics": [], "tasks": [
        {"name": f"acme/{n}", "git_url": url, "git_commit_id": "head", "path": f"tasks/{n}"}
        for n in ("roman-numerals", "word-wrap")]}]))
    config = tmp_path / "evaluation.yaml"
    config.write_text(yaml.safe_dump({
        "name": "dataset", "tasks": {"dataset": "acme/quick", "version": "2.0", "ids": ["acme/word-wrap"],
                                     "registry": "registry.json"},
        "treatments": {}, "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 60,
    }))
    rd = create_run(load(config), tmp_path / "run")
    served.stop()
    registry.unlink()  # nothing below may read the registry or reach the server

    dataset = json.loads((rd.root / "evidence" / "remote" / "dataset.json").read_text())
    assert (dataset["name"], dataset["version"], dataset["tasks"]) == ("acme/quick", "2.0", ["acme/word-wrap"])
    pins = json.loads((rd.root / "evidence" / "remote" / "pins.json").read_text())
    assert [(p["task_id"], p["commit"]) for p in pins] == [("word-wrap", commit)]
    done = _cli("run", str(rd.root), "--foreground")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((rd.root / "report" / "results.json").read_text())
    assert set(results["per_task"]) == {"word-wrap"}
    assert results["run"]["task_dataset"]["content_hash"] == dataset["content_hash"]
    assert validate_results(results).run.task_dataset is not None
    assert dataset["content_hash"] in (rd.root / "report" / "report.html").read_text()


def test_a_dataset_name_the_registry_lacks_is_refused_naming_the_config_field(tmp_path: Path) -> None:
    """Creating a run with a task name the registry does not list raises an exit-2 TaskError naming tasks.ids[0]
    and the config file, before any run folder exists."""
    from pluginbench.errors import TaskError

    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps([{"name": "quick", "version": "1.0", "tasks": []}]))
    config = tmp_path / "evaluation.yaml"
    config.write_text(yaml.safe_dump({
        "tasks": {"dataset": "quick", "version": "1.0", "ids": ["nope"], "registry": str(registry)},
        "runner": {"harness": "simulated", "model": "simulated-1"},
    }))
    with pytest.raises(TaskError) as err:
        create_run(load(config), tmp_path / "run")
    assert err.value.exit_code == 2 and err.value.field == "tasks.ids[0]" and err.value.file == str(config)
    assert "has no task named 'nope'" in err.value.message and err.value.fix
    assert not (tmp_path / "run").exists()
