"""The report's two data files as text: ``results.json`` and ``results.csv``.

Both are written a batch of rows at a time (:func:`write_json`, :func:`write_csv`), with the
bytes of the whole-text functions (:func:`json_text`, :func:`csv_text`): the JSON is
``json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)`` plus a
newline, the CSV is :mod:`csv`'s ``writer`` with ``lineterminator="\n"``. Pure: text in,
text out.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from typing import Any, TextIO

import msgspec

from ..measures import collected_columns
from ._report_data import TOKEN_FIELDS, expected_measures

__all__ = ["CSV_HEADER", "csv_text", "json_text", "write_csv", "write_json"]

CSV_HEADER = (
    "run",
    "attempt_id",
    "task",
    "arm",
    "repeat",
    "outcome",
    "measure",
    "value",
    "unit",
    "status",
    "reason",
    "language",
    "analyzer",
)


#: Rows of a list written in one piece by :func:`write_json` (bounds the text held at once).
_BATCH = 2_000


def _indented(value: Any, depth: int) -> str:
    """``value`` as ``json.dumps(..., indent=2)`` writes it ``depth`` levels down (sorted keys)."""
    compact = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    text = msgspec.json.format(compact, indent=2)
    return text.replace("\n", "\n" + "  " * depth) if depth else text  # a newline is only ever layout here


#: Where msgspec writes a float unlike ``repr`` (``json.dumps``) does: with an exponent
#: ("1e16", "1e-7": repr writes "1e+16", "1e-07") or in fixed notation below 1e-4
#: ("0.00001": repr writes "1e-05"). Elsewhere both write the shortest round-trip digits.
#: A number token follows ``:``, ``,``, ``[`` or starts the text; a string that looks like one only costs a fallback.
_FLOAT_UNLIKE_REPR = re.compile(rb"(?:^|[:,\[])-?(?:[0-9]+(?:\.[0-9]+)?e|0\.0000)")
#: A cheap first look for the same: an exponent's ``e`` then a digit or sign (or "0.0000",
#: looked for apart: one pattern with both is six times slower).
_MAYBE_EXPONENT = re.compile(rb"e[-0-9]")
#: A float64 in msgpack (0xcb, big-endian) whose exponent bits are all set: NaN or ±infinity.
_MAYBE_NONFINITE = re.compile(rb"\xcb[\x7f\xff][\xf0-\xff]")
_SORTED = msgspec.json.Encoder(order="sorted")


def _compact_rows(value: Any) -> bytes:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False,
    separators=(",", ":"))`` as UTF-8, for the rows of a long list or dict (plain dicts,
    lists, strings, numbers): msgspec writes the same keys in the same order with the same
    escapes about six times cheaper. Where its bytes could differ (a float msgspec writes
    unlike ``repr``, a NaN or infinity ``json.dumps`` refuses, a key that is not a string)
    the text is ``json.dumps``' own, so its bytes and its errors are the same."""
    try:
        out = _SORTED.encode(value)
        same = (((_MAYBE_EXPONENT.search(out) is None and b"0.0000" not in out) or _FLOAT_UNLIKE_REPR.search(out) is None)
                and _MAYBE_NONFINITE.search(msgspec.msgpack.encode(value)) is None)
    except (TypeError, OverflowError):  # a non-string key; an int msgpack cannot hold (json.dumps writes both)
        same = False
    if not same:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":")).encode("utf-8")
    return out


def _indented_rows(value: Any, depth: int) -> str:
    """:func:`_indented` of a batch of rows, encoded by :func:`_compact_rows`."""
    text = msgspec.json.format(_compact_rows(value), indent=2)
    return (text.replace(b"\n", b"\n" + b"  " * depth) if depth else text).decode("utf-8")


#: How deep :func:`write_json` writes dicts key by key (below, each value is written whole).
_STREAM_DEPTH = 3


#: Up to this many attempts :func:`write_json` writes :func:`json_text` in one piece (a
#: small document: its text is small, and a piece at a time costs more than the whole).
_WHOLE_MAX_ATTEMPTS = 100


def write_json(out: TextIO, doc: Mapping[str, Any]) -> None:
    """Write :func:`json_text` of ``doc`` to ``out`` a piece at a time: the dicts of the top
    levels key by key, and a long list (``attempts``) or a dict of many keys
    (``costs.attempts``) a batch at a time, so the whole text, or the text of one section,
    is never held (a document of at most :data:`_WHOLE_MAX_ATTEMPTS` attempts is written
    whole). Same bytes as :func:`json_text`."""
    attempts = doc.get("attempts")
    if not isinstance(attempts, list) or len(attempts) <= _WHOLE_MAX_ATTEMPTS:
        out.write(json_text(doc))
        return
    _write_value(out, doc, 0)
    out.write("\n")


def _write_value(out: TextIO, value: Any, depth: int) -> None:
    pad = "  " * depth
    if isinstance(value, dict) and value and depth < _STREAM_DEPTH:
        if len(value) <= _BATCH:
            out.write("{")
            for i, key in enumerate(sorted(value)):
                out.write(("," if i else "") + "\n" + pad + "  " + json.dumps(key, ensure_ascii=False) + ": ")
                _write_value(out, value[key], depth + 1)
        else:
            keys = sorted(value)
            out.write("{")
            for start in range(0, len(keys), _BATCH):
                batch = {k: value[k] for k in keys[start:start + _BATCH]}
                out.write(("," if start else "") + _indented_rows(batch, depth)[1:-len("\n" + pad + "}")])
        out.write("\n" + pad + "}")
    elif isinstance(value, list) and len(value) > _BATCH and depth < _STREAM_DEPTH:
        out.write("[")
        for start in range(0, len(value), _BATCH):
            inner = _indented_rows(value[start:start + _BATCH], depth)[1:-len("\n" + pad + "]")]  # without [ and ]
            out.write(("," if start else "") + inner)
        out.write("\n" + pad + "]")
    else:
        out.write(_indented(value, depth))


def json_text(doc: Mapping[str, Any]) -> str:
    """results.json bytes-to-be: sorted keys, two-space indent, UTF-8, trailing newline.

    The text of ``json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False,
    allow_nan=False)``: the standard library's C encoder writes it compact (the same
    number and string tokens; its indenting encoder is pure Python, a minute at a million
    events) and msgspec indents it (whitespace only)."""
    compact = json.dumps(doc, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return msgspec.json.format(compact, indent=2) + "\n"


_NO_GROUP = ("", "")


def _cell(v: Any) -> str:
    return "" if v is None else str(v)


def csv_text(doc: Mapping[str, Any]) -> str:
    """results.csv: one row per attempt × measure; an unknown value is an empty cell."""
    buf = io.StringIO()
    write_csv(buf, doc)
    return buf.getvalue()


def write_csv(out: TextIO, doc: Mapping[str, Any]) -> None:
    """Write :func:`csv_text` of ``doc`` to ``out`` a row at a time."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEADER)
    name = doc["run"]["name"]
    expected = expected_measures(doc["run"])
    units = {c.metric: c.unit for c in collected_columns(doc["run"]["measurements"])}
    fields = _CsvFields()
    for r in doc["attempts"]:
        head = (name, r["attempt_id"], r["task"], r["arm"], r["repeat"], _cell(r["outcome"]))
        not_done = r["outcome_reason"] if r["state"] != "complete" else None
        t = r["tokens"]
        cells = [
            (
                "reward",
                r["reward"],
                "",
                "measured" if r["reward"] is not None else "unknown",
                not_done or (r["outcome_reason"] if r["reward"] is None else None),
            )
        ]
        for k, _ in TOKEN_FIELDS:
            known = t[k] is not None
            cells.append(
                (
                    f"tokens.{k}",
                    t[k],
                    "tokens",
                    t["status"] if known else "unknown",
                    t["reason"] if t["reason"] or known else "not reported by the harness",
                )
            )
        native = t.get("native_session")
        for k, _ in TOKEN_FIELDS if native is not None else ():
            known = native[k] is not None
            cells.append(
                (
                    f"native_session_tokens.{k}",
                    native[k],
                    "tokens",
                    native["status"] if known else "unknown",
                    native["label"] if known else (native["reason"] or "not reported by the harness"),
                )
            )
        cells.append(
            (
                "coding_seconds",
                r["coding_seconds"],
                "s",
                "measured" if r["coding_seconds"] is not None else "unknown",
                None if r["coding_seconds"] is not None else "no coding time was recorded",
            )
        )
        measures = dict(r["measures"])
        if r["state"] == "complete":
            for n in expected:
                measures.setdefault(
                    n,
                    {
                        "value": None,
                        "unit": units.get(n, ""),
                        "status": "unknown",
                        "reason": "not collected for this attempt",
                    },
                )
        groups: dict[str, tuple[str, str]] = {}  # code measures: the language and analyzer each value was measured with
        for n, m in sorted(measures.items()):
            cells.append((f"measures.{n}", m["value"], m["unit"], m["status"], m["reason"]))
            groups[f"measures.{n}"] = (_cell(m.get("language")), _cell(m.get("analyzer")))
        for n, v in sorted((r.get("native_grading") or {}).items()):
            cells.append((f"native.{n}", v, "", "measured", None))
        so = r.get("source_only_grading")
        if so is not None:
            cells.append(("source_only.reward", r["source_only_reward"], "",
                          "measured" if r["source_only_reward"] is not None else so["status"], so["reason"]))
        # The rows as csv.writer writes them (None an empty cell, any other value str(), a
        # field quoted when it holds a comma, a quote or a line break), joined here: the text
        # of the attempt's first six fields once, each other field's quoting looked up.
        lead = ",".join([_field(head[0], fields), _field(head[1], fields), _field(head[2], fields),
                         _field(head[3], fields), _value(head[4], fields), _field(head[5], fields), ""])
        if not_done:
            tail = f",unknown,{_field(not_done, fields)},"
            out.write("".join([f"{lead}{fields[measure]},{_value(value, fields)},{_field(unit, fields)}{tail}"
                               f"{(g := groups.get(measure, _NO_GROUP))[0] and fields[g[0]]},{g[1] and fields[g[1]]}\n"
                               for measure, value, unit, _, _ in cells]))
        else:
            out.write("".join([f"{lead}{fields[measure]},{_value(value, fields)},{_field(unit, fields)},"
                               f"{_field(status, fields)},{_field(reason, fields)},"
                               f"{(g := groups.get(measure, _NO_GROUP))[0] and fields[g[0]]},{g[1] and fields[g[1]]}\n"
                               for measure, value, unit, status, reason in cells]))


#: Characters that make csv.writer (``QUOTE_MINIMAL``, ``,``, ``"``, ``lineterminator="\n"``)
#: quote a field (a superset: csv.writer itself decides for a field holding one).
_CSV_SPECIAL = re.compile(r'[,"\r\n]')


class _CsvFields(dict[str, str]):
    """A field's text as csv.writer writes it in a row of more than one field, looked up
    (the first 65,536 distinct texts are remembered)."""

    def __missing__(self, text: str) -> str:
        if _CSV_SPECIAL.search(text) is None:
            quoted = text
        else:
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow([text, ""])
            quoted = buf.getvalue()[:-2]  # without the empty last field and the line's end
        if len(self) < 65_536:
            self[text] = quoted
        return quoted


def _field(v: Any, fields: _CsvFields) -> str:
    return "" if v is None else fields[v if type(v) is str else str(v)]


def _value(v: Any, fields: _CsvFields) -> str:
    t = type(v)
    return str(v) if t is int or t is float else _field(v, fields)  # a number's text holds nothing csv quotes
