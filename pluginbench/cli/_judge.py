"""``judge prepare | run | tally``: blind pairwise judging of two arms (parsing and dispatch only)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError
from ._common import console, err_console, errors_to_exit_codes, print_json, visible
from ._help import HelpWhenBareGroup

judge_app = typer.Typer(
    help="Blind pairwise judging of matched submissions from two arms: prepare, run the judges, tally.",
    no_args_is_help=True,
    cls=HelpWhenBareGroup,
)


def _names(value: str | None) -> list[str] | None:
    return None if value is None else [t.strip() for t in value.split(",") if t.strip()]


def _side(spec: str) -> tuple[Path, str]:
    run, _, arm = spec.rpartition("=")
    arm = "vanilla" if arm == "baseline" else arm
    try:
        return Path(run).resolve(), arm
    except (OSError, RuntimeError):
        return Path(run), arm


def _refuse_same_side(sides: list[str]) -> None:
    """Judging an arm against itself (the same run and arm twice) measures nothing."""
    if "=" in sides[0] and "=" in sides[1] and _side(sides[0]) == _side(sides[1]):
        raise InputError(f"both sides are {sides[0]}: an arm judged against itself measures nothing",
                         field="RUN=ARM", fix="name two different arms (or the same arm of two runs)")


def _check_criteria(criteria: Path) -> None:
    """The criteria every judge reads: a regular, non-empty UTF-8 text file."""
    try:
        data = criteria.read_bytes() if criteria.is_file() else None
    except OSError:
        return  # prepare names the read error
    if data is None:
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the criteria file is not UTF-8 text (binary criteria cannot be read by a judge)",
                         file=str(criteria), field="--criteria", fix="pass a Markdown file saved as UTF-8") from None
    if not text.strip() or "\0" in text:
        raise InputError("the criteria file is empty or binary", file=str(criteria), field="--criteria",
                         fix="write the review standard (Markdown) into it")


@judge_app.command("prepare")
@errors_to_exit_codes
def prepare_command(
    sides: Annotated[list[str], typer.Argument(help="Exactly two RUN_DIR=ARM specs (vanilla also matches baseline).")],
    criteria: Annotated[Path, typer.Option("--criteria", help="The review standard (Markdown) every judge applies.")],
    seed: Annotated[int, typer.Option("--seed", help="Randomizes which side is A for each pair.")],
    output: Annotated[Path, typer.Option("--output", help="The prepared directory to create (must not exist).")],
    tasks: Annotated[str | None, typer.Option("--tasks", help="Comma-separated tasks to judge (default: all shared).")] = None,
    exclude: Annotated[str | None, typer.Option("--exclude", help="Comma-separated tasks never judged (holdouts).")] = None,
) -> None:
    """Match pairs (same task, same repeat), anonymize their diffs, seed the sides, write the key."""
    from ..judging import prepare

    if len(sides) != 2:
        raise InputError(f"prepare takes exactly two RUN_DIR=ARM specs, got {len(sides)}", field="RUN=ARM",
                         fix="e.g. pluginbench judge prepare runs/r3=workflow-r3 runs/r2=vanilla ...")
    _refuse_same_side(sides)
    _check_criteria(criteria)
    key, omitted = prepare(sides[0], sides[1], tasks=_names(tasks), exclude=_names(exclude) or [],
                           criteria=criteria, seed=seed, output=output)
    for o in omitted:
        err_console.print(f"omitted {o.attempt_id} ({o.run}={o.arm}): {o.reason}", markup=False, highlight=False)
    console.print(f"prepared {len(key['pairs'])} pairs in {output} ({len(omitted)} attempts omitted)",
                  markup=False, highlight=False)


@judge_app.command("run")
@errors_to_exit_codes
def run_command(
    directory: Annotated[Path, typer.Argument(help="A directory made by `judge prepare`.")],
    judge: Annotated[list[str], typer.Option("--judge", help="HARNESS:MODEL:EFFORT (repeatable).")],
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=32, help="Calls at a time.")] = 1,
    timeout: Annotated[float, typer.Option("--timeout", min=10, help="Seconds per call.")] = 600.0,
    probe: Annotated[Path | None, typer.Option(
        "--probe", help="Test mode: serve this scenario on loopback and point the judges' CLIs at it.")] = None,
) -> None:
    """One read-only call per judge and pair; exits 2 while any verdict is missing (run again to retry)."""
    from ..judging import Prepared, parse_judge

    prepared = Prepared(directory)
    specs = list({s.name: s for s in (parse_judge(j) for j in judge)}.values())
    if probe is None:
        missing = _run_with(prepared, specs, jobs, timeout, None)
    else:
        from ..probe import ProbeServer, load_scenario

        with ProbeServer(load_scenario(probe)) as server:
            missing = _run_with(prepared, specs, jobs, timeout, server.base_url)
            server.wait_idle()
    if missing:
        err_console.print(f"{len(missing)} verdict(s) missing: " + ", ".join(f"{j}/{p}" for j, p in missing[:10]),
                          markup=False, highlight=False)
        err_console.print(f"fix: run `pluginbench judge run {directory}` again; it retries only the missing calls",
                          markup=False, highlight=False)
        raise typer.Exit(2)
    console.print(f"every judge has a verdict for every pair; tally with `pluginbench judge tally {directory}`",
                  markup=False, highlight=False)


def _run_with(prepared: Any, specs: list[Any], jobs: int, timeout: float, probe_url: str | None) -> list[Any]:
    import anyio

    from ..environments import make_environment
    from ..harness_registry import harness_class
    from ..harnesses import make_harness
    from ..judging import run_judges, save_specs
    from ..probe import cli_version, find_cli

    harnesses: dict[str, Any] = {}
    for spec in specs:  # every identity and credential check before any reservation
        try:
            harness_class(spec.harness).check_launch(spec.model, spec.effort)
        except InputError as exc:
            raise InputError(exc.message, field="--judge", fix=exc.fix) from None
        path = find_cli(spec.harness)
        if path is None:
            raise InputError(f"the {spec.harness} CLI is not installed", field="--judge",
                             fix="run tools/install-clis.sh (the pinned Claude Code and Codex CLIs)")
        version = cli_version(path)
        if version is None:
            raise InputError(f"{path} --version did not answer", field="--judge", fix="reinstall the CLI")
        harnesses[spec.name] = make_harness(spec.harness, cli_path=path, cli_version=version,
                                            probe_base_url=probe_url)
    # The sandbox boundary is mandatory: bubblewrap or no call at all (checked before any reservation).
    environment = make_environment("local", isolation="bubblewrap")
    from ..errors import EnvironmentFailure

    try:
        anyio.run(environment.check)
    except EnvironmentFailure as exc:
        raise InputError(f"judges need a sandbox: {exc}", field="environment",
                         fix="install bubblewrap (apt-get install bubblewrap) or allow user namespaces") from None
    save_specs(prepared, specs)

    def log(line: str) -> None:
        err_console.print(line, markup=False, highlight=False)

    return anyio.run(lambda: run_judges(prepared, specs, harnesses, environment, jobs=jobs, timeout=timeout, log=log))


@judge_app.command("tally")
@errors_to_exit_codes
def tally_command(
    directory: Annotated[Path, typer.Argument(help="A prepared directory whose judges all have verdicts.")],
    require_bound: Annotated[bool, typer.Option("--require-bound", help="Refuse unbound and needs-rebind verdicts.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print tally.json instead of the table.")] = False,
) -> None:
    """Unblind with the key: correctness decides first, then the judges' majority; per-judge side-A rate and agreement."""
    from ..judging import render_text, tally_dir

    result = tally_dir(directory, require_bound=require_bound)
    text = render_text(result)
    (directory / "tally.txt").write_text(text)
    if as_json:
        print_json(result)
    else:
        sys.stdout.write(visible(text))  # judges' answers are model text
