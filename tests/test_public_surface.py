"""The public surface of every package, enforced (as trio tests its exports).

A module whose name starts with ``_`` is private to the package that holds it; another
package imports only what the holder's ``__init__`` lists in ``__all__``. Every event type
is in ``events.__all__``. Every import follows the layer table that ``docs/architecture.md``
shows (``pluginbench/layering.py``). Each failure names the file, the line, the import and
what to do instead.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pluginbench
from pluginbench import events
from pluginbench.layering import LAYERS, layer_of

ROOT = Path(pluginbench.__file__).resolve().parent
REPO = ROOT.parent


class Import(NamedTuple):
    """One imported module (and the names taken from it) at one line of one file."""

    file: Path
    line: int
    module: tuple[str, ...]  # absolute, e.g. ("pluginbench", "projections", "_state")
    names: tuple[str, ...]  # the names of ``from M import a, b``; () for ``import M``
    text: str  # the statement's first line, for the message


def _module_of(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(REPO).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _package_of(path: Path) -> tuple[str, ...]:
    """The package a file belongs to (its own folder's dotted path)."""
    return path.relative_to(REPO).parent.parts


def _subpackages() -> set[str]:
    return {p.parent.name for p in ROOT.glob("*/__init__.py")}


def _imports() -> Iterator[Import]:
    subpackages = _subpackages()
    for path in sorted(ROOT.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source, filename=str(path))):
            text = lines[node.lineno - 1].strip() if hasattr(node, "lineno") else ""
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "pluginbench":
                        yield Import(path, node.lineno, tuple(alias.name.split(".")), (), text)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = _package_of(path)[: len(_package_of(path)) - (node.level - 1)]
                    module = base + tuple(node.module.split(".") if node.module else ())
                else:
                    module = tuple((node.module or "").split("."))
                if module[:1] != ("pluginbench",):
                    continue
                names = tuple(a.name for a in node.names)
                if module == ("pluginbench",):
                    # ``from .. import stats``: each name is a unit of its own
                    for name in names:
                        if name in subpackages or (ROOT / f"{name}.py").exists():
                            yield Import(path, node.lineno, ("pluginbench", name), (), text)
                        else:
                            yield Import(path, node.lineno, module, (name,), text)
                else:
                    yield Import(path, node.lineno, module, names, text)


def _private_owner(target: tuple[str, ...]) -> tuple[str, ...] | None:
    """The package a private module or name belongs to, or None if ``target`` is public."""
    for i, part in enumerate(target[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return target[:i]
    return None


def _where(imp: Import) -> str:
    return f"{imp.file.relative_to(REPO)}:{imp.line}: `{imp.text}`"


def _public_packages() -> list[str]:
    return sorted(f"pluginbench.{name}" for name in _subpackages())


def test_no_package_imports_another_packages_private_module() -> None:
    """No file imports a private (``_``) module or name of a package it is not inside."""
    problems = []
    for imp in _imports():
        targets = [imp.module + (n,) for n in imp.names] or [imp.module]
        for target in targets:
            owner = _private_owner(target)
            if owner is None or _module_of(imp.file)[: len(owner)] == owner:
                continue
            public = ".".join(owner)
            names = ", ".join(imp.names) or "the module"
            private = ".".join(imp.module if len(imp.module) > len(owner) else target)
            problems.append(
                f"{_where(imp)} reaches into {private}, private to {public}: "
                f"import {names} from {public} instead (add it to "
                f"{'/'.join(owner)}/__init__.py and its __all__ if it is not there)"
            )
            break
    assert not problems, "private cross-package imports:\n" + "\n".join(problems)


def test_names_taken_from_another_package_are_in_its_all() -> None:
    """Every name one package imports from another package is listed in that package's ``__all__``."""
    problems = []
    for imp in _imports():
        if len(imp.module) != 2 or not imp.names or _module_of(imp.file)[:2] == imp.module:
            continue
        package = importlib.import_module(".".join(imp.module))
        if not hasattr(package, "__path__"):
            continue  # a plain module (errors, rundir, ...): its public names are its surface
        exported = set(getattr(package, "__all__", ()))
        for name in imp.names:
            if name != "*" and name not in exported:
                problems.append(
                    f"{_where(imp)} takes {name!r}, which {'.'.join(imp.module)}.__all__ does not "
                    f"list: add it to {'/'.join(imp.module)}/__init__.py's __all__ (or import "
                    "something the package does export)"
                )
    assert not problems, "\n".join(problems)


def test_every_package_declares_its_public_surface() -> None:
    """Every package's ``__init__`` has an ``__all__`` of public names that all exist."""
    problems = []
    for name in _public_packages():
        package = importlib.import_module(name)
        exported = getattr(package, "__all__", None)
        if exported is None:
            problems.append(f"{name} has no __all__: list its public names in its __init__.py")
            continue
        for item in exported:
            if item.startswith("_"):
                problems.append(f"{name}.__all__ lists the private name {item!r}")
            elif not hasattr(package, item):
                problems.append(f"{name}.__all__ lists {item!r}, which the package does not define")
        if len(set(exported)) != len(exported):
            problems.append(f"{name}.__all__ lists a name twice")
    assert not problems, "\n".join(problems)


def test_every_event_type_is_exported_by_events() -> None:
    """Every event type in the log's union is importable from ``pluginbench.events`` by name."""
    assert events.EVENT_TYPES, "no event types found"
    missing = [t.__name__ for t in events.EVENT_TYPES if t.__name__ not in events.__all__]
    assert not missing, (
        f"event types missing from pluginbench.events.__all__: {missing}; import and list them "
        "in pluginbench/events/__init__.py"
    )
    for name in events.__all__:
        assert hasattr(events, name), f"pluginbench.events.__all__ lists {name!r}, which it does not define"


def _units() -> set[str]:
    """Every unit the layer table must place: each package and each module under pluginbench/."""
    return _subpackages() | {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}


def test_every_unit_has_a_layer() -> None:
    """Each package and top-level module of pluginbench appears exactly once in the layer table."""
    placed = [u for layer in LAYERS for u in layer.units]
    assert len(placed) == len(set(placed)), f"a unit is in two layers: {sorted(placed)}"
    missing = sorted(_units() - set(placed))
    assert not missing, (
        f"units without a layer: {missing}: add each to LAYERS in pluginbench/layering.py, "
        "then run tools/gen_docs.py so docs/architecture.md shows it"
    )
    gone = sorted(set(placed) - _units())
    assert not gone, f"pluginbench/layering.py places units that do not exist: {gone}"


def test_no_import_goes_up_a_layer_and_no_two_units_import_each_other() -> None:
    """Every import goes to the importer's layer or a lower one, and the unit graph has no cycle."""
    problems = []
    edges: dict[str, set[str]] = {}
    for imp in _imports():
        here = _module_of(imp.file)
        if len(here) < 2 or len(imp.module) < 2:
            continue  # the root package itself (``__version__``) is below everything
        source, target = here[1], imp.module[1]
        if source == target:
            continue
        edges.setdefault(source, set()).add(target)
        lower, upper = layer_of(source), layer_of(target)
        if lower is not None and upper is not None and upper > lower:
            problems.append(
                f"{_where(imp)}: {source} (layer {lower}) imports {target} (layer {upper}); lower "
                "layers never import higher ones (docs/architecture.md, pluginbench/layering.py)"
            )
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            if source < target and source in edges.get(target, set()):
                problems.append(f"{source} and {target} import each other: one of them must not")
    assert not problems, "\n".join(problems)
