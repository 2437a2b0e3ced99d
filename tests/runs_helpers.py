"""Helpers for whole-run tests: configs over the bundled quickstart tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"


def write_config(tmp: Path, *, harness: str = "simulated", tasks: list[str] | None = None, repeats: int = 1,
                 jobs: int = 2, treatments: dict[str, Any] | None = None, name: str = "t", **extra: Any) -> Path:
    """An evaluation over quickstart tasks, written to ``tmp/evaluation.yaml``."""
    cfg: dict[str, Any] = {
        "name": name,
        "tasks": {"source": str(QUICKSTART / "tasks"), "ids": tasks or ["roman-numerals", "word-wrap"]},
        "treatments": treatments if treatments is not None else {
            "testing-discipline": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]}
        },
        "runner": {"harness": harness, "model": "simulated-1" if harness == "simulated" else None},
        "repeats": repeats,
        "jobs": jobs,
        "seed": 3,
        "timeout_seconds": 60,
        **extra,
    }
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def events_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]


def task_folder(root: Path, toml: str) -> Path:
    """A minimal Harbor task folder at ``root`` (empty workspace, a no-op test.sh) whose task.toml is ``toml``."""
    for d in ("tests", "workspace"):
        (root / d).mkdir(parents=True)
    (root / "tests" / "test.sh").write_text("#!/bin/sh\n")
    (root / "instruction.md").write_text("x\n")
    (root / "task.toml").write_text(toml)
    return root


def b_txt_task(tmp_path: Path, verifier: str) -> Any:
    """The pre-start tests' task (loaded): a workspace with a.txt, "Create b.txt.", and
    ``verifier`` as an executable tests/test.sh."""
    from pluginbench.tasks import load_task

    root = tmp_path / "task"
    for sub in ("workspace", "tests", "solution"):
        (root / sub).mkdir(parents=True)
    (root / "workspace" / "a.txt").write_text("a\n")
    (root / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n')
    (root / "instruction.md").write_text("Create b.txt.\n")
    (root / "tests" / "test.sh").write_text(verifier)
    (root / "tests" / "test.sh").chmod(0o755)
    return load_task(root)
