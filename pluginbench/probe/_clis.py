"""Finding the pinned coding-agent CLIs (installed by ``tools/install-clis.sh``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Literal

#: Versions ``tools/install-clis.sh`` pins.
PINNED = {"claude": "2.1.328", "codex": "0.169.0"}

_REPO_ROOT = Path(__file__).resolve().parents[2]  # parent of the `pluginbench` package dir


def clis_dir() -> Path:
    """The project-local install folder's ``bin`` (may not exist)."""
    return _REPO_ROOT / ".tools" / "clis" / "node_modules" / ".bin"


def find_cli(name: Literal["claude", "codex"]) -> Path | None:
    """The ``name`` executable: the project-local install first, then ``PATH``; else None."""
    if name not in PINNED:
        raise ValueError(f"unknown CLI {name!r} (use 'claude' or 'codex')")
    local = clis_dir() / name
    if local.is_file() and local.stat().st_mode & 0o111:
        return local
    found = shutil.which(name)
    return Path(found) if found else None


def cli_version(path: str | Path, timeout: float = 30.0) -> str | None:
    """The version a CLI reports with ``--version`` (``2.1.328``, ``0.169.0``), or None
    when it cannot be run or prints no version."""
    try:
        proc = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, check=False,
                              start_new_session=True)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    for token in proc.stdout.split():
        parts = token.split(".")
        if len(parts) >= 3 and all(p.isdigit() for p in parts[:3]):
            return token
    return None
