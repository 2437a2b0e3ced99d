"""Ray on a machine where Ray never ran: no state under the default temporary root is needed.

Ray writes its current-cluster address file under its default temporary root and never
creates that folder; these tests pin that the test cluster keeps every file in its own
private root and that a PluginBench driver connects from a process whose temporary root
does not exist yet (issue 19: every Ray test errored on a brand-new machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .cluster import RAY_ROOT, LocalCluster

pytestmark = pytest.mark.ray


def test_the_test_cluster_keeps_its_address_file_inside_its_private_root(cluster: LocalCluster) -> None:
    """The head's address file is in the cluster's own temp folder, which is Ray's whole temporary root."""
    root = os.environ[RAY_ROOT]
    assert Path(cluster.temp_dir).parent == Path(root)
    address_file = Path(cluster.temp_dir) / "ray_current_cluster"
    assert address_file.read_text().strip() == cluster.cluster.gcs_address


def test_a_driver_joins_from_a_process_with_an_absent_temporary_root(cluster: LocalCluster, tmp_path: Path) -> None:
    """RayEnvironment lists the worker nodes from a process whose RAY_TMPDIR and TMPDIR folders do not exist."""
    absent = tmp_path / "never-created"
    code = (
        "import json, sys\n"
        "from pluginbench.environments._ray import RayEnvironment\n"
        "env = RayEnvironment(sys.argv[1], jobs=1)\n"
        "print(json.dumps(sorted(n.name for n in env.nodes())))\n"
    )
    env = {**os.environ, RAY_ROOT: str(absent / "ray-root"), "TMPDIR": str(absent / "tmp")}
    done = subprocess.run([sys.executable, "-c", code, cluster.address], capture_output=True, text=True,
                          timeout=180, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["a", "b"]


@pytest.mark.anyio
async def test_a_node_root_that_does_not_exist_yet_is_created(cluster: LocalCluster, tmp_path: Path) -> None:
    """A sandbox opens on a node whose configured root folder was never made; the node makes it."""
    from pluginbench.environments._ray import RayEnvironment

    from ..environments.contract import EnvironmentContract, write_workspace

    root = tmp_path / "fresh-node" / "root"
    env = RayEnvironment(cluster.address, jobs=1, root=str(root))
    env.connect()
    ws = write_workspace(tmp_path / "ws")
    spec = EnvironmentContract().make_spec(tmp_path, workspace=ws, attempt_id="fresh1")
    async with env.sandbox(spec) as sb:
        result = await sb.exec(["sh", "-c", "echo ok"], timeout=60)
        assert result.stdout.strip() == b"ok"
    assert root.is_dir()
