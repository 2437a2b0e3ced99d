"""A real local Ray cluster for tests: a head and two labelled worker nodes on loopback.

Each node is its own GCS/raylet process set started by Ray's own ``cluster_utils`` (the
same processes ``ray start`` runs), bound to 127.0.0.1 and kept under a private temp
folder. The head has no CPUs, so only the two worker nodes (``pluginbench-node=a`` and
``=b``) run sandboxes. Node failure is detected within a few seconds (a short GCS health
check), so a test that kills a worker's raylet sees it promptly.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from tests._prereq import require

#: Faster failure detection than Ray's default (5 misses of 3 s): 4 misses of 0.5 s.
SYSTEM_CONFIG = {"health_check_period_ms": 500, "health_check_failure_threshold": 4,
                 "health_check_initial_delay_ms": 0}


LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"

#: Ray's temporary root (its default is ``/tmp``): session folders, sockets, the address file.
RAY_ROOT = "RAY_TMPDIR"


class LocalCluster:
    """A started cluster: ``address`` for drivers, worker nodes by label value."""

    def __init__(self, cluster: Any, workers: dict[str, Any], temp_dir: str) -> None:
        self.cluster = cluster
        self.workers = workers
        self.temp_dir = temp_dir
        self.address = cluster.address

    def raylet_pid(self, name: str) -> int:
        return self.workers[name].all_processes["raylet"][0].process.pid

    def kill_worker(self, name: str) -> None:
        """kill -9 of the worker node's raylet (its workers and agents die with it)."""
        os.kill(self.raylet_pid(name), signal.SIGKILL)

    def add_worker(self, name: str, cpus: int = 2) -> Any:
        node = self.cluster.add_node(num_cpus=cpus, labels={"pluginbench-node": name},
                                     node_ip_address="127.0.0.1")
        self.workers[name] = node
        self.cluster.wait_for_nodes()
        return node


def ray_usable() -> bool:
    try:
        import ray  # noqa: F401
        from ray.cluster_utils import Cluster  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def local_cluster(workers: tuple[str, ...] = ("a", "b")) -> Iterator[LocalCluster]:
    """Start a head and one worker node per name on 127.0.0.1; stop every process after."""
    # Ray maps a loopback address to the machine's outward IP unless clusters are
    # "disabled" (its switch for laptops, read when ray is imported): then every node,
    # and every driver the test starts, binds and dials 127.0.0.1 only.
    os.environ[LOOPBACK_SWITCH] = "0"
    require(ray_usable(), "the ray package (pip install -e '.[dev]')")
    from ray.cluster_utils import Cluster

    # Ray gets its whole temporary root: besides the head's ``temp_dir`` it writes its
    # current-cluster address file under its *default* root (``$RAY_TMPDIR/ray``, else
    # ``$TMPDIR/ray`` or ``/tmp/ray``) and never creates that folder, so a machine where Ray
    # never ran failed here. Pointing RAY_TMPDIR at a private folder whose ``ray/`` is the
    # head's temp_dir makes both the same folder, which Ray creates; nothing outside it is
    # read or written, whatever an earlier run left in /tmp.
    root = tempfile.mkdtemp(prefix="pbray-", dir="/tmp")  # short: Ray's socket paths have a length limit
    temp_dir = os.path.join(root, "ray")
    old_root = os.environ.get(RAY_ROOT)
    os.environ[RAY_ROOT] = root
    try:
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 0, "node_ip_address": "127.0.0.1", "temp_dir": temp_dir,
            "include_dashboard": False, "_system_config": SYSTEM_CONFIG,
        })
    except BaseException:
        _restore(RAY_ROOT, old_root)
        shutil.rmtree(root, ignore_errors=True)
        raise
    started = LocalCluster(cluster, {}, temp_dir)
    try:
        for name in workers:
            started.add_worker(name)
        yield started
    finally:
        import ray

        with suppress(Exception):
            ray.shutdown()
        with suppress(Exception):
            cluster.shutdown()
        _restore(RAY_ROOT, old_root)
        shutil.rmtree(root, ignore_errors=True)


def _restore(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
