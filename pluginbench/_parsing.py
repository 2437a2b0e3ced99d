"""Small readers of hand-written or tool-written text that several packages share.

* :func:`value_at` and :func:`looks_numeric`: explaining a msgspec validation error of a
  YAML file (the config, a gates file) by the value at the field it names: ``1e3`` is text
  to YAML, and the error should say so.
* :func:`json_lines`: the JSON objects of a JSON-lines text (a CLI's trace or stream) and
  the lines that are not one (a torn last line...), for the measures and the viewer alike.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

_DECODE = msgspec.json.Decoder().decode
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
        except (msgspec.DecodeError, ValueError):
            try:
                obj = json.loads(line)
            except ValueError:
                bad.append(line)
                continue
        if isinstance(obj, dict):
            objs.append(obj)
        else:
            bad.append(line)
    return objs, bad
