"""Coverage on the real Docker backend: a whole evaluation whose task image (built by
preparation from a small Dockerfile on the local base image, no registry) holds coverage.py
and pytest runs the coverage command in fresh containers of the frozen task image, once per
task on the starting source and once per submission, and reports the hand-counted values."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests._prereq import require
from tests.runs_helpers import events_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CLAMP = Path(__file__).resolve().parents[1] / "data" / "coverage" / "tasks" / "clamp"
#: what the image needs to run the task's coverage command: coverage.py 7.17.3 (its C tracer is
#: built for CPython 3.11 on Linux x86-64, as the base image's Debian python3 is) and pytest with
#: its dependencies, copied from the test interpreter's own site-packages (no pip, no network)
PACKAGES = ("coverage", "pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "pygments")
#: COPY only (no RUN step, which would need the engine's bridge network); bin/python runs
#: Debian's python3 (the task's coverage.sh runs `python -m coverage`; tasks hold no symlinks)
DOCKERFILE = """FROM pluginbench/base:bookworm
COPY site/ /usr/local/lib/python3.11/dist-packages/
COPY bin/ /usr/local/bin/
"""
PROFILE = {"command": ["sh", "coverage.sh"], "report_path": "coverage.json", "format": "coverage-py-json",
           "tool_version": "7.17.3"}


def _engine_up() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0


def _task_with_image(root: Path) -> Path:
    """The clamp task plus environment/Dockerfile whose build context carries the packages."""
    task = root / "tasks" / "clamp"
    shutil.copytree(CLAMP, task)
    site = task / "environment" / "site"
    site.mkdir(parents=True)
    here = Path(next(p for p in sys.path if p.endswith("site-packages") and (Path(p) / "coverage").is_dir()))
    for entry in sorted(here.iterdir()):
        name = entry.name.split("-")[0].removesuffix(".py").lower()
        if name not in PACKAGES:
            continue
        if entry.is_dir():
            shutil.copytree(entry, site / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        elif entry.suffix == ".py":
            shutil.copy2(entry, site / entry.name)
    (task / "environment" / "bin").mkdir()
    wrapper = task / "environment" / "bin" / "python"
    wrapper.write_text('#!/bin/sh\nexec /usr/bin/python3 "$@"\n')
    wrapper.chmod(0o755)
    (task / "environment" / "Dockerfile").write_text(DOCKERFILE)
    return task


def test_coverage_is_collected_in_containers_of_the_frozen_task_image(tmp_path: Path) -> None:
    """Preparation builds the task image, readiness runs the coverage command twice in it, and each
    submission's coverage comes from a fresh container: the tested candidate's changed-line coverage is 0.6
    with one redundant test, the untested one's 0.2; the starting report is computed once, keyed by the image."""
    require(_engine_up(), "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    _task_with_image(tmp_path)
    guidance = tmp_path / "testing.md"
    guidance.write_text("Always add tests for new code.\n")
    config = tmp_path / "evaluation.yaml"
    config.write_text(yaml.safe_dump({
        "name": "cov-docker", "tasks": {"source": str(tmp_path / "tasks"), "ids": ["clamp"]},
        "treatments": {"tests-first": {"guidance": [str(guidance)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 300,
        "environment": {"backend": "docker"},
        "measurements": ["tokens", "time", "lines", "coverage"],
        "measurement_settings": {"coverage_profiles": {"python": PROFILE}},
    }))
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(config), "--output", str(run),
                           "--foreground"], capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stdout + done.stderr
    readiness = json.loads((run / "measurement-readiness.json").read_text())
    assert [r["state"] for r in readiness["readiness"]] == ["ready"], readiness
    image = [e for e in events_of(run) if e["type"] == "task.prepared"][0]["image"]
    assert image.startswith("sha256:")
    results = json.loads((run / "report" / "results.json").read_text())
    by_patch = {}
    for row in results["attempts"]:
        patch = (run / row["evidence"] / "model.patch").read_text()
        kind = "tested" if "test_clamp" in patch else "untested"
        by_patch[kind] = row["measures"]
    for kind, m in by_patch.items():
        assert m["changed_line_coverage"]["value"] == {"tested": 0.6, "untested": 0.2}[kind], (kind, m)
        if kind == "tested":
            assert m["redundant_added_tests"]["value"] == 1
    shared = run / "evidence" / "measure-shared" / "coverage"
    assert len([p for p in shared.iterdir() if p.name.startswith("starting-")]) == 1
    assert (list(shared.iterdir())[0] / "report.raw").is_file()
