"""``probe serve``: PluginBench's loopback model server in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import errors_to_exit_codes
from ._help import HelpWhenBareGroup

probe_app = typer.Typer(
    help="The loopback model server that drives the real CLIs in probe runs, doctor and tests.",
    no_args_is_help=True,
    cls=HelpWhenBareGroup,
)


@probe_app.command("serve")
@errors_to_exit_codes
def serve_command(
    scenario: Annotated[Path, typer.Option("--scenario", help="Scenario YAML/JSON (see pluginbench/probe/scenarios/).")],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free port).")] = 0,
    log: Annotated[Path | None, typer.Option("--log", help="Append every request record to this JSONL file.")] = None,
) -> None:
    """Serve a scenario on loopback until Ctrl-C, printing the base URL first."""
    from ..probe import load_scenario, serve_forever

    serve_forever(load_scenario(scenario), port, "127.0.0.1", log=log)
