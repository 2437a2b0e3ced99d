"""Prerequisites of integration tests: skip locally, fail under CI.

Under ``CI=true`` a test whose prerequisite (Docker, Chromium, a pinned CLI) is missing
fails, because ``.ci/run`` is supposed to have installed it; a silent skip there would
hide a broken pipeline.
"""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(ok: bool, what: str) -> None:
    """Skip (locally) or fail (under CI) unless ``ok``; ``what`` names the prerequisite."""
    if ok:
        return
    if in_ci():
        pytest.fail(f"prerequisite missing under CI: {what}")
    pytest.skip(f"prerequisite missing: {what}")
