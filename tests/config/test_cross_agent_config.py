"""Cross-agent configs (``runner.harnesses``): refusals naming the entry, the expansion per harness, frozen bytes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from pluginbench.config import (
    Evaluation,
    HarnessEntry,
    RunnerConfig,
    TasksConfig,
    frozen_builtins,
    harness_entries,
    load,
    per_harness,
)
from pluginbench.errors import ConfigError
from tests.cli._cli_helpers import assert_refused, run_cli

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
OLD_RUN = Path(__file__).resolve().parents[1] / "data" / "old-single-harness-run"
TWO = [{"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"},
       {"harness": "codex", "model": "gpt-5.1", "reasoning": "low"}]


def _config(tmp: Path, runner: dict[str, Any]) -> Path:
    cfg = {"name": "x", "tasks": {"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals"]},
           "treatments": {"td": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]}},
           "runner": runner, "repeats": 1}
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _entries(**changes: Any) -> list[dict[str, Any]]:
    """TWO with ``i_key=value`` changes (``1_model=None`` sets the second entry's model)."""
    out = [dict(e) for e in TWO]
    for k, v in changes.items():
        i, key = k.split("_", 1)
        out[int(i)][key] = v
    return out


REFUSALS = [
    ({"harnesses": TWO[:1]}, "runner.harnesses", "needs two or more"),
    ({"harnesses": TWO, "model": "m"}, "runner.model", "set beside runner.harnesses"),
    ({"harnesses": TWO, "harness": "claude"}, "runner.harness", "set beside runner.harnesses"),
    ({"harnesses": [TWO[0], TWO[0]]}, "runner.harnesses[1].harness", "listed twice"),
    ({"harnesses": _entries(**{"1_harness": "nosuch"})}, "runner.harnesses[1].harness", "unknown harness 'nosuch'"),
    ({"harnesses": _entries(**{"0_model": None})}, "runner.harnesses[0].model", "under the claude harness"),
    ({"harnesses": _entries(**{"1_reasoning": "huge"})}, "runner.harnesses[1].reasoning", "unknown reasoning 'huge'"),
    ({"harnesses": _entries(**{"0_cli_version": "^2"})}, "runner.harnesses[0].cli_version", "not an exact version"),
    ({"harnesses": _entries(**{"1_max_tokens_per_attempt": 0})}, "runner.harnesses[1].max_tokens_per_attempt",
     "under the codex harness"),
    ({"harnesses": [{"harness": "simulated", "cli_version": "1.0.0"}, TWO[1]]}, "runner.harnesses[0].cli_version",
     "pins nothing"),
    ({"harnesses": _entries(**{"0_effort": "low"})}, "runner.harnesses[0].effort", "unknown key 'effort'"),
    ({"harnesses": [{"model": "m"}, TWO[1]]}, "runner.harnesses[0].harness", "required key 'harness'"),
    ({"harnesses": "claude"}, "runner.harnesses", "wrong type"),
]


@pytest.mark.parametrize(("runner", "field", "words"), REFUSALS, ids=[r[1] + ":" + r[2][:14] for r in REFUSALS])
def test_a_bad_cross_agent_runner_is_refused_naming_the_entry_field(tmp_path: Path, runner: dict[str, Any],
                                                                  field: str, words: str) -> None:
    """Each bad runner.harnesses config is a ConfigError naming the config file, the entry's field and what is wrong."""
    path = _config(tmp_path, runner)
    with pytest.raises(ConfigError) as got:
        load(path)
    assert (got.value.field, got.value.file) == (field, str(path)), got.value.render()
    assert words in got.value.message and got.value.fix


def test_the_cli_refuses_a_bad_entry_with_exit_2_before_anything_is_written(tmp_path: Path) -> None:
    """`run` on a config whose second harness has a bad effort exits 2 naming file and field, and creates no folder."""
    path = _config(tmp_path, {"harnesses": _entries(**{"1_reasoning": "huge"})})
    code, out = run_cli("run", str(path), "--output", str(tmp_path / "out"))
    assert_refused(code, out, str(path), "runner.harnesses[1].reasoning", "under the codex harness")
    assert not (tmp_path / "out").exists()


def test_each_harness_expands_to_its_own_single_harness_evaluation(tmp_path: Path) -> None:
    """The expansion keeps every setting and puts each entry's harness, model, effort and budget in runner."""
    path = _config(tmp_path, {"harnesses": _entries(**{"1_max_tokens_per_attempt": 5000}), "max_tokens_per_attempt": 9,
                              "probe": "scenario.yaml"})
    ev = load(path).evaluation
    subs = dict(per_harness(ev))
    assert list(subs) == ["claude", "codex"]
    assert subs["claude"].runner == RunnerConfig(harness="claude", model="claude-sonnet-4-5", reasoning="low",
                                                 probe="scenario.yaml", max_tokens_per_attempt=9)
    assert subs["codex"].runner.max_tokens_per_attempt == 5000 and subs["codex"].runner.harnesses is None
    assert all(s.treatments == ev.treatments and s.tasks == ev.tasks and s.seed == ev.seed for s in subs.values())


def test_the_single_harness_form_is_one_entry_and_freezes_without_a_harnesses_key() -> None:
    """runner.harness reads as one entry, and its frozen settings hold no runner.harnesses key at all."""
    ev = Evaluation(tasks=TasksConfig(source="t", ids=["a"]), runner=RunnerConfig(harness="codex", model="m"))
    assert harness_entries(ev) == [HarnessEntry(harness="codex", model="m")]
    assert "harnesses" not in frozen_builtins(ev)["runner"]
    cross = Evaluation(tasks=TasksConfig(source="t", ids=["a"]),
                       runner=RunnerConfig(harnesses=[HarnessEntry(harness="codex", model="m")]))
    assert frozen_builtins(cross)["runner"]["harnesses"][0]["harness"] == "codex"


def test_an_old_runs_frozen_settings_are_reproduced_byte_for_byte() -> None:
    """The evaluation.json an older PluginBench froze is what this one freezes from the same settings (same SHA-256)."""
    from pluginbench.actors._runfiles import evaluation_bytes
    from pluginbench.config import parse_evaluation

    data = (OLD_RUN / "evaluation.json").read_bytes()
    raw = json.loads(data)
    saved = raw.pop("saved")
    ev = parse_evaluation(raw, OLD_RUN / "evaluation.json")
    again = json.loads(evaluation_bytes(ev, Path(saved["config_file"])))
    again["saved"] = saved  # the version stamp is the writer's own
    encoded = json.dumps(again, indent=2, sort_keys=True).encode() + b"\n"
    assert hashlib.sha256(encoded).hexdigest() == hashlib.sha256(data).hexdigest()
