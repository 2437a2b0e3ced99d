"""The Ray tests share one real local cluster (a head and worker nodes a and b) per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .cluster import LocalCluster, local_cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with local_cluster() as started:
        yield started


@pytest.fixture
def anyio_backend() -> str:
    """Ray's driver API awaits on asyncio, so the ray backend runs on asyncio only (like docker)."""
    return "asyncio"
