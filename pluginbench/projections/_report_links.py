"""Links from report.html to the dashboard's attempt pages, live only where they resolve.

report.html is one deterministic file (rebuilt byte-identically) that is read in two ways:

* as a plain file (``report/report.html``, or inside a bundle): there is no server, so a
  link to an attempt page would be broken;
* through the dashboard at ``/run/{key}/report.html``, where ``attempt/<id>`` and
  ``side/<a>/<b>`` (relative) resolve to ``/run/{key}/attempt/<id>`` and
  ``/run/{key}/side/<a>/<b>``.

So the file carries each link as an anchor with no ``href``: ``<a class="pb-link"
data-href="attempt/<id>">``, which a browser shows as plain text, and the side-by-side
links sit in a ``.pb-side`` paragraph (in the paired comparison) that the report's CSS hides while its anchors have no
``href``. When the dashboard serves the file it turns every such anchor into a real link
(:func:`served_report`), a pure byte rewrite: the file on disk never changes.

The rewrite matches only the exact marker this module writes with a relative target of
``attempt/`` or ``side/`` and URL-quoted segments (no quote, ``<``, ``..`` or scheme can
pass), and every other text in the report is HTML-escaped, so nothing a run's agents
wrote can become a link.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape
from typing import Any
from urllib.parse import quote

_OPEN = '<a class="pb-link" data-href="'
#: one URL-quoted path segment (``quote(x, safe="")`` of a non-empty id), never ``.`` or ``..``
_SEGMENT = r"(?!\.\.?/)(?!\.\.?\")[A-Za-z0-9_.~%-]+"
_MARKER = re.compile(
    re.escape(_OPEN).encode() + rb"((?:attempt/" + _SEGMENT.encode() + rb")|(?:side/"
    + _SEGMENT.encode() + rb"/" + _SEGMENT.encode() + rb"))\"")
#: the report's CSS for its links: side-by-side links hidden in a plain file
CSS = ("a.pb-link[href]{color:var(--accent)}.pb-side{font-size:12px}"
       ".pb-side a:not([href]),.pb-side:not(:has(a[href])){display:none}")


def _seg(v: str) -> str:
    return quote(v, safe="")


def attempt_link(attempt_id: str, inner: str) -> str:
    """``inner`` (already HTML) as a link to the attempt page, live only when served."""
    return f'{_OPEN}attempt/{escape(_seg(attempt_id))}">{inner}</a>'


def side_link(left: str, right: str, inner: str) -> str:
    """``inner`` (already HTML) as a link to two attempts side by side, live only when served."""
    return f'{_OPEN}side/{escape(_seg(left))}/{escape(_seg(right))}">{inner}</a>'


def served_report(html: bytes) -> bytes:
    """report.html as the dashboard serves it: each marked anchor gets its relative ``href``."""
    return _MARKER.sub(lambda m: b'<a class="pb-link" href="' + m.group(1) + b'" data-href="' + m.group(1) + b'"', html)


def started(row: Mapping[str, Any]) -> bool:
    """Whether an attempt row has evidence to show (a pending attempt has no folder yet)."""
    return row.get("state") != "pending"


def _repeat_key(v: Any) -> tuple[int, str]:
    return (v, "") if isinstance(v, int) and not isinstance(v, bool) else (0, str(v))


def side_pairs(doc: Mapping[str, Any]) -> dict[str, str]:
    """Per treatment arm, a ``.pb-side`` paragraph linking each of its started attempts side by
    side with the started vanilla attempt of the same task and repeat (tasks in the report's
    order, then repeats)."""
    arms = list(doc["arms"])
    order = {t: i for i, t in enumerate(doc["tasks"])}
    base = arms[0]
    ids = {(r["task"], r["arm"], r["repeat"]): r["attempt_id"] for r in doc["attempts"] if started(r)}
    keys = sorted(((task, arm, rep) for task, arm, rep in ids if arm != base and arm in arms and task in order
                   and (task, base, rep) in ids), key=lambda k: (order[k[0]], _repeat_key(k[2])))
    out: dict[str, dict[str, list[str]]] = {}
    for task, arm, rep in keys:
        link = side_link(ids[(task, base, rep)], ids[(task, arm, rep)], escape(f"r{rep}"))
        out.setdefault(arm, {}).setdefault(task, []).append(link)
    return {arm: f'<p class="pb-side">Side by side with {escape(base)}: ' + " · ".join(
        f"{escape(task)} {' '.join(links)}" for task, links in per_task.items()) + "</p>" for arm, per_task in out.items()}
