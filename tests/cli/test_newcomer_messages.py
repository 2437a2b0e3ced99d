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


def test_judge_prepare_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    """judge prepare with a missing folder or a plain folder says so (not 'the file is missing'), exits 2 and writes nothing."""
    criteria = tmp_path / "criteria.md"
    criteria.write_text("# criteria\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    for side, said in ((f"{tmp_path / 'nope'}=vanilla", "does not exist"), (f"{plain}=vanilla", "is not a run directory")):
        code, out = run_cli("judge", "prepare", side, f"{plain}=docs", "--criteria", str(criteria), "--seed", "1",
                            "--output", str(tmp_path / "judged"))
        assert code == 2 and said in out and "the file is missing" not in out, out
        assert "Traceback" not in out and not (tmp_path / "judged").exists()
