"""Config rules from the second bad-input battery (issue 21), checked in-process: each refusal
is a ConfigError naming the field, and the matching valid config is accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pluginbench.config import load
from pluginbench.errors import ConfigError

GUIDE = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "guidance" / "testing-discipline.md"


def _config(tmp_path: Path, **over: Any) -> Path:
    cfg: dict[str, Any] = {
        "name": "b21", "tasks": {"source": "tasks", "ids": ["a"]},
        "treatments": {"td": {"guidance": [str(GUIDE)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"}, "repeats": 1,
    }
    cfg.update(over)
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize(("over", "field"), [
    ({"name": "\x1b[31mred"}, "name"),
    ({"tasks": {"source": "tasks", "ids": ["x__td"]}}, "tasks.ids[0]"),
    ({"tasks": {"source": "tasks", "ids": ["a" * 256]}}, "tasks.ids[0]"),
    ({"tasks": {"source": "tasks", "ids": ["\x1b[2Ja"]}}, "tasks.ids[0]"),
    ({"treatments": {"td__vanilla": {"guidance": [str(GUIDE)]}}}, "treatments.td__vanilla"),
    ({"seed": -1}, "seed"),
    ({"measurements": ["tokens", "tokens"]}, "measurements[1]"),
    ({"measurement_settings": {"require_ready": 1}}, "measurement_settings.require_ready"),
    ({"measurement_settings": {"source_scope": ["src/"]}, "measurements": ["tokens", "lines", "dead_code"]},
     "measurement_settings.source_scope"),
    ({"measurement_settings": {"test_scope": ["tests/"]}}, "measurement_settings.test_scope"),
    ({"environment": {"backend": "docker", "container_cpus": float("nan")}}, "environment.container_cpus"),
    ({"environment": {"backend": "docker", "container_cpus": float("inf")}}, "environment.container_cpus"),
    ({"environment": {"backend": "docker", "container_memory_mb": 0}}, "environment.container_memory_mb"),
])
def test_refused_naming_the_field(tmp_path: Path, over: dict[str, Any], field: str) -> None:
    """The value is refused as a ConfigError whose field is the one at fault, with a fix."""
    with pytest.raises(ConfigError) as caught:
        load(_config(tmp_path, **over))
    assert caught.value.field == field and caught.value.fix


def test_the_valid_neighbours_are_accepted(tmp_path: Path) -> None:
    """A single '_' in ids and names, seed 0, and scopes with coverage selected stay accepted."""
    load(_config(tmp_path, tasks={"source": "tasks", "ids": ["x_td"]}, seed=0,
                 treatments={"td_v": {"guidance": [str(GUIDE)]}},
                 measurements=["tokens", "coverage"], measurement_settings={"source_scope": ["src/"]}))


def test_a_fifo_config_is_refused_without_reading(tmp_path: Path) -> None:
    """A FIFO named as the config is refused at once (reading it would block forever)."""
    import os

    fifo = tmp_path / "evaluation.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        load(fifo)


def test_a_config_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    """A byte that is not UTF-8 is reported with its line and column."""
    path = tmp_path / "evaluation.yaml"
    path.write_bytes(b"name: ok\nrepeats: 1\nseed: \xff\n")
    with pytest.raises(ConfigError) as caught:
        load(path)
    assert caught.value.field == "line 3, column 7"
