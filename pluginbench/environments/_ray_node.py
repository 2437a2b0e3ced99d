"""The worker-node side of the ``ray`` backend: one agent per node hosting its sandboxes.

A :class:`NodeAgent` is a Ray actor pinned to one worker node. It makes sandboxes with
that node's own :class:`~pluginbench.environments.LocalEnvironment` (bubblewrap when
usable, exactly as on one machine) or, with ``sandbox="docker"``, with that node's own
Docker Engine (:class:`~pluginbench.environments._docker.DockerEnvironment`, a container
per sandbox from a frozen image ID that :mod:`._ray_images` loaded there), and serves the sandbox port's calls from the head:
``exec`` (with deadlines, cancellation and line dialogues), ``put``/``get``/``export``
as packed transfers, ``stop`` and ``close``. What a sandbox starts from (workspace,
private HOME, tests, solution) arrives packed and is unpacked under the agent's own
staging folder on this node, so nothing here reads a head path; the staging folder is
owner-only and removed with the sandbox, so delivered credentials live on this node only
while the attempt runs.

This module imports no Ray: the head wraps the class with ``ray.remote``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio

from ..errors import EnvironmentFailure
from ..rundir import sha256_file
from ._dialogue import MAX_QUEUED_BYTES, LineChannel
from ._egress import Egress
from ._local import Isolation
from ._local_env import LocalEnvironment
from ._local_paths import _safe_name
from ._port import SandboxSpec
from ._ray_images import ImageExport, load_image, node_image_id, require_frozen_id
from ._ray_transfer import Packed, pack, unpack

#: Spec fields that are head folders: packed on the head, unpacked here.
SHIPPED = ("workspace", "tests", "solution", "home")
#: How much of a command's output file one call to the head carries.
OUTPUT_CHUNK_BYTES = 8 * 1024 * 1024


class _Dialogue:
    """One exec's line conversation, relayed to the head: lines out, stdin in."""

    def __init__(self) -> None:
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.queued = 0  # bytes of lines waiting for the head: at most about MAX_QUEUED_BYTES
        self.ended = asyncio.Event()
        self.attached = asyncio.Event()  # the command runs and its stdin can take writes
        self.lines_done = asyncio.Event()  # the exec call ended
        self.channel: LineChannel | None = None

    async def run(self, channel: LineChannel) -> None:
        """The dialogue the local backend runs: relay stdout lines until the head ends it."""
        self.channel = channel
        self.attached.set()

        async def relay() -> None:
            while (line := await channel.receive_line()) is not None:
                # Held back while the head is behind: the channel's own bound then drops
                # lines, so an endless print never fills this node's memory.
                while self.queued > MAX_QUEUED_BYTES:
                    await asyncio.sleep(0.01)
                self.queued += len(line)
                self.lines.put_nowait(line)
            self.lines.put_nowait(None)

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            await self.ended.wait()
            tg.cancel_scope.cancel()

    def take(self, line: bytes) -> bytes:
        """A line handed to the head: its bytes no longer wait here."""
        self.queued -= len(line)
        return line


class _Held:
    """A sandbox held open by its own task until the head closes it."""

    def __init__(self, staging: Path) -> None:
        self.staging = staging
        self.box: Any = None
        self.ready = asyncio.Event()
        self.close = asyncio.Event()
        self.error: BaseException | None = None
        self.task: asyncio.Task[None] | None = None
        self.dialogues: dict[str, _Dialogue] = {}
        self.finished: set[str] = set()  # exec calls that ended
        self.outputs: dict[str, Path] = {}  # exec call -> its output folder, until the head read it


class NodeAgent:
    """Serves one node's sandboxes to the head (see the module docstring)."""

    def __init__(self, node_name: str, isolation: Isolation = "auto", root: str | None = None,
                 sandbox: str = "bubblewrap", docker_host: str | None = None, allow_host_root: bool = False) -> None:
        self.node_name = node_name
        self.root = Path(root) if root else Path(tempfile.gettempdir())
        self.sandbox_kind = sandbox
        self.docker_host = docker_host
        self.allow_host_root = allow_host_root
        self.env: Any
        if sandbox == "docker":
            from ._docker import DockerEnvironment

            self.env = DockerEnvironment(docker_host=docker_host, allow_host_root=allow_host_root)
        else:
            self.env = LocalEnvironment(isolation=isolation, root=self.root)
        self.held: dict[str, _Held] = {}
        self._image_lock = asyncio.Lock()

    # -- the node ---------------------------------------------------------------------

    async def describe(self) -> dict[str, Any]:
        """What the capacity check and ``doctor`` need to know about this node."""
        from .. import __version__ as version

        problem = None
        pages = os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        memory_mb = int(pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)) if pages else None
        docker = await self._docker_status()
        if self.sandbox_kind == "docker":
            isolated = docker["problem"] is None
            problem = docker["problem"]
            if problem is None:
                # containers are limited by what this node's engine has (80% of its memory)
                cpus, memory_mb = docker["cpus"], docker["memory_budget_mb"]
        else:
            try:
                await self.env.check()
                isolated = self.env.isolated
            except EnvironmentFailure as exc:
                problem, isolated = str(exc), False
        return {
            "node": self.node_name,
            "hostname": socket.gethostname(),
            "sandbox": self.sandbox_kind,
            "cpus": cpus,
            "memory_mb": memory_mb,
            "isolated": isolated,
            "problem": problem,
            "docker": docker,
            "pluginbench": version,
            "python": ".".join(map(str, sys.version_info[:3])),
        }

    async def _docker_status(self) -> dict[str, Any]:
        """This node's Docker Engine: where, its ID and version, CPUs, memory budget, or the
        problem that keeps it from running sandboxes."""
        from ._docker import DockerEnvironment
        from ._docker_engine import socket_of

        try:
            where = socket_of(self.docker_host)[0]
            # only docker sandboxes run as the engine's container root
            env = DockerEnvironment(docker_host=self.docker_host,
                                    allow_host_root=self.allow_host_root or self.sandbox_kind != "docker")
            info = await env.info()
            await env.check()
        except EnvironmentFailure as exc:
            return {"host": self.docker_host, "problem": str(exc)}
        return {"host": where, "problem": None, "id": info.id, "version": info.version, "cpus": info.cpus,
                "memory_budget_mb": info.memory_budget_mb}

    # -- images (docker sandboxes) -------------------------------------------------------

    async def has_image(self, image_id: str) -> bool:
        """Whether this node's engine holds exactly the frozen ``image_id``."""
        return await node_image_id(self.docker_host, image_id) == image_id

    async def load_image(self, export: ImageExport) -> str:
        """Load the head's export of a frozen image into this node's engine (hash-checked;
        refused unless the engine then holds exactly the frozen ID)."""
        async with self._image_lock:
            if await self.has_image(export.image_id):
                return export.image_id
            return await load_image(self.docker_host, export, self.root / "pluginbench-ray-images", self.node_name)

    async def stop_left_running(self, run_id: str) -> list[str]:
        """Remove what a killed head of ``run_id`` left on this node: sandboxes and staging."""
        for held in list(self.held.values()):
            held.close.set()
        found = [f"{self.node_name}: {what}" for what in await self.env.stop_left_running(run_id)]
        prefix = f"pluginbench-ray-{_safe_name(run_id)}-"
        for folder in sorted(self.root.glob(prefix + "*")):
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)
                found.append(f"{self.node_name}: staging folder {folder}")
        return found

    async def remove_left_stopped(self, run_id: str) -> list[str]:
        """Remove the containers of ``run_id`` a killed head left stopped on this node's
        engine (exited or never started); a bubblewrap node has none."""
        remove = getattr(self.env, "remove_left_stopped", None)
        if remove is None:
            return []
        return [f"{self.node_name}: {what}" for what in await remove(run_id)]

    # -- one sandbox ---------------------------------------------------------------------

    async def open(self, sid: str, spec: dict[str, Any], shipped: dict[str, Packed]) -> dict[str, Any]:
        """Unpack what the sandbox starts from and open it; its paths and base commit."""
        # A node's root (the settings' ``root``, else its TMPDIR) may not exist yet on a fresh node.
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(
            prefix=f"pluginbench-ray-{_safe_name(spec['run_id'])}-{_safe_name(spec['attempt_id'])}-",
            dir=self.root,
        ))
        os.chmod(staging, 0o700)
        held = _Held(staging)
        self.held[sid] = held
        try:
            if self.sandbox_kind == "docker":
                image = require_frozen_id(spec.get("image"), spec["attempt_id"])
                if not await self.has_image(image):
                    raise EnvironmentFailure(
                        f"node {self.node_name}: its Docker engine does not hold the frozen image {image}; "
                        "refusing to run the attempt from anything else"
                    )
            local: dict[str, Any] = {}
            for name, packed in shipped.items():
                await anyio.to_thread.run_sync(unpack, packed, staging / name)
                local[name] = staging / name
            fields = {**spec, **local}
            fields["hidden"] = (*(Path(p) for p in spec.get("hidden", ())), staging)
            fields["readonly"] = tuple(Path(p) for p in spec.get("readonly", ()))
            if "egress" in spec:  # plain data on the wire: back to the policy value
                mode, port, hosts, public = spec["egress"]
                fields["egress"] = Egress(mode, int(port), tuple(hosts), bool(public))
            fields["git_identity"] = tuple(spec.get("git_identity", ("PluginBench Agent", "agent@pluginbench.invalid")))
            sandbox_spec = SandboxSpec(**fields)
        except BaseException:
            await self._forget(sid)
            raise
        held.task = asyncio.ensure_future(self._hold(held, sandbox_spec))
        await held.ready.wait()
        if held.error is not None:
            await self._forget(sid)
            raise held.error
        box = held.box
        first = box.container_id if self.sandbox_kind == "docker" else str(box.root)
        return {"paths": tuple(box.paths), "base_commit": box.base_commit, "isolated": box.isolated,
                "owned": [first, str(held.staging)]}

    async def _hold(self, held: _Held, spec: SandboxSpec) -> None:
        try:
            async with self.env.sandbox(spec) as box:
                held.box = box
                held.ready.set()
                await held.close.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to open() or close()
            held.error = exc
        finally:
            held.ready.set()

    def _box(self, sid: str) -> Any:
        held = self.held.get(sid)
        if held is None or held.box is None:
            raise EnvironmentFailure("the sandbox is gone")
        return held.box

    async def exec(
        self, sid: str, call: str, argv: list[str], cwd: str | None, env: Mapping[str, str] | None,
        timeout: float | None, stdin: bytes | None, to_files: tuple[bool, bool], dialogue: bool,
    ) -> dict[str, Any]:
        """Run one command. Output for the head's files stays in a folder here, listed by
        size and sha256: the head reads it in chunks (:meth:`read_output`, up to the
        storage bound, never whole in memory) and then drops it (:meth:`drop_output`)."""
        box, held = self._box(sid), self.held[sid]
        talk = _Dialogue() if dialogue else None
        if talk is not None:
            held.dialogues[call] = talk
        out_dir = Path(tempfile.mkdtemp(prefix="exec-", dir=held.staging))
        paths = [out_dir / "stdout" if to_files[0] else None, out_dir / "stderr" if to_files[1] else None]
        kept = False
        try:
            result = await box.exec(
                argv, cwd=cwd, env=env, timeout=timeout, stdout_path=paths[0], stderr_path=paths[1],
                stdin=stdin, dialogue=talk.run if talk is not None else None,
            )
            files = {}
            for name, path in zip(("stdout", "stderr"), paths, strict=True):
                if path is not None:
                    files[name] = (path.stat().st_size, sha256_file(path))
            if files:
                held.outputs[call], kept = out_dir, True
            return {"result": tuple(result), "files": files}
        finally:
            if talk is not None:
                talk.lines.put_nowait(None)
                talk.lines_done.set()
                held.finished.add(call)
                held.dialogues.pop(call, None)
            if not kept:
                shutil.rmtree(out_dir, ignore_errors=True)

    async def read_output(self, sid: str, call: str, name: str, offset: int) -> bytes:
        """Up to :data:`OUTPUT_CHUNK_BYTES` of an exec call's ``stdout``/``stderr`` file from ``offset``."""
        held = self.held.get(sid)
        folder = held.outputs.get(call) if held is not None else None
        if folder is None or name not in ("stdout", "stderr"):
            raise EnvironmentFailure(f"no output {name!r} of that command is kept on the node")
        with open(folder / name, "rb") as fh:
            fh.seek(offset)
            return fh.read(OUTPUT_CHUNK_BYTES)

    async def drop_output(self, sid: str, call: str) -> None:
        """Remove an exec call's output files once the head has them."""
        held = self.held.get(sid)
        folder = held.outputs.pop(call, None) if held is not None else None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    async def dialogue_next(self, sid: str, call: str) -> list[bytes] | None:
        """The stdout lines since the last call (waiting for one), or None once stdout ended."""
        talk = await self._dialogue(sid, call)
        if talk is None:
            return None
        first = await talk.lines.get()
        if first is None:
            return None
        lines = [talk.take(first)]
        while not talk.lines.empty():
            nxt = talk.lines.get_nowait()
            if nxt is None:
                talk.lines.put_nowait(None)
                break
            lines.append(talk.take(nxt))
        return lines

    async def dialogue_send(self, sid: str, call: str, data: bytes) -> None:
        """Write to the command's stdin, once it runs (a write sent before it started
        waits for it; one after it ended is dropped, as locally)."""
        talk = await self._dialogue(sid, call)
        if talk is None:
            return
        ended = asyncio.ensure_future(talk.lines_done.wait())
        attached = asyncio.ensure_future(talk.attached.wait())
        try:
            await asyncio.wait({ended, attached}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            attached.cancel()
        if talk.channel is not None:
            await talk.channel.send(data)

    async def _dialogue(self, sid: str, call: str) -> _Dialogue | None:
        """The exec call's dialogue, waiting for the call to start (Ray does not order an
        async actor's calls); None once it ended or the sandbox is gone."""
        for _ in range(6000):
            held = self.held.get(sid)
            if held is None or call in held.finished:
                return None
            if call in held.dialogues:
                return held.dialogues[call]
            await asyncio.sleep(0.01)
        return None

    async def dialogue_end(self, sid: str, call: str) -> None:
        talk = await self._dialogue(sid, call)
        if talk is not None:
            talk.ended.set()

    async def put(self, sid: str, packed: Packed, sandbox_path: str) -> None:
        box, held = self._box(sid), self.held[sid]
        incoming = Path(tempfile.mkdtemp(prefix="put-", dir=held.staging))
        try:
            target = incoming / "item"
            await anyio.to_thread.run_sync(unpack, packed, target)
            await box.put(target, sandbox_path)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)

    async def get(self, sid: str, sandbox_path: str, limit: int | None = None) -> Packed:
        box, held = self._box(sid), self.held[sid]
        return await self._out(held, lambda dest: box.get(sandbox_path, dest, limit=limit))

    async def stop(self, sid: str) -> None:
        await self._box(sid).stop()

    async def export(self, sid: str) -> Packed:
        box, held = self._box(sid), self.held[sid]
        return await self._out(held, box.export_workspace)

    async def _out(self, held: _Held, copy: Any) -> Packed:
        outgoing = Path(tempfile.mkdtemp(prefix="get-", dir=held.staging))
        try:
            dest = outgoing / "item"
            await copy(dest)
            return await anyio.to_thread.run_sync(pack, dest)
        finally:
            shutil.rmtree(outgoing, ignore_errors=True)

    async def close(self, sid: str) -> None:
        """Close the sandbox (its processes and folder go) and remove its staging folder."""
        held = self.held.get(sid)
        if held is None:
            return
        held.close.set()
        if held.task is not None:
            with suppress(BaseException):
                await held.task
        error = held.error
        await self._forget(sid)
        if error is not None and not isinstance(error, asyncio.CancelledError):
            raise EnvironmentFailure(f"closing the sandbox failed: {error}")

    async def _forget(self, sid: str) -> None:
        held = self.held.pop(sid, None)
        if held is not None:
            await anyio.to_thread.run_sync(lambda: shutil.rmtree(held.staging, ignore_errors=True))
