"""``--json`` commands answer a refusal with one JSON object on stdout as well as the message on stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pluginbench import cli
from pluginbench.cli import app


def _error_of(stdout: str) -> dict[str, object]:
    doc = json.loads(stdout)
    assert set(doc) == {"error", "exit_code"} and doc["exit_code"] == 2
    return doc["error"]


def test_a_refused_json_command_prints_the_refusal_as_json_on_stdout(tmp_path: Path) -> None:
    """status --json of a folder that is no run, and check --json of a missing config, exit 2 with stdout one JSON object naming the message, file and fix, and the usual message on stderr."""
    runner = CliRunner()
    res = runner.invoke(app, ["status", str(tmp_path), "--json"])
    assert res.exit_code == 2 and "error:" in res.stderr
    err = _error_of(res.stdout)
    assert err["file"] and err["fix"] and str(err["message"]) in res.stderr
    res = runner.invoke(app, ["check", str(tmp_path / "missing.yaml"), "--json"])
    assert res.exit_code == 2
    assert _error_of(res.stdout)["file"] == str(tmp_path / "missing.yaml")
    assert list(tmp_path.iterdir()) == []


def test_a_usage_error_with_json_prints_json_naming_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown option beside --json exits 2 with stdout one JSON object whose field is that option."""
    monkeypatch.setattr(sys, "argv", ["pluginbench", "status", str(tmp_path), "--json", "--bogus"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    out = capsys.readouterr()
    assert exit_.value.code == 2 and "No such option: --bogus" in out.err
    assert _error_of(out.out)["field"] == "--bogus"
