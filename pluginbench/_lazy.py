"""Lazy re-exports for a package's ``__init__`` (PEP 562), so a command imports only the
private modules whose names it uses (``pluginbench run`` does not load history mining).

A package lists its re-exports as usual, but under ``if TYPE_CHECKING:`` (type checkers
and readers see them unchanged), and ends with ``__getattr__ = lazy(__name__, __file__)``.
The first access to a listed name imports the module that defines it and keeps the value
on the package, so later accesses cost nothing and ``from package import name`` works.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path


def _blocks(source: str) -> str:
    """The package's top-level ``if TYPE_CHECKING:`` blocks alone (each up to the next line
    that starts at column 0), so only they are parsed, not the whole ``__init__``."""
    lines = source.splitlines()
    kept: list[str] = []
    inside = False
    for line in lines:
        if line and not line[0].isspace():
            inside = line.rstrip() == "if TYPE_CHECKING:"
        if inside:
            kept.append(line)
    return "\n".join(kept) + "\n"


def _table(init: str) -> dict[str, tuple[str, str]]:
    """Each name a package's ``if TYPE_CHECKING:`` block imports: (relative module, its name there)."""
    tree = ast.parse(_blocks(Path(init).read_text(encoding="utf-8")), filename=init)
    table: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.level > 0:
                    for alias in imp.names:
                        table[alias.asname or alias.name] = ("." * imp.level + (imp.module or ""), alias.name)
    return table


def lazy(package: str, init: str) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package`` (whose ``__init__`` is the file ``init``)."""
    table: dict[str, tuple[str, str]] = {}

    def __getattr__(name: str) -> object:
        if not table:
            table.update(_table(init))
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, original = table[name]
        absolute = importlib.util.resolve_name(module, package)
        __import__(absolute)  # the import statement's own path (``-X importtime`` lists it)
        value = getattr(sys.modules[absolute], original)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
