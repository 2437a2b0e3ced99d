"""The small pieces report.html is written with: escaping, unknown cells, number texts,
table rows and tables, and which registered measure columns a page shows.

Every text goes through :func:`html.escape` (:func:`_e`); an unknown value reads
"unknown" (:data:`UNKNOWN`), never 0.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape
from typing import Any

from ..measures import Column, all_columns, collected_columns

UNKNOWN = '<span class="unknown">unknown</span>'


def csp_meta(css: str) -> str:
    """The report page's Content-Security-Policy, as the first element after its charset: nothing
    loads or runs (``default-src 'none'``: no script, image, font, frame or network request at
    all) but the page's one inline ``<style>``, allowed by its SHA-256 (``css`` is that
    element's exact text), with no ``<base>`` and no form target. Links still navigate."""
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    return ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            f"style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'\">")


def _e(v: Any) -> str:
    return escape(str(v), quote=True)


def _or_unknown(v: Any, fmt: Callable[[Any], str] = lambda x: _e(x)) -> str:
    return UNKNOWN if v is None else fmt(v)


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def _native_session(t: dict[str, Any]) -> str:
    """Beside an unknown total: the native CLI session's own total, labelled."""
    native = t.get("native_session")
    if native is None:
        return ""
    return f'<br><small title="{_e(native["label"])}">native session: {_or_unknown(native["total"], _tokens)}</small>'


def _tokens(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.1f}"


def _pp(d: float) -> str:
    return "±0 pp" if d == 0 else f"{d * 100:+.0f} pp"


def _signed(d: float | None, text: str, *, higher_is_better: bool = True, coloured: bool = True) -> str:
    if d is None or not coloured:
        return text
    cls = "flat" if d == 0 else ("good" if (d > 0) == higher_is_better else "bad")
    return f'<span class="{cls}">{text}</span>'


def _row(cells: Iterable[str], tag: str = "td") -> str:
    return (
        "<tr>"
        + "".join(c if c.startswith("<t") else f"<{tag}>{c}</{tag}>" for c in cells)
        + "</tr>"
    )


def _table(head: Sequence[str], rows: Iterable[Iterable[str]], table_id: str) -> str:
    body = "".join(_row(r) for r in rows)
    return (
        f'<table id="{table_id}"><thead>{_row((_e(h) for h in head), "th")}</thead>'
        f"<tbody>{body}</tbody></table>"
    )


def _shown_columns(doc: Mapping[str, Any], present: set[str]) -> tuple[Column, ...]:
    """Registered collector columns, in registry order, that the run selects or ``present`` holds."""
    chosen = {c.metric for c in collected_columns(doc.get("run", {}).get("measurements", ()))}
    return tuple(c for c in all_columns() if c.metric in chosen or c.metric in present)
