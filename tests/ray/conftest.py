"""The Ray tests share one real local cluster (a head and worker nodes a and b) per module."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .cluster import LOOPBACK_SWITCH, LocalCluster, local_cluster

# Before anything in this session imports ray: the test clusters live on 127.0.0.1 only.
os.environ.setdefault(LOOPBACK_SWITCH, "0")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with local_cluster() as started:
        yield started


@pytest.fixture
def anyio_backend() -> str:
    """Ray's driver API awaits on asyncio, so the ray backend runs on asyncio only (like docker)."""
    return "asyncio"
