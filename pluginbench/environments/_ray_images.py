"""Frozen task images between the head and a Ray worker node's own Docker Engine.

The head prepares and freezes every image exactly as the docker backend does, on its own
engine (:mod:`._docker_images`, :mod:`._docker_derived`): an attempt runs a frozen image
*ID*. A worker node runs containers on *its* engine, so before a node opens a sandbox
from an image it does not hold, the head exports that image (``docker save`` of the ID,
streamed to a file while hashing), puts it into Ray's object store in chunks, and the
node writes the chunks to its own disk, checks the sha256 against the head's, loads the
tar into its engine (``docker load``) and then checks that its engine now holds exactly
the frozen ID. An image a node already holds under that ID (loaded earlier, or put there
by its administrator) is used as is: an image ID is the hash of the image's
configuration, so equal IDs are the same image.

A node never builds a task image itself: ``docker build`` stamps creation times into the
image configuration, so an image built on another engine gets another ID and would be
refused anyway.
"""

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import aiodocker
import anyio

from ..errors import EnvironmentFailure
from ._docker_engine import Upload, engine

#: Bytes per object in Ray's object store (a 350 MB image travels as 6 chunks).
CHUNK_BYTES = 64 << 20
#: How a node keeps a loaded image from being pruned as dangling: tagged with its ID.
FROZEN_REPO = "pluginbench/frozen"
_ID = re.compile(r"^sha256:[0-9a-f]{64}$")


class ImageExport(NamedTuple):
    """An exported image as it travels: its frozen ID, the tar's sha256 and size, and the
    Ray object references of its chunks (in order)."""

    image_id: str
    sha256: str
    size: int
    chunks: list[Any]


def require_frozen_id(image: str | None, attempt_id: str) -> str:
    """``image`` when it is a full image ID (``sha256:`` + 64 hex); a tag is refused,
    because a tag can move and a node's tag can name another image."""
    if not image or not _ID.match(image):
        raise EnvironmentFailure(
            f"attempt {attempt_id}: docker sandboxes on Ray nodes run frozen image IDs (sha256:...), not {image!r}"
        )
    return image


async def save_image(docker_host: str | None, image_id: str, out: Path) -> tuple[str, int]:
    """``docker save`` of ``image_id`` on the head's engine into ``out``; (sha256, bytes)."""
    digest = hashlib.sha256()
    size = 0
    async with engine(docker_host) as docker:
        try:
            async with docker._query(f"images/{image_id}/get", method="GET") as resp:
                with open(out, "wb") as fh:
                    async for chunk in resp.content.iter_chunked(1 << 20):
                        digest.update(chunk)
                        size += len(chunk)
                        await anyio.to_thread.run_sync(fh.write, chunk)
        except aiodocker.DockerError as exc:
            raise EnvironmentFailure(f"cannot export image {image_id} from the head's Docker engine: {exc.message}") from exc
    return digest.hexdigest(), size


def read_chunks(path: Path, size: int = CHUNK_BYTES) -> Any:
    """The file's bytes in chunks of ``size`` (a generator)."""
    with open(path, "rb") as fh:
        while chunk := fh.read(size):
            yield chunk


async def node_image_id(docker_host: str | None, ref: str) -> str | None:
    """The ID of ``ref`` on this node's engine, or ``None``."""
    from ._docker_images import image_id

    async with engine(docker_host) as docker:
        return await image_id(docker, ref)


async def load_image(docker_host: str | None, export: ImageExport, scratch: Path, node: str) -> str:
    """On a node: write the export's chunks to ``scratch``, check its sha256, load it into
    this node's engine, and return the frozen ID once the engine holds exactly it.

    Refuses (:class:`EnvironmentFailure`) on a hash mismatch (nothing is loaded) or when the
    loaded image's ID is not the frozen ID."""
    scratch.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="image-", suffix=".tar", dir=scratch)
    path = Path(name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as fh:
            for ref in export.chunks:
                chunk = await ref
                digest.update(chunk)
                await anyio.to_thread.run_sync(fh.write, chunk)
        if digest.hexdigest() != export.sha256:
            raise EnvironmentFailure(
                f"node {node}: the export of image {export.image_id} arrived with sha256 {digest.hexdigest()}, "
                f"not the head's {export.sha256}; nothing was loaded"
            )
        async with engine(docker_host) as docker:
            loaded = await _docker_load(docker, path)
            from ._docker_images import image_id

            found = await image_id(docker, export.image_id)
            if found != export.image_id:
                got = ", ".join(loaded) or "no image"
                raise EnvironmentFailure(
                    f"node {node}: loading the head's export gave image ID {got}, not the frozen "
                    f"{export.image_id}; refusing to run an attempt from it"
                )
            await docker.images.tag(found, FROZEN_REPO, tag=found.split(":", 1)[1][:12])
        return found
    finally:
        path.unlink(missing_ok=True)


async def _docker_load(docker: aiodocker.Docker, path: Path) -> list[str]:
    """``docker load`` of the tar at ``path``; the IDs/tags the engine says it loaded."""
    loaded: list[str] = []
    try:
        with open(path, "rb") as fh:
            async with docker._query(
                "images/load", method="POST", data=Upload(fh).chunks(),
                headers={"content-type": "application/x-tar"}, params={"quiet": "1"},
            ) as resp:
                body = await resp.read()
    except aiodocker.DockerError as exc:
        raise EnvironmentFailure(f"docker load of an exported image failed: {exc.message}") from exc
    for line in body.decode(errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if item.get("error"):
            raise EnvironmentFailure(f"docker load of an exported image failed: {item['error']}")
        text = str(item.get("stream", ""))
        for prefix in ("Loaded image ID: ", "Loaded image: "):
            if text.startswith(prefix):
                loaded.append(text[len(prefix):].strip())
    return loaded


class ImageShipper:
    """The head's side: export each frozen image once per run (kept in Ray's object store
    while the run needs it) and make sure a node holds it before a sandbox opens there.

    ``call(node, ref)`` awaits an agent call (the environment's, so a lost node raises
    :class:`~pluginbench.errors.WorkerLost`); ``agent(node)`` is the node's agent."""

    def __init__(self, docker_host: str | None, scratch: Path) -> None:
        self.docker_host = docker_host
        self.scratch = scratch
        self._exports: dict[str, ImageExport] = {}
        self._on_node: set[tuple[str, str]] = set()
        self._locks: dict[Any, anyio.Lock] = {}
        #: seconds per (node name, image ID) spent exporting (first node) and loading
        self.timings: list[dict[str, Any]] = []

    def _lock(self, key: Any) -> anyio.Lock:
        return self._locks.setdefault(key, anyio.Lock())

    async def export(self, image_id: str) -> ImageExport:
        """The image's export, made on first use: saved on the head, hashed, chunked into Ray."""
        async with self._lock(image_id):
            found = self._exports.get(image_id)
            if found is not None:
                return found
            import ray

            self.scratch.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix="export-", suffix=".tar", dir=self.scratch)
            os.close(fd)
            path = Path(name)
            try:
                digest, size = await save_image(self.docker_host, image_id, path)
                chunks = await anyio.to_thread.run_sync(lambda: [ray.put(c) for c in read_chunks(path)])
            finally:
                path.unlink(missing_ok=True)
            export = ImageExport(image_id, digest, size, chunks)
            self._exports[image_id] = export
            return export

    async def ensure(self, node_id: str, node_name: str, image_id: str, agent: Any,
                     call: Any) -> None:
        """Make the node's engine hold ``image_id`` (loaded from the head's export unless it
        already does); raises when the node refuses."""
        if (node_id, image_id) in self._on_node:
            return
        async with self._lock((node_id, image_id)):
            if (node_id, image_id) in self._on_node:
                return
            if not await call(agent.has_image.remote(image_id)):
                started = anyio.current_time()
                export = await self.export(image_id)
                exported = anyio.current_time()
                await call(agent.load_image.remote(export))
                self.timings.append({"node": node_name, "image": image_id, "bytes": export.size,
                                     "export_seconds": exported - started,
                                     "load_seconds": anyio.current_time() - exported})
            self._on_node.add((node_id, image_id))

    def forget_node(self, node_id: str) -> None:
        self._on_node = {k for k in self._on_node if k[0] != node_id}


__all__ = ["CHUNK_BYTES", "ImageShipper", "FROZEN_REPO", "ImageExport", "load_image", "node_image_id", "read_chunks",
           "require_frozen_id", "save_image"]
