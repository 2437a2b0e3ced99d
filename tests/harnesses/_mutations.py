"""Mutations of recorded CLI output for the parsers' fuzz tests: every value of every JSON line
(and the line itself) replaced, one at a time, by a value of a type the CLI never writes there:
wrong types, huge and non-finite numbers, empty and multi-line text, deep nesting."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any


def _deep(n: int, leaf: Any) -> Any:
    for _ in range(n):
        leaf = [leaf]
    return leaf


def _deep_dict(n: int) -> Any:
    leaf: Any = 1
    for _ in range(n):
        leaf = {"message": leaf}
    return leaf


#: the values put in place of each field (nesting stays under loads_json's 200 levels, so the
#: line still decodes and the parse itself must cope)
HOSTILE: tuple[Any, ...] = (
    1, -1, 0, 2**64, 10**300, 1.5, 1e308, float("inf"), float("nan"), True, None, "", "\n", "x",
    [], [1], {}, {"message": 1}, _deep(150, 1), _deep_dict(150),
)


def _paths(doc: Any, prefix: tuple[Any, ...] = (), depth: int = 6) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if depth == 0:
        return
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k), depth - 1)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield from _paths(v, (*prefix, i), depth - 1)


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def mutate_document(text: str) -> Iterator[str]:
    """One JSON document with one value replaced (every path, every hostile value)."""
    doc = json.loads(text)
    for path in _paths(doc):
        for value in HOSTILE:
            yield json.dumps(_replace(doc, path, value))


def mutate_lines(text: str) -> Iterator[str]:
    """A JSON-lines text with one value of one line replaced (every line, path and hostile value)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        for mutated in mutate_document(line):
            yield "\n".join([*lines[:i], mutated, *lines[i + 1:]]) + "\n"


def crash_sites(files: dict[str, str], kinds: dict[str, str], parse: Callable[[dict[str, str]], object],
                package: str = "pluginbench") -> tuple[int, dict[str, str]]:
    """Run ``parse`` on every mutation of each file ``kinds`` names (``lines`` or ``document``);
    return the number of mutations and each distinct crash site (innermost frame in
    ``package``: ``file:line``) with one example exception."""
    import traceback

    count, sites = 0, {}
    for name, kind in kinds.items():
        text = files[name]
        mutations = mutate_lines(text) if kind == "lines" else mutate_document(text)
        for mutated in mutations:
            count += 1
            try:
                parse({**files, name: mutated})
            except Exception as exc:  # noqa: BLE001 - each crash is a finding
                frames = [f for f in traceback.extract_tb(exc.__traceback__) if f"/{package}/" in f.filename]
                where = f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else "?"
                sites.setdefault(where, f"{type(exc).__name__}: {str(exc)[:120]} (in {name})")
    return count, sites
