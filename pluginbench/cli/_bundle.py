"""``pluginbench bundle <run> [-o file.tar.gz]``: a shareable, scrubbed copy of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..viewer import write_bundle
from ._common import console, errors_to_exit_codes, print_json


@errors_to_exit_codes
def bundle_command(
    run: Annotated[Path, typer.Argument(help="A run directory.")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="The archive to write (default: <run>.bundle.tar.gz beside the run).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write a self-contained, shareable copy of a run: events, results, report, receipts,
    patches, transcripts and grading output, with delivered credentials and token-like
    strings redacted and host paths and the user name replaced; a manifest of sha256s and a
    note of what was removed go inside. Refuses (exit 1, nothing written) when a scan still
    finds a secret. Open it with `show`, `report` or `dashboard`."""
    root = run.absolute()
    out = output if output is not None else root.parent / f"{root.name}.bundle.tar.gz"
    result = write_bundle(root, out.absolute())
    if json_out:
        print_json(result)
        return
    replaced = ", ".join(f"{v} {k}" for k, v in sorted(result.replaced.items())) or "nothing"
    console.print(f"bundle: {result.path} ({result.files} files, {result.bytes:,} bytes)\n"
                  f"replaced: {replaced}; left out: {result.excluded} entries (see bundle/NOTE.md inside)",
                  highlight=False, markup=False)
