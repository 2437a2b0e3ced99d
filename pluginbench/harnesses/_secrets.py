"""Finding a delivered credential in files (exports, saved evidence)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def scan_for_secret(paths: Iterable[Path], secret: str) -> list[Path]:
    """Every file under ``paths`` whose bytes contain ``secret`` (symlinks not followed)."""
    if not secret:
        return []
    needle, hits = secret.encode(), []
    for root in paths:
        root = Path(root)
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
        for f in files:
            try:
                if needle in f.read_bytes():
                    hits.append(f)
            except OSError:
                continue
    return hits
