"""The ``ray`` backend: each sandbox runs on a worker node of an existing Ray cluster.

The head (the process that holds ``run.lock`` and whose Supervisor is the only writer of
``events.jsonl``) keeps every decision and every file of the run. Only sandboxes move:
:class:`RayEnvironment` opens each one through the :class:`~._ray_node.NodeAgent` of a
worker node (one Ray actor per node, pinned there), and :class:`RaySandbox` forwards the
sandbox port's calls to it. The coding sandbox of an attempt and its verifier sandbox
run on the same node; what a sandbox starts from travels packed to the node, and what
comes out (command output, ``get``, the exported tree) travels back packed with a sha256
manifest that the head checks before anything lands in the run directory
(:mod:`._ray_transfer`).

Placement: a worker node takes part when it carries the node label (``pluginbench-node``
by default; its value names the node). Each node runs at most its ``jobs`` coding
sandboxes at once (``environment.ray.nodes.<name>.jobs``, else the evaluation's
``jobs``), counted here; Ray places and runs the agents. A node that dies makes every
call on it raise :class:`~pluginbench.errors.WorkerLost`, and it takes no new sandbox.
"""

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

import anyio

from ..errors import EnvironmentFailure, WorkerLost
from ..events import ClusterNode
from ._dialogue import Dialogue, LineChannel, first_error
from ._local import Isolation
from ._port import ExecResult, SandboxPaths, SandboxSpec
from ._ray_node import SHIPPED, NodeAgent
from ._ray_transfer import Packed, pack, unpack

#: How long a cancelled call may take to stop its command on the node.
_CANCEL_GRACE_SECONDS = 30.0
#: How long a sandbox waits for a free slot on a live node before giving up.
_SLOT_WAIT_SECONDS = 600.0
DEFAULT_LABEL = "pluginbench-node"


class RayNode(NamedTuple):
    """A worker node that takes part: Ray's node id, its label value, its coding slots."""

    node_id: str
    name: str
    jobs: int


def participating(
    ray_nodes: Sequence[Mapping[str, Any]], label: str, jobs: int, per_node: Mapping[str, int]
) -> list[RayNode]:
    """The alive nodes carrying ``label``, with their jobs, in name order (pure)."""
    found = []
    for info in ray_nodes:
        name = (info.get("Labels") or {}).get(label)
        if not info.get("Alive") or not name:
            continue
        n = per_node.get(name, jobs)
        if n > 0:
            found.append(RayNode(str(info["NodeID"]), str(name), int(n)))
    return sorted(found, key=lambda n: (n.name, n.node_id))


def choose_node(
    nodes: Sequence[RayNode], busy: Mapping[str, int], needs_slot: bool, preferred: str | None
) -> RayNode | None:
    """Where a sandbox goes (pure): the preferred node (the attempt's coding node) when it
    is alive and, for a slot, has one free; else the live node with the most free slots,
    ties by name. ``None`` when every node is full (or none is alive)."""
    def free(n: RayNode) -> int:
        return n.jobs - busy.get(n.node_id, 0)

    for n in nodes:
        if n.node_id == preferred and (not needs_slot or free(n) > 0):
            return n
    candidates = [n for n in nodes if not needs_slot or free(n) > 0]
    if not candidates:
        return None
    return min(candidates, key=lambda n: (-free(n), n.name, n.node_id))


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - the extra is part of the dev install
        raise EnvironmentFailure(
            "environment.backend is ray but the ray package is not installed; pip install 'pluginbench[ray]'"
        ) from exc
    return ray


class RayEnvironment:
    """Sandboxes on the worker nodes of a Ray cluster (see the module docstring)."""

    name = "ray"

    def __init__(
        self,
        address: str = "auto",
        *,
        label: str = DEFAULT_LABEL,
        jobs: int = 2,
        nodes: Mapping[str, int] | None = None,
        isolation: Isolation = "auto",
        root: str | None = None,
        run_id: str | None = None,
        sandbox: str = "bubblewrap",
        docker_host: str | None = None,
        docker_hosts: Mapping[str, str] | None = None,
        allow_host_root: bool = False,
    ) -> None:
        self.address = address
        self.label = label
        self.jobs = jobs
        self.per_node = dict(nodes or {})
        self.isolation = isolation
        self.root = root
        self.run_id = run_id
        self._agents: dict[str, Any] = {}
        self._lost: set[str] = set()
        self._busy: dict[str, int] = {}
        self._placed: dict[str, str] = {}  # attempt id -> node id of its coding sandbox
        self._names: dict[str, str] = {}  # node id -> name
        self._lock = anyio.Lock()
        #: ``bubblewrap``: each node's LocalEnvironment; ``docker``: each node's own Docker
        #: Engine, from images the head prepared on ``docker_host`` and ships by ID
        self.sandbox_kind = sandbox
        self.docker_host = docker_host
        self.docker_hosts = dict(docker_hosts or {})
        #: docker sandboxes: engines whose container root is the host's root are accepted
        self.allow_host_root = allow_host_root
        self._images: Any = None
        self._shipper: Any = None
        if sandbox == "docker":
            import tempfile

            from ._docker import DockerEnvironment
            from ._ray_images import ImageShipper

            self._images = DockerEnvironment(docker_host=docker_host, run_id=run_id, allow_host_root=allow_host_root)
            self._shipper = ImageShipper(docker_host, Path(root or tempfile.gettempdir()) / "pluginbench-ray-exports")

    # -- the cluster ---------------------------------------------------------------------

    def connect(self) -> None:
        """Join the cluster as a driver (once per process); raises when it is unreachable."""
        ray = _ray()
        if ray.is_initialized():
            return
        _check_reachable(self.address)
        # Joined from a worker thread on purpose: Ray then installs no SIGTERM handler, so
        # a stop stays the Supervisor's cooperative one; its note about that is not news.
        logging.getLogger("ray").setLevel(logging.ERROR)
        try:
            ray.init(
                address=self.address, log_to_driver=False, logging_level="ERROR",
                configure_logging=False, include_dashboard=False,
            )
        except Exception as exc:  # noqa: BLE001 - Ray raises several types for an unreachable cluster
            raise EnvironmentFailure(f"cannot connect to the Ray cluster at {self.address}: {exc}") from exc

    def nodes(self) -> list[RayNode]:
        """The live participating nodes, without any this process saw die."""
        self.connect()
        found = participating(_ray().nodes(), self.label, self.jobs, self.per_node)
        for n in found:
            self._names[n.node_id] = n.name
        return [n for n in found if n.node_id not in self._lost]

    def cluster_nodes(self) -> list[ClusterNode]:
        """The worker nodes that take attempts now and their jobs (recorded in run.started;
        coding runs on up to the sum at once). Connects to the cluster when needed."""
        return [ClusterNode(name=n.name, jobs=n.jobs) for n in self.nodes()]

    def node_of(self, attempt_id: str) -> str | None:
        """The name of the node that runs (or ran) the coding sandbox of ``attempt_id``."""
        node_id = self._placed.get(attempt_id)
        return self._names.get(node_id) if node_id else None

    def _agent(self, node: RayNode) -> Any:
        agent = self._agents.get(node.node_id)
        if agent is None:
            ray = _ray()
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            agent = ray.remote(NodeAgent).options(
                num_cpus=0, max_restarts=0, max_task_retries=0, max_concurrency=1000,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False),
            ).remote(node.name, self.isolation, self.root, self.sandbox_kind, self.docker_hosts.get(node.name),
                     self.allow_host_root)
            self._agents[node.node_id] = agent
        return agent

    async def call(self, node: RayNode, ref: Any) -> Any:
        """Await one agent call; a dead node raises :class:`WorkerLost`, a cancelled caller
        cancels the call on the node and waits (bounded) until it has stopped."""
        ray = _ray()
        try:
            return await _translate(self, node, ref)
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                ray.cancel(ref)
                # it was cancelled; only that it ended matters
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_GRACE_SECONDS), \
                        suppress(BaseException):
                    await asyncio.wrap_future(ref.future())
            raise

    def mark_lost(self, node: RayNode) -> None:
        self._lost.add(node.node_id)
        if self._shipper is not None:
            self._shipper.forget_node(node.node_id)
        agent = self._agents.pop(node.node_id, None)
        if agent is not None:
            with suppress(Exception):  # the node is gone already
                _ray().kill(agent)

    async def describe(self) -> list[dict[str, Any]]:
        """Each participating node as its agent sees it (cpus, memory, isolation, versions)."""
        nodes = await anyio.to_thread.run_sync(self.nodes)
        out = []
        for n in nodes:
            info = await self.call(n, self._agent(n).describe.remote())
            out.append({**info, "node_id": n.node_id, "jobs": n.jobs})
        return out

    async def check(self) -> None:
        """Raise unless the cluster is reachable, has a participating node, and every node
        can make sandboxes."""
        nodes = await anyio.to_thread.run_sync(self.nodes)
        if not nodes:
            raise EnvironmentFailure(
                f"the Ray cluster at {self.address} has no live worker node labelled {self.label}; start workers "
                f"with: ray start --address=<head> --labels={self.label}=<name>"
            )
        problems = [f"{d['node']}: {d['problem']}" for d in await self.describe() if d.get("problem")]
        if problems:
            raise EnvironmentFailure("worker nodes cannot make sandboxes: " + "; ".join(problems))

    async def stop_left_running(self, run_id: str) -> list[str]:
        """On every live node: remove what a killed head of ``run_id`` left there."""
        found: list[str] = []
        for n in await anyio.to_thread.run_sync(self.nodes):
            try:
                found += await self.call(n, self._agent(n).stop_left_running.remote(run_id))
            except WorkerLost:
                continue
        return found

    async def remove_left_stopped(self, run_id: str) -> list[str]:
        """On every live node: remove the containers of ``run_id`` a killed head left stopped
        (exited or never started) on that node's engine."""
        found: list[str] = []
        for n in await anyio.to_thread.run_sync(self.nodes):
            try:
                found += await self.call(n, self._agent(n).remove_left_stopped.remote(run_id))
            except WorkerLost:
                continue
        return found

    # -- task images (docker sandboxes): prepared and frozen on the head's engine ----------

    def _head_images(self) -> Any:
        if self._images is None:
            raise EnvironmentFailure("this Ray environment runs bubblewrap sandboxes; it has no task images")
        return self._images

    async def prepare_image(self, task_root: Path, task: Any) -> str:
        """The frozen image ID for ``task``, prepared on the head as the docker backend does."""
        return str(await self._head_images().prepare_image(task_root, task))

    async def has_images(self, *refs: str) -> bool:
        return bool(await self._head_images().has_images(*refs))

    async def verifier_image(self, task_root: Path, task: Any, task_image: str) -> str:
        return str(await self._head_images().verifier_image(task_root, task, task_image))

    async def coding_image(self, task_image: str, harness: str, cli: Any, version: str,
                           clis_dir: Path) -> tuple[str, str]:
        image, inside = await self._head_images().coding_image(task_image, harness, cli, version, clis_dir)
        return str(image), str(inside)

    def image_timings(self) -> list[dict[str, Any]]:
        """Seconds each image took to export on the head and load on a node (this process)."""
        return list(self._shipper.timings) if self._shipper is not None else []

    async def ensure_image(self, node: RayNode, image: str | None, attempt_id: str) -> None:
        """Docker sandboxes: the node's engine holds the frozen ``image`` (loaded from the
        head's export when it does not), or the sandbox is refused."""
        from ._ray_images import require_frozen_id

        frozen = require_frozen_id(image, attempt_id)
        agent = self._agent(node)
        await self._shipper.ensure(node.node_id, node.name, frozen, agent, lambda ref: self.call(node, ref))

    # -- sandboxes -------------------------------------------------------------------------

    async def _place(self, spec: SandboxSpec) -> tuple[RayNode, bool]:
        needs_slot = spec.role in ("coding", "readiness")
        preferred = self._placed.get(spec.attempt_id) if not needs_slot else None
        with anyio.fail_after(_SLOT_WAIT_SECONDS):
            while True:
                nodes = await anyio.to_thread.run_sync(self.nodes)
                async with self._lock:
                    node = choose_node(nodes, self._busy, needs_slot, preferred)
                    if node is not None:
                        if needs_slot:
                            self._busy[node.node_id] = self._busy.get(node.node_id, 0) + 1
                            self._placed[spec.attempt_id] = node.node_id
                        return node, needs_slot
                await anyio.sleep(0.2)

    @asynccontextmanager
    async def sandbox(self, spec: SandboxSpec) -> "AsyncIterator[RaySandbox]":
        """A fresh sandbox on a worker node; it is closed there on exit."""
        try:
            node, slot = await self._place(spec)
        except TimeoutError:
            raise EnvironmentFailure(
                f"no worker node had a free slot for {_SLOT_WAIT_SECONDS:g} s (nodes labelled {self.label})"
            ) from None
        try:
            if self.sandbox_kind == "docker":
                await self.ensure_image(node, spec.image, spec.attempt_id)
            agent = self._agent(node)
            sid = uuid.uuid4().hex
            shipped = await anyio.to_thread.run_sync(_pack_spec, spec)
            info = await self.call(node, agent.open.remote(sid, _spec_fields(spec), shipped))
            box = RaySandbox(self, node, agent, sid, info)
            try:
                yield box
            finally:
                # a lost node took the sandbox with it
                with anyio.CancelScope(shield=True), suppress(WorkerLost):
                    await self.call(node, agent.close.remote(sid))
        finally:
            if slot:
                self._busy[node.node_id] -= 1


def _check_reachable(address: str, seconds: float = 10.0) -> None:
    """Fail fast on a ``host:port`` nothing listens on (Ray itself retries for minutes)."""
    import socket

    if address in ("auto", "local") or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=seconds):
            return
    except (OSError, ValueError) as exc:
        raise EnvironmentFailure(f"cannot connect to the Ray cluster at {address}: {exc}") from None


async def _translate(env: RayEnvironment, node: RayNode, ref: Any) -> Any:
    ray = _ray()
    try:
        return await ref
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, EnvironmentFailure):
            raise type(cause)(str(cause)) from None
        raise EnvironmentFailure(f"on worker node {node.name}: {cause or exc}") from None
    except ray.exceptions.UnserializableException as exc:
        # The node's exception could not travel back; its text (a traceback) still ends
        # with the line that names what failed.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise EnvironmentFailure(f"on worker node {node.name}: {lines[-1] if lines else type(exc).__name__}") from None
    except (ray.exceptions.RayActorError, ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError,
            ray.exceptions.WorkerCrashedError) as exc:
        env.mark_lost(node)
        raise WorkerLost(f"worker node {node.name} was lost: {type(exc).__name__}") from None


def _spec_fields(spec: SandboxSpec) -> dict[str, Any]:
    """The spec as plain data, without the head folders that travel packed."""
    fields = spec._asdict()
    for name in SHIPPED:
        fields.pop(name)
    fields["hidden"] = [str(p) for p in spec.hidden]
    fields["readonly"] = [str(p) for p in spec.readonly]
    return fields


def _pack_spec(spec: SandboxSpec) -> dict[str, Packed]:
    return {name: pack(getattr(spec, name)) for name in SHIPPED if getattr(spec, name) is not None}


class RaySandbox:
    """A sandbox on a worker node; the port's calls go to that node's agent."""

    def __init__(self, env: RayEnvironment, node: RayNode, agent: Any, sid: str, info: Mapping[str, Any]) -> None:
        self._env, self.node, self._agent, self._sid = env, node, agent, sid
        self.paths = SandboxPaths(*info["paths"])
        self.base_commit: str = info["base_commit"]
        self.isolated: bool = info["isolated"]
        #: the folders the sandbox owns on its node (its sandbox and its staging folder)
        self.owned: tuple[str, ...] = tuple(info.get("owned", ()))

    async def _call(self, method: str, *args: Any) -> Any:
        return await self._env.call(self.node, getattr(self._agent, method).remote(self._sid, *args))

    async def exec(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdout_path: Path | None = None,
        stderr_path: Path | None = None,
        stdin: bytes | None = None,
        dialogue: Dialogue | None = None,
        egress: bool = True,
        remove_after: Sequence[str] = (),
    ) -> ExecResult:
        """Run ``argv`` on the node; see :meth:`pluginbench.environments.Sandbox.exec`.
        Output for ``stdout_path``/``stderr_path`` is written when the command ends;
        ``egress`` and ``remove_after`` do not travel (every command gets the sandbox's
        egress, and ``removed`` stays ``False``)."""
        if dialogue is not None and stdin is not None:
            raise EnvironmentFailure("exec takes stdin bytes or a dialogue, not both")
        call = uuid.uuid4().hex
        ref = self._agent.exec.remote(
            self._sid, call, list(argv), cwd, dict(env) if env is not None else None, timeout, stdin,
            (stdout_path is not None, stderr_path is not None), dialogue is not None,
        )
        if dialogue is None:
            reply = await self._env.call(self.node, ref)
        else:
            reply = await self._converse(call, ref, dialogue)
        if reply["files"]:
            try:
                for name, path in (("stdout", stdout_path), ("stderr", stderr_path)):
                    if path is not None:
                        await self._fetch_output(call, name, Path(path), *reply["files"][name])
            finally:
                with anyio.CancelScope(shield=True):
                    await self._call("drop_output", call)
        exit_code, timed_out, seconds, out, err = reply["result"][:5]
        return ExecResult(exit_code, timed_out, seconds, out, err)

    async def _fetch_output(self, call: str, name: str, path: Path, size: int, digest: str) -> None:
        """Copy an exec call's output file from the node in chunks (never whole in
        memory: it may be as big as the storage bound) and check its sha256."""
        import hashlib

        sha = hashlib.sha256()
        with open(path, "wb") as fh:
            while fh.tell() < size:
                chunk = await self._call("read_output", call, name, fh.tell())
                if not chunk:
                    break
                chunk = chunk[: size - fh.tell()]
                sha.update(chunk)
                fh.write(chunk)
        if sha.hexdigest() != digest:
            raise EnvironmentFailure(f"transfer check failed for {path}: its sha256 differs from the node's")

    async def _converse(self, call: str, ref: Any, dialogue: Dialogue) -> Any:
        """Relay the command's stdout lines to ``dialogue`` and its writes to stdin."""
        channel = LineChannel(lambda data: self._call("dialogue_send", call, data))
        reply: list[Any] = []

        async def pump() -> None:
            while (lines := await self._call("dialogue_next", call)) is not None:
                for line in lines:
                    channel.feed(line + b"\n")
            channel.end()

        async def run_command() -> None:
            reply.append(await self._env.call(self.node, ref))

        with first_error():
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump)
                tg.start_soon(run_command)
                await dialogue(channel)
                await self._call("dialogue_end", call)
                while not reply:
                    await anyio.sleep(0.01)
                tg.cancel_scope.cancel()
        return reply[0]

    async def put(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or folder in (packed on the head, unpacked on the node)."""
        host_path = Path(host_path)
        if host_path.is_symlink():
            raise EnvironmentFailure(f"refusing to copy symlink {host_path} into the sandbox")
        packed = await anyio.to_thread.run_sync(pack, host_path)
        await self._call("put", packed, sandbox_path)

    async def get(self, sandbox_path: str, host_path: Path, *, limit: int | None = None) -> None:
        """Copy a file or folder out to ``host_path``, checked against the node's sha256s
        (``limit`` is applied on the node, before anything is packed)."""
        packed = await self._call("get", sandbox_path, limit)
        await anyio.to_thread.run_sync(unpack, packed, Path(host_path))

    async def stop(self) -> None:
        await self._call("stop")

    async def export_workspace(self, host_path: Path) -> None:
        packed = await self._call("export")
        await anyio.to_thread.run_sync(unpack, packed, Path(host_path))


__all__ = ["RayEnvironment", "RayNode", "RaySandbox", "choose_node", "participating"]
