"""Running the pinned unused-code analyzers (the I/O edge of dead code).

* Python: Vulture 2.16 (PyPI, pinned as the product description pins it), run as
  ``python -m vulture <root> --min-confidence 60`` with the interpreter PluginBench runs
  on, over the whole tree so tests count as users.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from ._deadcode import DeadCodeScan, parse_vulture

VULTURE_VERSION = "2.16"
MIN_CONFIDENCE = 60


class AnalyzerFailed(Exception):
    """The analyzer did not produce a report (its reason is the message)."""


def vulture_status() -> tuple[str | None, str | None]:
    """(``"vulture 2.16"``, None) when the pinned Vulture is installed, else (None, why)."""
    try:
        version = importlib.metadata.version("vulture")
    except importlib.metadata.PackageNotFoundError:
        return None, f"Vulture is not installed: pip install vulture=={VULTURE_VERSION} (tools/setup.sh --dev)"
    if version != VULTURE_VERSION:
        return None, f"Vulture {version} is installed but {VULTURE_VERSION} is pinned"
    return f"vulture {version}", None


def run_vulture(root: Path, timeout: float = 300.0) -> DeadCodeScan:
    """Vulture's candidates under ``root`` (paths relative to it)."""
    if not any(root.rglob("*.py")):
        return DeadCodeScan((), ())
    proc = subprocess.run([sys.executable, "-m", "vulture", ".", "--min-confidence", str(MIN_CONFIDENCE),
                           "--exclude", ".git,node_modules,.venv,venv,__pycache__"],
                          cwd=root, capture_output=True, text=True, check=False, timeout=timeout,
                          stdin=subprocess.DEVNULL, start_new_session=True)
    # 0: nothing unused, 3: unused code found, 1: some input was invalid (reported per file)
    if proc.returncode not in (0, 1, 3):
        raise AnalyzerFailed(f"vulture exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    return parse_vulture(proc.stdout, proc.stderr)
