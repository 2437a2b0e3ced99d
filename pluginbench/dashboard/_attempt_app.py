"""The dashboard's attempt routes: one attempt, two side by side, and an attempt's evidence files.

* ``/run/{key}/attempt/{id}`` (``?page=N`` pages the transcript, ``?thread=i.j&page=N`` one
  subagent thread of it): the facts
  ``pluginbench show`` prints (:func:`pluginbench.viewer.attempt_facts`), rendered by
  :mod:`._attempt_html`.
* ``/run/{key}/side/{a}/{b}``: two attempts of a run next to each other.
* ``/run/{key}/attempt/{id}/file/{path}``: one file of that attempt's evidence folder, as
  plain text, only when the id names a folder directly under ``evidence/attempts/`` (or
  ``discarded/``) and the path is plain names to a regular file with no symlink anywhere on
  the way (:mod:`pluginbench.viewer._evidence`). Nothing else in the run is reachable.

The guard in :mod:`._app` has already refused ``..``, backslashes and encoded separators.
Facts are cached per attempt while the run's files and the attempt's trace are unchanged,
so paging a long transcript reads it once.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..errors import PluginBenchError
from ..viewer import AttemptFacts, attempt_dir, attempt_facts, list_files, safe_file
from . import _html
from ._attempt_html import CSS, attempt_fragment, side_fragment
from ._headers import PAGE_CSP, SECURITY_HEADERS
from ._monitor import Monitor
from ._reader import file_signature

FILE_LIMIT = 16 << 20
_CACHE: OrderedDict[tuple[Any, ...], AttemptFacts] = OrderedDict()
_CACHE_SIZE = 16


def _facts(root: Path, attempt_id: str) -> AttemptFacts | None:
    folder = attempt_dir(root, attempt_id)
    if folder is None:
        return None
    stamp = (str(root), attempt_id, file_signature(root), tuple(list_files(folder / "agent")),
             os.stat(folder, follow_symlinks=False).st_mtime_ns)
    got = _CACHE.get(stamp)
    if got is None:
        got = attempt_facts(root, attempt_id)
        _CACHE[stamp] = got
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(stamp)
    return got


def _page(title: str, fragment: str, code: int = 200) -> HTMLResponse:
    return HTMLResponse(_html.page(title, f"<style>{CSS}</style>{fragment}", live=False), status_code=code,
                        headers={**SECURITY_HEADERS, "Content-Security-Policy": PAGE_CSP})


def _not_found(why: str) -> HTMLResponse:
    from html import escape

    return _page("Not found", f"<h1>Not found</h1><p>{escape(why)}</p>", 404)


def _others(status: dict[str, Any] | None, facts: AttemptFacts) -> list[tuple[str, str]]:
    """Attempts of the same task in other arms: the same repeat first."""
    rows = [a for a in (status or {}).get("attempts") or []
            if a.get("task") == facts.task and a.get("arm") != facts.arm and a.get("id") != facts.attempt_id]
    rows.sort(key=lambda a: (a.get("repeat") != facts.repeat, str(a.get("arm")), a.get("repeat") or 0))
    return [(str(a["id"]), str(a.get("arm"))) for a in rows[:8]]


def attempt_routes(monitor: Monitor) -> list[Route]:
    async def attempt(request: Request) -> Response:
        key, aid = request.path_params["key"], request.path_params["id"]
        entry = monitor.entries.get(key)
        if entry is None:
            return _not_found("no such run (runs are searched again every 10 s)")
        try:
            page = int(request.query_params.get("page", "1"))
        except ValueError:
            page = 1
        try:
            facts = await anyio.to_thread.run_sync(_facts, entry.root, aid)
        except (PluginBenchError, OSError, ValueError) as exc:
            return _not_found(f"the attempt cannot be read: {exc}")
        if facts is None:
            return _not_found(f"no attempt {aid} in this run")
        name = facts.run
        thread = request.query_params.get("thread") or None
        return _page(f"{aid} · {name}", attempt_fragment(key, name, facts, page, _others(entry.status, facts), thread))

    async def side(request: Request) -> Response:
        key = request.path_params["key"]
        entry = monitor.entries.get(key)
        if entry is None:
            return _not_found("no such run")
        got = []
        for aid in (request.path_params["a"], request.path_params["b"]):
            try:
                f = await anyio.to_thread.run_sync(_facts, entry.root, aid)
            except (PluginBenchError, OSError, ValueError) as exc:
                return _not_found(f"{aid} cannot be read: {exc}")
            if f is None:
                return _not_found(f"no attempt {aid} in this run")
            got.append(f)
        return _page(f"side by side · {got[0].run}", side_fragment(key, got[0].run, got[0], got[1]))

    async def evidence_file(request: Request) -> Response:
        key, aid, rel = request.path_params["key"], request.path_params["id"], request.path_params["path"]
        entry = monitor.entries.get(key)
        refused = PlainTextResponse("not found (only a regular file inside this attempt's evidence, no symlink)\n",
                                    status_code=404, headers=SECURITY_HEADERS)
        if entry is None:
            return refused

        def read() -> bytes | None:
            folder = attempt_dir(entry.root, aid)
            path = None if folder is None else safe_file(folder, rel)
            if path is None:
                return None
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as fh:
                    return fh.read(FILE_LIMIT)
            except OSError:
                return None

        data = await anyio.to_thread.run_sync(read)
        if data is None:
            return refused
        # always plain text: an agent-written .html or .svg must never render as a page
        return Response(data, media_type="text/plain; charset=utf-8",
                        headers={**SECURITY_HEADERS, "Content-Security-Policy": "default-src 'none'; sandbox"})

    return [
        Route("/run/{key}/attempt/{id}", attempt, methods=["GET"]),
        Route("/run/{key}/attempt/{id}/file/{path:path}", evidence_file, methods=["GET"]),
        Route("/run/{key}/side/{a}/{b}", side, methods=["GET"]),
    ]
