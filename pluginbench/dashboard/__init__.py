"""The dashboard projection: ``pluginbench dashboard <dir>...``, a live local web view.

Layout (one idea a module): ``_discovery`` finds run directories, ``_reader`` reads one
run (status through the shared status code, the ledger through aiosqlite),
``_monitor`` decides when to read each run again, ``_views`` turns reads into page
models (pure), ``_plots`` and ``_html`` turn models into markup (pure), ``_app`` is the
Starlette app and its guard, ``_server`` runs hypercorn and the monitor.
"""

from ._discovery import find_runs, run_key
from ._monitor import Monitor
from ._server import check_port, check_roots, serve

__all__ = ["Monitor", "check_port", "check_roots", "find_runs", "run_key", "serve"]
