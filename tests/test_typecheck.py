"""The type checker CI runs: ``mypy`` (strict, configured in pyproject.toml) on ``pluginbench/``.

Run it by hand with ``.venv/bin/mypy`` from the repository root (the configuration names
the package). A new type error fails this test with mypy's own lines; a ``# type: ignore``
must name its error code and say why.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from tests._prereq import require

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pluginbench"
#: ``# type: ignore[code, ...]`` followed by ``# <why>`` on the same line.
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")
REASON = re.compile(r"^\s+#\s*\S.{3,}")


def test_mypy_strict_reports_no_error() -> None:
    """``mypy`` with the repository's configuration finds no error in ``pluginbench/``."""
    require(importlib.util.find_spec("mypy") is not None, "mypy (pip install -e '.[dev]')")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 0 and not errors, (
        f"mypy exit {done.returncode}, {len(errors)} error(s):\n" + (done.stdout + done.stderr)[-20000:]
    )


def unexplained_ignores(text: str, name: str) -> list[str]:
    """The ``# type: ignore`` comments in ``text`` lacking an error code or a reason."""
    bad = []
    for number, line in enumerate(text.splitlines(), 1):
        found = IGNORE.search(line)
        if found is None:
            continue
        codes = (found["codes"] or "").strip("[]").strip()
        if not codes or not REASON.match(found["rest"]):
            bad.append(f"{name}:{number}: {line.strip()}")
    return bad


def test_every_type_ignore_names_its_code_and_reason() -> None:
    """Each ``# type: ignore`` in ``pluginbench/`` names an error code and says why after it."""
    bad = [b for path in sorted(PACKAGE.rglob("*.py"))
           for b in unexplained_ignores(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not bad, "write `# type: ignore[code]  # why`:\n" + "\n".join(bad)


def test_the_ignore_rule_refuses_a_bare_or_unexplained_ignore() -> None:
    """The rule refuses a bare ignore and one without a reason, and accepts code plus reason."""
    assert unexplained_ignores("x = f()  # type: ignore\n", "m.py") == ["m.py:1: x = f()  # type: ignore"]
    assert unexplained_ignores("x = f()  # type: ignore[arg-type]\n", "m.py") != []
    assert unexplained_ignores("x = f()  # type: ignore[arg-type] - why\n", "m.py") != []
    assert unexplained_ignores("x = f()  # type: ignore[arg-type]  # built at import\n", "m.py") == []
