"""A whole evaluation with the real opencode CLI, driven by the loopback probe."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harnesses._keyed_realcli import whole_probe_evaluation

pytestmark = [pytest.mark.realcli, pytest.mark.slow]


def test_opencode_whole_evaluation_shows_the_guidance_delta_and_exact_usage(tmp_path: Path) -> None:
    """Vanilla fails and the guided arm passes; results.json tokens equal what the probe served."""
    whole_probe_evaluation(tmp_path, "opencode", "gpt-4.1")
