"""``dashboard``: serve the local web view of every run under some folders."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import console, errors_to_exit_codes

if TYPE_CHECKING:
    from ..dashboard import Monitor


@errors_to_exit_codes
def dashboard_command(
    dirs: Annotated[list[Path], typer.Argument(help="Folders to search for run directories (for example runs/), or bundles (.tar.gz) made by `pluginbench bundle`, opened read-only.")],
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 8765,
) -> None:
    """Serve a live local web page of every run under the given folders.

    At http://127.0.0.1:<port>/: Runs, Results (filterable) and one page per run. Only
    reads; answers only on 127.0.0.1, to GET, with Host 127.0.0.1:<port> or
    localhost:<port>. Ctrl-C stops it."""
    from ..dashboard import check_port, check_roots
    from ..viewer import extract_bundle, is_bundle, remove_extracted

    opened: list[Path] = []
    try:
        folders = []
        for d in dirs:
            if is_bundle(d):  # unpacked read-only into a private folder, removed when the server stops
                import tempfile

                base = Path(tempfile.mkdtemp(prefix="pb-dashboard-bundle-"))
                opened.append(base)
                extract_bundle(d, base)
                folders.append(base)
            else:
                folders.append(d)
        roots = check_roots(folders)
        check_port(port)
        _serve(roots, port)
    finally:
        for base in opened:
            remove_extracted(base)


def _serve(roots: list[Path], port: int) -> None:
    import anyio

    from ..dashboard import serve

    def ready(monitor: Monitor) -> None:
        n = len(monitor.entries)
        console.print(f"dashboard: http://127.0.0.1:{port}/  ({n} run{'s' if n != 1 else ''} under "
                      f"{', '.join(str(r) for r in roots)}; Ctrl-C stops it)", highlight=False)

    anyio.run(serve, roots, port, ready, backend="asyncio")
    console.print("dashboard stopped")
