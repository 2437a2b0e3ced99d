"""``pluginbench run`` without typer: the same options, the same values, the same exits."""

from __future__ import annotations

import errno
import itertools
import typing
from pathlib import Path
from typing import Any

import pytest
import typer

from pluginbench.cli import _run, run_plain
from pluginbench.cli._app import build_app
from pluginbench.cli._run_plain import RUN_OPTIONS, TARGET, parse_run_args


def _typer_run_command() -> Any:
    return typer.main.get_command(build_app(only="run")).commands["run"]  # type: ignore[attr-defined]


def _typer_values(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any] | None:
    """What typer hands ``_run.run`` for ``run ARGV``, or None when it refuses the line."""
    seen: list[dict[str, Any]] = []

    def capture(target: Path, **kwargs: Any) -> None:
        seen.append({TARGET: target, **kwargs})

    monkeypatch.setattr(_run, "run", capture)
    try:
        _typer_run_command().main(args=argv, prog_name="run", standalone_mode=False)
    except Exception as exc:  # typer's usage errors are click's, from its vendored copy
        if type(exc).__name__ in {"UsageError", "NoSuchOption", "BadParameter", "MissingParameter",
                                  "BadOptionUsage", "BadArgumentUsage"}:
            return None
        raise
    return seen[0] if seen else None


def test_the_plain_options_are_exactly_run_commands_typer_options() -> None:
    """Every option typer builds for ``run`` is in RUN_OPTIONS with the same names, keyword
    and kind (a flag, or the value's annotated type), and nothing else is; its one argument
    is the target."""
    from pluginbench.cli._run_commands import run_command

    hints = typing.get_type_hints(run_command, include_extras=True)
    declared = {}
    arguments = []
    for param in _typer_run_command().params:
        if param.param_type_name == "argument":
            arguments.append(param.name)
            continue
        if "--help" in param.opts:
            continue
        value_type = typing.get_args(hints[param.name])[0]
        kind = "flag" if param.is_flag else {Path | None: "path", float | None: "float"}.get(value_type, str(value_type))
        declared[param.name] = (tuple(param.opts), kind)
    assert arguments == [TARGET]
    assert declared == {o.param: (o.names, o.kind) for o in RUN_OPTIONS}


def _lines() -> list[list[str]]:
    """Command lines of ``run``: every option in every spelling, alone and together, in
    both orders around the target, and the unusual lines only typer should read."""
    spellings: list[list[str]] = []
    for option in RUN_OPTIONS:
        value = {"path": "out dir/ä", "float": "12.5"}.get(option.kind)
        for name in option.names:
            if value is None:
                spellings += [[name], [f"{name}=1"]]
            elif name.startswith("--"):
                spellings += [[name, value], [f"{name}={value}"], [name], [f"{name}="], [name, "-x"], [f"{name}=-1"]]
            else:
                spellings += [[name, value], [f"{name}{value}"], [f"{name}={value}"]]
    spellings += [["--cost-ceiling", v] for v in ("inf", "nan", " 5 ", "1_000", "1e3", "abc", "0x10", "")]
    spellings += [["-yv"], ["--"], ["-"], ["--help"], ["-h"], ["--yes", "--yes"], ["-o", "a", "--output", "b"],
                  ["--foreground", "--foreground"], ["--unknown"], ["--fore"], ["extra"]]
    lines: list[list[str]] = []
    for spelling in spellings:
        lines += [["evaluation.yaml", *spelling], [*spelling, "evaluation.yaml"], spelling]
    common = [["--foreground"], ["--yes"], ["-y"], ["--output", "runs/x"], ["-v"], ["--dry-run", "--json"],
              ["--cost-ceiling", "50"], ["--notify"]]
    for a, b in itertools.combinations(common, 2):
        lines += [["cfg.yaml", *a, *b], [*a, "cfg.yaml", *b], [*b, *a, "cfg.yaml"]]
    lines += [[], ["a.yaml", "b.yaml"], [""], ["runs/old"], ["./ä ö.yaml", "-y"]]
    return lines


def test_every_line_the_plain_parser_reads_typer_reads_to_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """For each command line the plain parser accepts, typer accepts it too and hands ``run``
    the same values (defaults included); the rest is left to typer."""
    accepted = 0
    for argv in _lines():
        plain = parse_run_args(argv)
        if plain is None:
            continue
        accepted += 1
        typed = _typer_values(argv, monkeypatch)
        assert typed is not None, f"typer refuses {argv!r}, which the plain parser read as {plain!r}"
        defaults = {o.param: (False if o.kind == "flag" else None) for o in RUN_OPTIONS}
        assert repr(sorted({**defaults, **plain}.items())) == repr(sorted(typed.items())), argv  # repr: nan is nan
    assert accepted > 100  # the usual lines do take the plain path


@pytest.mark.parametrize("argv", [
    ["cfg.yaml", "--foreground", "--yes"], ["cfg.yaml"], ["-o", "runs/x", "cfg.yaml", "-y"],
    ["runs/old", "--cost-ceiling", "50"], ["cfg.yaml", "--dry-run", "--json"], ["cfg.yaml", "--output=o", "-v"],
])
def test_the_usual_lines_take_the_plain_path(argv: list[str]) -> None:
    """What users and the docs type is read without typer."""
    assert parse_run_args(argv) is not None


@pytest.mark.parametrize("argv", [
    ["cfg.yaml", "--help"], ["cfg.yaml", "-yv"], ["cfg.yaml", "--yes", "--yes"], ["--", "cfg.yaml"],
    ["cfg.yaml", "--cost-ceiling", "abc"], ["cfg.yaml", "--output", ""], ["cfg.yaml", "--output", "-o"],
    ["cfg.yaml", "--fore"], ["a.yaml", "b.yaml"], ["--yes"], ["cfg.yaml", "--yes=true"], ["cfg.yaml", "-ofoo"],
])
def test_unusual_lines_are_left_to_typer(argv: list[str]) -> None:
    """Help, bundled or repeated flags, ``--``, a bad or dash-leading value, a prefix of an
    option, a second or missing argument: typer reads them (and words any refusal)."""
    assert parse_run_args(argv) is None


def test_a_line_for_typer_runs_nothing_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_plain returns False without calling the command when typer must parse the line."""
    monkeypatch.setattr(_run, "run", lambda *a, **k: pytest.fail("ran"))
    assert run_plain(["cfg.yaml", "--help"]) is False


def _exit_of(argv: list[str], raised: BaseException | None, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str], *, through_typer: bool) -> tuple[int, str]:
    def command(*args: Any, **kwargs: Any) -> None:
        if raised is not None:
            raise raised

    monkeypatch.setattr(_run, "run", command)
    with pytest.raises(SystemExit) as ended:
        if through_typer:
            from pluginbench.cli import _app

            monkeypatch.setattr("sys.argv", ["pluginbench", "run", *argv])
            _app.main()
        else:
            run_plain(argv)
    return int(ended.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize("raised", [None, SystemExit(2), KeyboardInterrupt(), EOFError(),
                                    BrokenPipeError(errno.EPIPE, "Broken pipe"), typer.Exit(3), typer.Abort()],
                         ids=["returns", "exits-2", "ctrl-c", "end-of-input", "broken-pipe", "typer-exit",
                              "typer-abort"])
def test_the_plain_path_ends_as_the_typer_app_does(raised: BaseException | None, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The command returning, exiting 2, Ctrl-C (130), end of input at a prompt ("Aborted!",
    1), a reader gone away (1), and typer's own Exit and Abort raised by a module the run
    reached give the same exit code and stderr on both paths."""
    if isinstance(raised, BrokenPipeError):  # both paths point the streams at /dev/null; keep pytest's
        monkeypatch.setattr("pluginbench.cli._run_plain._quiet_streams", lambda: None)
    plain = _exit_of(["cfg.yaml", "--yes"], raised, monkeypatch, capsys, through_typer=False)
    typed = _exit_of(["cfg.yaml", "--yes"], raised, monkeypatch, capsys, through_typer=True)
    assert plain == typed
