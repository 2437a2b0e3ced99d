"""``treatments.<arm>.generate``: the config rules of a generated-guidance arm (exit 2 naming the
file and the field, before anything is planned) and the plan `check` and `run --dry-run` show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pluginbench.config import DEFAULT_GENERATE_INSTRUCTION, Generate, parse_evaluation, validate
from pluginbench.errors import ConfigError
from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import write_config

CLAUDE = {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"}
SIMULATED = {"harness": "simulated", "model": "simulated-1"}


def _refusal(treatment: dict[str, Any], runner: dict[str, Any] | None = None) -> ConfigError | None:
    raw = {"tasks": {"source": "t", "ids": ["a"]}, "runner": runner or CLAUDE, "treatments": {"gen": treatment}}
    try:
        validate(parse_evaluation(raw, Path("e.yaml")), Path("e.yaml"))
    except ConfigError as exc:
        assert exc.file == "e.yaml"
        return exc
    return None


REFUSED = [
    # (treatment, runner or None for claude, the field named, words in the message)
    ({"generate": {"model": "claude-sonnet-4-5"}, "guidance": ["g.md"]}, None, "treatments.gen.guidance",
     "both generates its guidance and declares guidance"),
    ({"generate": {"model": "claude-sonnet-4-5"}, "skills": ["s"]}, None, "treatments.gen.skills", "declares skills"),
    ({"generate": {"model": "claude-sonnet-4-5"}, "plugins": ["p"]}, None, "treatments.gen.plugins", "declares plugins"),
    ({"generate": {"harness": "claud", "model": "m"}}, None, "treatments.gen.generate.harness", "unknown harness 'claud'"),
    ({"generate": {"harness": "codex", "model": "gpt-5.5"}}, None, "treatments.gen.generate.harness",
     "is not the runner's harness 'claude'"),
    ({"generate": {}}, None, "treatments.gen.generate.model", "needs the generating session's exact model id"),
    ({"generate": {"model": "claude sonnet"}}, None, "treatments.gen.generate.model", "contains spaces"),
    ({"generate": {"model": "claude-sonnet-4-5", "reasoning": "huge"}}, None, "treatments.gen.generate.reasoning",
     "unknown reasoning 'huge'"),
    ({"generate": {"model": "claude-sonnet-4-5", "instruction": "  \n"}}, None, "treatments.gen.generate.instruction",
     "generate.instruction is empty"),
    ({"generate": {"model": "claude-sonnet-4-5", "instruction": "write \x1b[2J it"}}, None,
     "treatments.gen.generate.instruction", "control character"),
    ({"generate": {"model": "claude-sonnet-4-5", "kind": "skill"}}, None, "treatments.gen.generate.kind", "invalid value"),
    ({"generate": {"model": "claude-sonnet-4-5", "modle": "x"}}, None, "treatments.gen.generate.modle", "unknown key"),
    ({"generate": {}}, {"harness": "nop"}, "treatments.gen.generate.harness", "cannot write an instruction file"),
]


@pytest.mark.parametrize("treatment, runner, field, words", REFUSED)
def test_generate_config_errors_name_the_field(treatment: dict[str, Any], runner: dict[str, Any] | None, field: str,
                                               words: str) -> None:
    """Each wrong generate setting is refused naming the file and the exact field (generate with declared files,
    an unknown or other harness, a missing or spaced model, a bad effort, an empty or escape-holding prompt, a kind
    other than instruction_file, an unknown key, a harness that runs no agent)."""
    exc = _refusal(treatment, runner)
    assert exc is not None, treatment
    assert exc.field == field and words in exc.message, (exc.field, exc.message)


@pytest.mark.parametrize("treatment, runner", [
    ({"generate": {"model": "claude-sonnet-4-5"}}, None),
    ({"generate": {"model": "claude-haiku-4-5", "reasoning": "high", "instruction": "Write {file}."},
      "task_owned": "remove"}, None),
    ({"generate": {}}, SIMULATED),
    ({"generate": {"harness": "simulated"}}, SIMULATED),
])
def test_generate_configs_that_are_accepted(treatment: dict[str, Any], runner: dict[str, Any] | None) -> None:
    """A model on a real harness (its effort the runner's unless given), task_owned: remove beside it, and the
    simulated agent without a model are accepted; a generate block alone is a whole treatment."""
    assert _refusal(treatment, runner) is None


def test_the_prompt_names_the_harness_file_and_defaults_to_the_built_in_one() -> None:
    """The built-in prompt names the file to write and says only it is kept; a custom one has {file} filled in; the
    effort falls back to the runner's."""
    built_in = Generate(model="m").prompt("AGENTS.md")
    assert built_in == DEFAULT_GENERATE_INSTRUCTION.replace("{file}", "AGENTS.md")
    assert "AGENTS.md in its root folder" in built_in and "only AGENTS.md is kept" in built_in and "{file}" not in built_in
    assert Generate(instruction="Write {file} now.").prompt("CLAUDE.md") == "Write CLAUDE.md now."
    assert Generate().effort("low") == "low" and Generate(reasoning="high").effort("low") == "high"


def test_run_dry_run_refuses_generate_with_guidance_with_exit_2(tmp_path: Path) -> None:
    """The CLI refuses a generated arm that also declares guidance: exit 2, the file and field named, no traceback."""
    config = write_config(tmp_path, treatments={"gen": {"generate": {}, "guidance": ["g.md"]}})
    code, out = run_cli("run", str(config), "--dry-run")
    assert_refused(code, out, "evaluation.yaml", "field: treatments.gen.guidance")
    assert not (tmp_path / "runs").exists()


def test_dry_run_shows_the_generating_sessions_and_their_worst_case(tmp_path: Path) -> None:
    """The plan counts one generating session per task and generated arm before coding, with the file the
    harness reads and a worst case in dollars at the generating model's price (unknown, never 0, without a budget)."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"as_of": "2026-12-01", "currency": "USD", "models": {
        "simulated-1": {"input_per_million": 1.0, "cached_input_per_million": 0.5, "output_per_million": 4.0}}}))
    config = write_config(tmp_path, treatments={"gen": {"generate": {}}, "gen2": {"generate": {}}},
                          prices=str(prices), runner={**SIMULATED, "max_tokens_per_attempt": 1_000_000})
    code, out = run_cli("run", str(config), "--dry-run", "--json")
    assert code == 0, out
    gen = json.loads(out)["generation"]
    assert gen["sessions"] == 4 and set(gen["per_arm"]) == {"gen", "gen2"}
    assert gen["per_arm"]["gen"]["file"] == "CLAUDE.md" and gen["per_arm"]["gen"]["instruction"] == "built-in"
    assert gen["worst_case_usd"] == pytest.approx(4 * 4.0)  # 4 sessions × 1M tokens × the dearest $4/M
    code, out = run_cli("run", str(write_config(tmp_path, treatments={"gen": {"generate": {}}})), "--dry-run")
    assert code == 0, out
    assert "guidance generation: 2 session(s) before coding" in out and "worst-case cost unknown" in out
