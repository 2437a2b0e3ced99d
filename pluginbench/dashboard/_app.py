"""The dashboard's HTTP surface: a Starlette app behind a guard.

The guard answers before any route: only GET and HEAD (anything else 405), only a Host
of ``127.0.0.1:<port>`` or ``localhost:<port>`` (anything else 403, which also defeats DNS
rebinding), no request a browser marks as coming from another site (403), and no
``..``, backslash or encoded separator in the path (400). Files are
served only as a known run's ``report/report.html`` (its attempt links made live, see
:func:`pluginbench.projections.served_report`) and ``report/results.csv`` looked up
by its key, never from a path in the URL, and never through a symlink.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from ..errors import PluginBenchError
from ..projections import served_report
from ..rundir import RunDir
from ..status import left_running_check
from . import _html
from ._attempt_app import attempt_routes
from ._headers import PAGE_CSP, SECURITY_HEADERS
from ._monitor import Monitor
from ._views import FILTERS, cross_matrices, results_model, run_model, runs_model

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]], Awaitable[None]]
ALLOWED_METHODS = ("GET", "HEAD")
SERVED_FILES = {"report.html": "text/html; charset=utf-8", "results.csv": "text/csv; charset=utf-8"}


def refusal(scope: Scope, port: int) -> tuple[int, str, dict[str, str]] | None:
    """Why the guard refuses this request, or ``None`` (pure)."""
    if scope["type"] != "http":
        return 403, "only HTTP GET is served", {}
    if scope["method"] not in ALLOWED_METHODS:
        return 405, f"{scope['method']} is refused: the dashboard only reads (GET)", {"Allow": "GET, HEAD"}
    hosts = [v for k, v in scope.get("headers", []) if k.lower() == b"host"]
    allowed = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
    if len(hosts) != 1 or hosts[0].lower() not in allowed:
        return 403, f"refused: Host must be 127.0.0.1:{port} or localhost:{port}", {}
    fetch_site = [v for k, v in scope.get("headers", []) if k.lower() == b"sec-fetch-site"]
    if fetch_site and fetch_site[0].lower() == b"cross-site":
        return 403, "refused: a request from another site", {}
    raw = bytes(scope.get("raw_path") or scope["path"].encode())
    lowered = raw.lower()
    segments = scope["path"].split("/")
    if ".." in segments or "\\" in scope["path"] or "\x00" in scope["path"] or any(
        s in lowered for s in (b"%2e", b"%2f", b"%5c", b"%00")
    ):
        return 400, "refused: the path holds '..', a backslash or an encoded separator", {}
    return None


class Guard:
    def __init__(self, app: ASGIApp, port: int) -> None:
        self.app = app
        self.port = port

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        why = refusal(scope, self.port)
        if why is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        code, text, extra = why
        await PlainTextResponse(text + "\n", status_code=code, headers={**SECURITY_HEADERS, **extra})(scope, receive, send)


def _html_response(title: str, fragment: str, status_code: int = 200, *, live: bool = True) -> HTMLResponse:
    return HTMLResponse(_html.page(title, fragment, live=live and status_code == 200), status_code=status_code,
                        headers={**SECURITY_HEADERS, "Content-Security-Policy": PAGE_CSP})


def _filters(query: str) -> dict[str, str]:
    names = dict(FILTERS)
    return {k: v for k, v in parse_qsl(query) if k in names and v}


def render(monitor: Monitor, path: str, query: str) -> tuple[int, str, str]:
    """(status code, title, fragment) of a page; the page routes and the live stream
    both use it, so a pushed update is exactly what a reload would show."""
    if path == "/":
        sources = monitor.sources()
        return 200, "Runs", _html.runs_fragment(runs_model(sources), cross_matrices(sources))
    if path == "/results":
        return 200, "Results", _html.results_fragment(results_model(monitor.sources(), _filters(query)))
    parts = path.split("/")
    if len(parts) == 3 and parts[1] == "run":
        src = monitor.source(parts[2])
        if src is not None:
            model = run_model(src)
            return 200, model.name, _html.run_fragment(model)
    return 404, "Not found", '<h1>Not found</h1><p>no such page or run (runs are searched again every 10 s)</p>'


def build_app(monitor: Monitor, port: int) -> ASGIApp:
    async def page(request: Request) -> Response:
        code, title, fragment = render(monitor, request.url.path, request.url.query)
        return _html_response(title, fragment, code)

    async def app_js(request: Request) -> Response:
        return Response(_html.APP_JS, media_type="text/javascript", headers=SECURITY_HEADERS)

    async def run_file(request: Request) -> Response:
        key, name = request.path_params["key"], request.path_params["name"]
        src = monitor.source(key)
        if src is None or name not in SERVED_FILES:
            return PlainTextResponse("not found\n", status_code=404, headers=SECURITY_HEADERS)
        path: Path = RunDir(monitor.entries[key].root).report_dir / name

        def read() -> bytes | None:
            try:
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode) or os.path.islink(path.parent):
                    return None
                return path.read_bytes()
            except OSError:
                return None

        data = await anyio.to_thread.run_sync(read)
        if data is None:
            return PlainTextResponse(f"{name} does not exist yet (pluginbench report builds it)\n",
                                     status_code=404, headers=SECURITY_HEADERS)
        # The report is a run's own file, built from what its agents wrote: the same CSP
        # as the dashboard's pages keeps anything in it from running or reaching out. Its
        # attempt and side-by-side anchors get their relative href only here, where
        # they resolve (pluginbench.projections._report_links); the file never changes.
        if name == "report.html":
            data = served_report(data)
        return Response(data, media_type=SERVED_FILES[name],
                        headers={**SECURITY_HEADERS, "Content-Security-Policy": PAGE_CSP})

    async def left_running(request: Request) -> Response:
        key = request.path_params["key"]
        entry = monitor.entries.get(key)
        source = monitor.source(key)
        if entry is None or source is None:
            return _html_response("Not found", "<h1>Not found</h1>", 404)
        name = run_model(source).name
        if entry.active:
            fragment = _html.left_running_fragment(key, name, None, "a live process owns this run: nothing is left running")
        else:
            try:
                result = await anyio.to_thread.run_sync(left_running_check, entry.root)
                fragment = _html.left_running_fragment(key, name, result)
            except (PluginBenchError, OSError) as exc:  # a run whose log cannot be read
                fragment = _html.left_running_fragment(key, name, None, f"could not check: {exc}")
        return _html_response("Containers left running", fragment, live=False)

    async def live(request: Request) -> Response:
        target = urlsplit(request.query_params.get("page", "/"))
        if refusal({"type": "http", "method": "GET", "path": target.path,
                    "headers": [(b"host", f"127.0.0.1:{port}".encode())]}, port):
            return PlainTextResponse("refused\n", status_code=400, headers=SECURITY_HEADERS)

        async def stream() -> Any:
            sent = request.query_params.get("v")  # the version the page already shows
            seen: tuple[object, ...] | None = None
            generation = monitor.generation
            while not monitor.closed:
                version = monitor.version_of(target.path)
                if version != seen:
                    seen = version
                    _code, _title, fragment = render(monitor, target.path, target.query)
                    digest = _html.fragment_version(fragment)
                    if digest != sent:
                        sent = digest
                        yield f"event: page\ndata: {json.dumps({'html': fragment})}\n\n"
                new = await monitor.wait_for_change(generation, timeout=15)
                if new == generation and not monitor.closed:
                    yield ": keep-alive\n\n"
                generation = new

        return StreamingResponse(stream(), media_type="text/event-stream", headers=SECURITY_HEADERS)

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/results", page, methods=["GET"]),
        Route("/app.js", app_js, methods=["GET"]),
        Route("/live", live, methods=["GET"]),
        Route("/run/{key}", page, methods=["GET"]),
        Route("/run/{key}/left-running", left_running, methods=["GET"]),
        *attempt_routes(monitor),
        Route("/run/{key}/{name}", run_file, methods=["GET"]),
    ]
    inner = Starlette(routes=routes)
    return Guard(inner, port)
