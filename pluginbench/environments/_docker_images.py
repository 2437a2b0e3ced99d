"""Task images for the docker backend: build, look up, freeze to an image ID.

A task's image comes from exactly one source, in this order:

1. ``[environment].docker_image`` as published. No registry is contacted: the image must
   already be on the engine (``docker load`` or a local build put it there).
2. ``environment/Dockerfile``, built through the Engine API from a tar of
   ``environment/`` (the build context, checked like every task tree: no symlinks), within
   the task's ``build_timeout_sec``, never pulling. The image is tagged
   ``pluginbench/task-<id>:<context fingerprint>`` so a rebuild of the same context hits
   the engine's cache.
3. A task with only ``workspace/``: the local base image ``pluginbench/base:bookworm``
   (``tools/build-base-image.sh``).

The result is the image *ID* (``sha256:...``): sandboxes are created from it, so a tag
moved later cannot change what an attempt runs.
"""

from __future__ import annotations

import re
import tempfile
from collections import deque
from pathlib import Path

import aiodocker
import anyio

from ..errors import EnvironmentFailure
from ..tasks import HarborTask, fingerprint, scan_tree
from ._docker_engine import Upload
from ._docker_tar import pack

BASE_IMAGE = "pluginbench/base:bookworm"
BASE_HINT = "build it with tools/build-base-image.sh"
# Image labels are inherited by containers, so images never carry the container ownership
# label (pluginbench.owner): a container someone else starts from them is not ours.
IMAGE_LABEL = "pluginbench.image.task"


async def image_id(docker: aiodocker.Docker, ref: str) -> str | None:
    """The ID of image ``ref`` on the engine, or ``None`` when the engine has no such image."""
    try:
        info = await docker.images.inspect(ref)
    except aiodocker.DockerError as exc:
        if exc.status == 404:
            return None
        raise EnvironmentFailure(f"cannot inspect image {ref!r}: {exc.message}") from exc
    return str(info["Id"])


def _tag_for(task: HarborTask, digest: str) -> str:
    safe = re.sub(r"[^a-z0-9._-]", "-", task.id.lower()).strip(".-_")[:60] or "task"
    return f"pluginbench/task-{safe}:{digest[:12]}"


async def build_image(docker: aiodocker.Docker, context: Path, task: HarborTask) -> str:
    """Build ``context``/Dockerfile for ``task``; the image ID or a clear failure."""
    # An unsafe context (symlinks, special files) is the task's fault: UnsafeTree says so.
    entries = scan_tree(context, context=f"task '{task.id}' build context environment/")
    tag = _tag_for(task, fingerprint(entries))
    tail: deque[str] = deque(maxlen=15)
    built: str | None = None
    with tempfile.TemporaryFile() as fh:
        # Fixed member times: equal contexts give equal layers and reuse the build cache.
        await anyio.to_thread.run_sync(lambda: pack(context, "", fh, mtime=0))
        fh.seek(0)
        with anyio.move_on_after(task.build_timeout_sec) as deadline:
            try:
                stream = docker.images.build(
                    fileobj=Upload(fh),
                    encoding="identity",
                    tag=tag,
                    labels={IMAGE_LABEL: task.id},
                    rm=True,
                    forcerm=True,
                    pull=False,
                    stream=True,
                )
                async for item in stream:
                    text = str(item.get("stream", "")).rstrip()
                    if text:
                        tail.extend(text.splitlines())
                    aux = item.get("aux")
                    if isinstance(aux, dict) and aux.get("ID"):
                        built = str(aux["ID"])
            except aiodocker.DockerError as exc:
                log = "\n".join(f"    {line}" for line in tail)
                raise EnvironmentFailure(
                    f"task '{task.id}': environment/Dockerfile did not build: {exc.message}"
                    + (f"\n  last build output:\n{log}" if log else "")
                ) from exc
    if deadline.cancelled_caught:
        raise EnvironmentFailure(
            f"task '{task.id}': building environment/Dockerfile took longer than "
            f"build_timeout_sec={task.build_timeout_sec:g}; raise [environment].build_timeout_sec "
            f"or make the build faster"
        )
    found = built or await image_id(docker, tag)
    if found is None:
        raise EnvironmentFailure(f"task '{task.id}': the build finished but image {tag} is missing")
    return found


async def prepare_image(docker: aiodocker.Docker, task_root: Path, task: HarborTask) -> str:
    """The frozen image ID for ``task`` (see the module docstring for the order)."""
    if task.docker_image:
        found = await image_id(docker, task.docker_image)
        if found is None:
            raise EnvironmentFailure(
                f"task '{task.id}': image {task.docker_image!r} ([environment].docker_image) is not "
                f"on this Docker engine, and no image registry is used; load or build it first"
            )
        return found
    dockerfile = task_root / "environment" / "Dockerfile"
    if dockerfile.is_file():
        return await build_image(docker, task_root / "environment", task)
    if (task_root / "workspace").is_dir():
        found = await image_id(docker, BASE_IMAGE)
        if found is None:
            raise EnvironmentFailure(
                f"task '{task.id}' has only workspace/ and runs on {BASE_IMAGE}, which this engine "
                f"does not have; {BASE_HINT}"
            )
        return found
    raise EnvironmentFailure(
        f"task '{task.id}' has no [environment].docker_image, no environment/Dockerfile and no "
        f"workspace/; the docker backend needs one of them"
    )
