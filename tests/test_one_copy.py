"""One copy of each constant: no public module-level constant is defined twice."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pluginbench

ROOT = Path(pluginbench.__file__).resolve().parent


def _constants() -> dict[tuple[str, str], list[str]]:
    """(NAME, repr of its literal value) → the files that assign it at module level."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if not isinstance(target, ast.Name) or target.id.startswith("_") or not target.id.isupper():
                continue
            try:
                literal = ast.literal_eval(value)
            except ValueError:
                continue  # computed or imported: not a copy
            found[(target.id, repr(literal))].append(str(path.relative_to(ROOT.parent)))
    return found


def test_no_public_constant_is_defined_in_two_modules() -> None:
    """A public constant with the same name and value lives in one module; the others import it."""
    constants = _constants()
    assert ("GUIDANCE_LIMIT", "32768") in constants, "the guidance limit is no longer a literal constant"
    twice = [
        f"{name} = {value[:60]} is defined in {', '.join(files)}: keep one and import it elsewhere"
        for (name, value), files in sorted(constants.items()) if len(files) > 1
    ]
    assert not twice, "\n".join(twice)
