"""Messages a newcomer meets on the bundled example say exactly what to do next."""

from __future__ import annotations

from pathlib import Path

from tests.cli._cli_helpers import run_cli
from tests.runs_helpers import write_config


def test_dry_run_without_prices_names_the_prices_setting(tmp_path: Path) -> None:
    """A plan without a price table says dollars are unknown and names the `prices:` setting and its docs page."""
    code, out = run_cli("run", str(write_config(tmp_path)), "--dry-run")
    assert code == 0, out
    assert "no price table (set prices: to a dated prices.json in the config, see docs/configuration.md)" in out
    assert not (tmp_path / "runs").exists()
