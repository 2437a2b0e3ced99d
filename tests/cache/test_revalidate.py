"""Reused attempts' usage is re-validated from their saved traces with today's rules
(real Codex 0.169.0 samples from tests/data/samples)."""

from __future__ import annotations

import shutil
from pathlib import Path

from pluginbench.harnesses._revalidate import revalidate_usage

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "codex-0.169.0"


def _attempt(tmp: Path, with_rollout: bool) -> Path:
    agent = tmp / "attempt" / "agent"
    (agent / "rollouts").mkdir(parents=True)
    shutil.copyfile(SAMPLES / "hooks-bypass.stdout.jsonl", agent / "stdout.jsonl")
    if with_rollout:
        shutil.copyfile(SAMPLES / "rollout-hooks-bypass.jsonl", agent / "rollouts" / "rollout-hooks-bypass.jsonl")
    return tmp / "attempt"


def test_codex_usage_is_read_again_from_the_saved_stdout_and_rollouts(tmp_path: Path) -> None:
    """With its rollout saved the sample's usage is validated; without it the same stdout is no longer exact."""
    whole = revalidate_usage("codex", _attempt(tmp_path / "a", True), model="gpt-5.5", cli_version="0.169.0",
                             timed_out=False, exit_code=0, seconds=1.0)
    assert whole is not None and whole.status == "exact" and whole.total_tokens
    partial = revalidate_usage("codex", _attempt(tmp_path / "b", False), model="gpt-5.5", cli_version="0.169.0",
                               timed_out=False, exit_code=0, seconds=1.0)
    assert partial is not None and partial.status != "exact" and partial.reason


def test_controls_keep_their_recorded_usage(tmp_path: Path) -> None:
    """The simulated agent and the controls have no validator: re-validation returns None (keep the recorded usage)."""
    for harness in ("simulated", "nop", "oracle"):
        assert revalidate_usage(harness, tmp_path, model=None, cli_version=None, timed_out=False, exit_code=0,
                                seconds=0.0) is None
