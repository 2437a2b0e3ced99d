"""Lazy package surfaces (``pluginbench/_lazy.py``): a listed name loads its module on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pluginbench.tasks  # noqa: F401  (the package whose surface is read)
from pluginbench import _lazy


def test_a_listed_name_loads_only_its_own_module_and_is_kept_on_the_package() -> None:
    """``from pluginbench.tasks import load_task`` imports the module defining it, not history mining."""
    code = ("import sys, pluginbench.tasks as t; before = '_harbor' in vars(t); from pluginbench.tasks import "
            "load_task; print(before, 'load_task' in vars(t), 'pluginbench.tasks._harbor' in sys.modules, "
            "'pluginbench.tasks._mine_git' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "True", "True", "False"], done.stderr


def test_an_unlisted_name_is_an_attribute_error_naming_the_package() -> None:
    """A name the package does not list raises AttributeError (so ``hasattr`` and ``getattr`` defaults work)."""
    getter = _lazy.lazy("pluginbench.tasks", sys.modules["pluginbench.tasks"].__file__ or "")
    with pytest.raises(AttributeError, match="'pluginbench.tasks' has no attribute 'nope'"):
        getter("nope")


def test_the_table_read_from_the_blocks_alone_equals_the_whole_files() -> None:
    """Parsing only each lazy package's ``if TYPE_CHECKING:`` blocks finds exactly the names a
    parse of the whole ``__init__`` finds there."""
    import ast
    from pathlib import Path

    root = Path(_lazy.__file__).parent
    inits = [p for p in root.rglob("__init__.py") if "lazy(__name__, __file__)" in p.read_text(encoding="utf-8")]
    assert len(inits) >= 5
    for init in inits:
        whole: dict[str, tuple[str, str]] = {}
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                for imp in node.body:
                    if isinstance(imp, ast.ImportFrom) and imp.level > 0:
                        for alias in imp.names:
                            whole[alias.asname or alias.name] = ("." * imp.level + (imp.module or ""), alias.name)
        assert _lazy._table(str(init)) == whole, init
        assert whole, init
