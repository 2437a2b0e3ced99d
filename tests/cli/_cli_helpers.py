"""What the bad-input tests share: the in-process CLI, the refusal shape, and config edits."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from pluginbench.cli import app

runner = CliRunner()


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and output of one in-process CLI call; any exception but an exit fails the test."""
    result = runner.invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def assert_refused(code: int, output: str, *needles: str) -> None:
    """A refusal: exit 2, an ``error:`` first line, no traceback, and every needle in the output."""
    assert code == 2, output
    assert output.startswith("error: "), output
    assert "Traceback" not in output
    for n in needles:
        assert n in output, f"{n!r} not in:\n{output}"


def edit(config: Path, **changes: object) -> Path:
    """Set ``a__b=value`` (the dotted path ``a.b``) in a YAML config, in place."""
    data = yaml.safe_load(config.read_text())
    for dotted, value in changes.items():
        node = data
        *parents, leaf = dotted.split("__")
        for p in parents:
            node = node[p]
        node[leaf] = value
    config.write_text(yaml.safe_dump(data))
    return config
