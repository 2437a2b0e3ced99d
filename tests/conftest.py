"""Shared fixtures. Async tests run under both asyncio and trio unless a module narrows it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

#: fixture repositories under tests/data carry their own tests; they are data, never collected
collect_ignore_glob = ["data/*"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Tests never touch the user's ~/.cache/pluginbench; they share one private cache."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    # Unrelated tests must not reuse each other's vanilla attempts through the shared
    # cache; tests of the vanilla cache turn it back on (tests/cache/).
    os.environ["PLUGINBENCH_VANILLA_CACHE"] = "off"
    # Nor each other's discovery answers (the store's own tests give a harness its store).
    os.environ["PLUGINBENCH_DISCOVERY_STORE"] = "off"
    yield cache
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old
