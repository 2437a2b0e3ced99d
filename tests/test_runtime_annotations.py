"""Where annotations are evaluated at import, not postponed (issue 27, startup).

With ``from __future__ import annotations`` every annotation is a string.
``typing.NamedTuple`` compiles each field's string into a ``ForwardRef`` when the class is
made, and msgspec evaluates each Struct field's string again when a decoder or
``convert`` first meets the type: both only add a compile per field. Over the ~120
NamedTuples, the events and the config schema a run loads, that was ~7 ms of every start.
Output-only Structs documented field by field (``Annotated[..., Meta(...)]``, as the
``status --json`` types) keep postponing: built eagerly, their metadata would cost every
run's import what only ``status --json`` and the docs read.
"""

from __future__ import annotations

import ast
import importlib
import typing
from pathlib import Path

import pluginbench
from pluginbench.config import _schema
from pluginbench.events import EVENT_TYPES

_ROOT = Path(pluginbench.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _postpones(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
               and any(a.name == "annotations" for a in n.names) for n in tree.body)


def _namedtuples(name: str) -> list[str]:
    module = importlib.import_module(name)
    return [k for k, v in vars(module).items()
            if isinstance(v, type) and v.__module__ == name and issubclass(v, tuple) and hasattr(v, "_fields")]


def test_no_module_defining_namedtuples_postpones_its_annotations() -> None:
    """Every pluginbench module that defines a NamedTuple is free of the __future__ annotations import."""
    postponing = [p for p in sorted(_ROOT.rglob("*.py")) if p.name != "__main__.py" and _postpones(p)]
    assert len(postponing) > 50  # the rule is checked against real modules, not an empty walk
    offenders = {_module_name(p): found for p in postponing if (found := _namedtuples(_module_name(p)))}
    assert offenders == {}


def test_the_types_every_run_decodes_are_not_postponed() -> None:
    """The event types (the log's decoder) and the config schema (converted on every load) evaluate their annotations at import."""
    modules = {t.__module__ for t in EVENT_TYPES} | {_schema.__name__}
    for t in EVENT_TYPES:
        modules |= {h.__module__ for h in typing.get_type_hints(t).values()
                    if isinstance(h, type) and h.__module__.startswith("pluginbench.")}
    assert len(modules) >= 5
    postponed = sorted(m for m in modules if _postpones(Path(importlib.import_module(m).__file__ or "")))
    assert postponed == []
