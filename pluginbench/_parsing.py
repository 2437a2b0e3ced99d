"""Small readers of hand-written or tool-written text that several packages share.

* :func:`value_at` and :func:`looks_numeric`: explaining a msgspec validation error of a
  YAML file (the config, a gates file) by the value at the field it names: ``1e3`` is text
  to YAML, and the error should say so.
* :func:`json_lines`: the JSON objects of a JSON-lines text (a CLI's trace or stream) and
  the lines that are not one (a torn last line...), for the measures and the viewer alike.
* :func:`loads_json`: :func:`json.loads` for text an agent or a task wrote (a CLI's stream,
  a transcript, a reward file): a document nested deeper than :data:`MAX_JSON_DEPTH` is a
  :class:`json.JSONDecodeError` like any other undecodable text, never a ``RecursionError``
  that ends the attempt's parsing (or a later recursive walk of what it returned).
* :func:`visible`: text an agent or a task wrote, made safe to write to a terminal or to
  ``run.log`` (which a person reads with ``tail``): control characters written as text.
* :func:`file_tail`: the end of an output file a sandbox wrote (it may be as large as the
  output bound), read without loading the rest.
* :func:`load_yaml`: YAML parsed by libyaml when PyYAML has it, refusals worded by the Python
  loader (a run's config and probe scenario).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec

_DECODE = msgspec.json.Decoder().decode

#: What :func:`visible` writes for each character a terminal would act on: every C0 and C1
#: control character but newline and tab (``\x1b`` starts CSI, OSC 8 links, OSC 52 clipboard
#: writes, titles; ``\r`` overwrites a line) and the bidirectional overrides and isolates
#: (U+202A-U+202E, U+2066-U+2069) that reorder what a line seems to say.
CONTROL_CHARS = {c: f"\\x{c:02x}" for c in (*range(0, 9), *range(11, 32), *range(127, 160))} | {
    c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def git_lines(text: str, keepends: bool = False) -> list[str]:
    """``text`` split into lines at ``\\n`` only, as git writes a patch and compilers number a
    file's lines. ``str.splitlines`` also splits at ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``,
    ``\\x85``, ``\\u2028``, ``\\u2029`` and a lone ``\\r``, which a file's content may hold
    inside one of its lines (a form feed in a comment): split there, the rest of such a line
    could pass for a patch header or shift every line number after it. Without ``keepends``
    a line's ending ``\\r\\n`` is removed whole, as ``splitlines`` removes it; with it, the
    lines joined give ``text`` back."""
    parts = text.split("\n")
    if keepends:
        lines = [p + "\n" for p in parts[:-1]]
        return [*lines, parts[-1]] if parts[-1] else lines
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def visible(text: str) -> str:
    """``text`` with every character of :data:`CONTROL_CHARS` written as text (``\\x1b``)."""
    return text.translate(CONTROL_CHARS)


_PATH_PART = re.compile(r"[^.\[\]]+|\[\d+\]")


def value_at(raw: Any, field: str | None) -> Any:
    """The node of parsed YAML/JSON ``raw`` at a dotted field path (``runner.limits[0].x``),
    or None when the path does not lead anywhere."""
    node = raw
    for part in _PATH_PART.findall(field or ""):
        try:
            node = node[int(part[1:-1])] if part.startswith("[") else node[part]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return node


def looks_numeric(text: str) -> bool:
    """Whether ``text`` reads as a number (``"1e3"``, ``" 2.5 "``): a string YAML did not
    take as one, so the error can say why."""
    try:
        float(text.strip())
    except ValueError:
        return False
    return True


#: The deepest nesting a JSON document read from an agent's or a task's files may have: a
#: CLI's records nest a few levels, and Python's parser (and every recursive walk after it)
#: fails with a RecursionError near 1,000.
MAX_JSON_DEPTH = 200


def _too_deep(text: str | bytes, value: Any) -> bool:
    """Whether ``value`` (decoded from ``text``) nests deeper than :data:`MAX_JSON_DEPTH`;
    only walked when ``text`` has that many opening brackets at all."""
    opening = (text.count(b"[") + text.count(b"{")) if isinstance(text, bytes) else text.count("[") + text.count("{")
    if opening <= MAX_JSON_DEPTH:
        return False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > MAX_JSON_DEPTH:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def _too_deep_error(text: str | bytes) -> json.JSONDecodeError:
    doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
    return json.JSONDecodeError(f"nested more than {MAX_JSON_DEPTH} levels deep", doc[:200], 0)


def loads_json(text: str | bytes) -> Any:
    """:func:`json.loads` of ``text``; nesting deeper than :data:`MAX_JSON_DEPTH` raises
    :class:`json.JSONDecodeError` (a ``ValueError``), as undecodable text does."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep_error(text) from None
    if _too_deep(text, value):
        raise _too_deep_error(text)
    return value


def json_lines(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The JSON objects of the non-blank lines of ``text``, in order, and the lines that are
    not a JSON object. Accepts exactly what :func:`json.loads` accepts (``NaN`` included);
    msgspec decodes the common case fast."""
    objs: list[dict[str, Any]] = []
    bad: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            obj = _DECODE(line)
        except (msgspec.DecodeError, ValueError, RecursionError):
            try:
                obj = loads_json(line)
            except ValueError:
                bad.append(line)
                continue
        if isinstance(obj, dict) and not _too_deep(line, obj):
            objs.append(obj)
        else:
            bad.append(line)
    return objs, bad


def file_tail(path: Path, window: int = 65536) -> str:
    """The text of the last ``window`` bytes of ``path`` (empty when it cannot be read):
    for the end of a command's output file, whose size a sandbox controls."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - window))
            return fh.read(window).decode("utf-8", errors="replace")
    except OSError:
        return ""


def load_yaml(text: str, python_loader: Any, c_loader: Any = None) -> Any:
    """``text`` parsed by ``c_loader`` (libyaml's parser under the same constructors and
    resolver as ``python_loader``; None when PyYAML has no libyaml), ~10x faster than in
    Python. Text it refuses is parsed again by ``python_loader``, so every refusal (syntax,
    or a constructor's) reads word for word as the Python loader words it."""
    import yaml  # its callers have it loaded; this module's other readers need no YAML

    if c_loader is not None:
        try:
            return yaml.load(text, Loader=c_loader)  # noqa: S506 - callers pass safe loaders only
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=python_loader)  # noqa: S506 - callers pass safe loaders only
