"""Modules that define NamedTuples or msgspec Structs keep real annotations (issue 27, startup).

With ``from __future__ import annotations`` every field annotation is a string:
``typing.NamedTuple`` compiles each into a ``ForwardRef`` when the class is made, and
msgspec evaluates each again when a decoder or ``convert`` first meets the type. Over the
~120 NamedTuples and the event and config Structs a run loads, that was ~7 ms of every
start. An annotation naming a later or type-checking-only name is quoted instead.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import msgspec

import pluginbench

_ROOT = Path(pluginbench.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _defines_record_types(name: str) -> list[str]:
    module = importlib.import_module(name)
    return [k for k, v in vars(module).items()
            if isinstance(v, type) and v.__module__ == name
            and (issubclass(v, msgspec.Struct) or (issubclass(v, tuple) and hasattr(v, "_fields")))]


def test_no_module_defining_namedtuples_or_structs_postpones_its_annotations() -> None:
    """Every pluginbench module that defines a NamedTuple or a msgspec Struct is free of the __future__ annotations import."""
    offenders: dict[str, list[str]] = {}
    checked = 0
    for path in sorted(_ROOT.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        postponed = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                        and any(a.name == "annotations" for a in n.names) for n in tree.body)
        if not postponed:
            continue
        checked += 1
        if types := _defines_record_types(_module_name(path)):
            offenders[_module_name(path)] = types
    assert checked > 50  # the rule was applied to real modules, not an empty walk
    assert offenders == {}
