"""Images derived from a task image: the coding image with the pinned agent CLI, and the
verifier image built from a task's ``tests/Dockerfile``.

No registry is reachable, so the pinned CLI is not downloaded inside the image: the
project-local install (``tools/install-clis.sh`` puts it in ``.tools/clis``) is copied
in, only the chosen harness's npm folder (its :class:`~pluginbench.harness_registry.CliPin`
declares the package and executable) and its ``.bin`` link, under
:data:`CLI_ROOT`. The derived image is tagged by harness, version and base image ID and
reused while the engine holds it, so each (task image, CLI version) is built once. The
engine caller checks ``<cli> --version`` in a container before any coding.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import aiodocker
import anyio

from ..errors import EnvironmentFailure
from ..harness_registry import CliPin
from ..tasks import HarborTask
from ._docker_engine import Upload
from ._docker_images import IMAGE_LABEL, build_image, image_id

CLI_ROOT = "/opt/pluginbench/clis"
LABEL_CLI = "pluginbench.image.cli"
LABEL_BASE = "pluginbench.image.base"


def cli_path_in_image(cli: CliPin) -> str:
    """Where the coding image holds the CLI's executable."""
    return f"{CLI_ROOT}/node_modules/.bin/{cli.command}"


def _context(clis_dir: Path, harness: str, cli: CliPin, base_id: str, out: io.BufferedIOBase) -> None:
    """A build context: a Dockerfile and the harness's installed package tree (links kept)."""
    scope, exe = cli.npm_folder, cli.command
    modules = clis_dir / "node_modules"
    if not (modules / scope).is_dir() or not (modules / ".bin" / exe).exists():
        raise EnvironmentFailure(
            f"the {harness} CLI is not installed in {clis_dir}; run tools/install-clis.sh"
        )
    node = private_node(cli)[0] if cli.node_major is not None else None
    dockerfile = f"FROM {base_id}\nCOPY clis/ {CLI_ROOT}/\n".encode()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
        _add_bytes(tf, "Dockerfile", dockerfile, 0o644)
        # Our own pinned install, trusted: its npm links (.bin) are kept as links.
        tf.add(modules / scope, arcname=f"clis/node_modules/{scope}", recursive=True)
        if node is None:
            tf.add(modules / ".bin" / exe, arcname=f"clis/node_modules/.bin/{exe}", recursive=False)
            return
        # A node script whose package needs a newer node than the task image may have: the
        # host's node goes in privately and the executable becomes a wrapper that runs the
        # package's entry point with it (the task's own PATH and node are left as they are).
        entry = os.path.normpath(os.path.join("node_modules/.bin", os.readlink(modules / ".bin" / exe))) \
            if (modules / ".bin" / exe).is_symlink() else f"node_modules/.bin/{exe}.js"
        tf.add(node, arcname="clis/node/bin/node", recursive=False)
        wrapper = f'#!/bin/sh\nexec {NODE_IN_IMAGE} {CLI_ROOT}/{entry} "$@"\n'.encode()
        _add_bytes(tf, f"clis/node_modules/.bin/{exe}", wrapper, 0o755)


#: Where a coding image keeps the private ``node`` of a CLI that declares ``node_major``.
NODE_IN_IMAGE = f"{CLI_ROOT}/node/bin/node"


def _add_bytes(tf: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = mode
    tf.addfile(info, io.BytesIO(data))


@functools.lru_cache(maxsize=1)
def _host_node() -> tuple[str | None, str]:
    """The host's ``node`` and what its ``--version`` says (``""`` when it says nothing), asked
    once per process: a run asks for every task whose coding image it derives."""
    found = shutil.which("node")
    version = ""
    if found is not None:
        try:
            version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30,
                                     stdin=subprocess.DEVNULL, check=False, start_new_session=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            version = ""
    return found, version


def private_node(cli: CliPin) -> tuple[Path, str]:
    """The host's ``node`` executable and its version for a CLI that needs at least
    ``cli.node_major``; an :class:`EnvironmentFailure` naming both versions when there is
    none that new."""
    found, version = _host_node()
    major = int(version.lstrip("v").split(".")[0]) if version.lstrip("v").split(".")[0].isdigit() else 0
    if found is None or major < (cli.node_major or 0):
        raise EnvironmentFailure(
            f"{cli.package} {cli.version} needs node {cli.node_major} or newer in its docker coding image, and "
            f"the host's node is {version or 'missing'}; install node {cli.node_major}+ on the host (it is copied "
            "into the image for this CLI only)"
        )
    return Path(found).resolve(), version


async def derive_cli_image(
    docker: aiodocker.Docker, base_id: str, harness: str, cli: CliPin, version: str, clis_dir: Path, *,
    timeout: float = 900,
) -> str:
    """The task image ``base_id`` plus the ``harness``'s pinned CLI ``cli`` at ``version``; its image ID."""
    tag = f"pluginbench/coding-{harness}-{version}:{base_id.split(':')[-1][:12]}"
    # the private node's version is part of what the image holds: a new host node rebuilds it
    what = f"{harness}@{version}"
    if cli.node_major is not None:
        what += "+node@" + (await anyio.to_thread.run_sync(private_node, cli))[1].lstrip("v")
    found = await image_id(docker, tag)
    if found is not None:
        info = await docker.images.inspect(found)
        labels = (info.get("Config") or {}).get("Labels") or {}
        if labels.get(LABEL_CLI) == what and labels.get(LABEL_BASE) == base_id:
            return found
    built: str | None = None
    with tempfile.TemporaryFile() as fh:
        await anyio.to_thread.run_sync(_context, clis_dir, harness, cli, base_id, fh)
        fh.seek(0)
        with anyio.move_on_after(timeout) as deadline:
            try:
                async for item in docker.images.build(
                    fileobj=Upload(fh), encoding="identity", tag=tag, rm=True, forcerm=True, pull=False,
                    stream=True, labels={LABEL_CLI: what, LABEL_BASE: base_id},
                ):
                    aux = item.get("aux")
                    if isinstance(aux, dict) and aux.get("ID"):
                        built = str(aux["ID"])
                    if item.get("error"):
                        raise EnvironmentFailure(f"deriving the {harness} coding image failed: {item['error']}")
            except aiodocker.DockerError as exc:
                raise EnvironmentFailure(f"deriving the {harness} coding image failed: {exc.message}") from exc
    if deadline.cancelled_caught:
        raise EnvironmentFailure(f"deriving the {harness} coding image took longer than {timeout:g} s")
    found = built or await image_id(docker, tag)
    if found is None:
        raise EnvironmentFailure(f"the derived coding image {tag} is missing after its build")
    return found


async def verifier_image(docker: aiodocker.Docker, task_root: Path, task: HarborTask, task_image: str) -> str:
    """Harbor's precedence: ``tests/Dockerfile`` built with ``tests/`` as context, then
    ``[verifier.environment].docker_image`` as published, else the task image itself (the
    hidden tests are copied into a fresh container in every case)."""
    if (task_root / "tests" / "Dockerfile").is_file():
        return await build_image(docker, task_root / "tests", task._replace(id=f"{task.id}-verifier"))
    if task.verifier_docker_image:
        found = await image_id(docker, task.verifier_docker_image)
        if found is None:
            raise EnvironmentFailure(
                f"task '{task.id}': verifier image {task.verifier_docker_image!r} "
                "([verifier.environment].docker_image) is not on this Docker engine, and no registry is used"
            )
        return found
    return task_image


__all__ = ["CLI_ROOT", "IMAGE_LABEL", "NODE_IN_IMAGE", "private_node", "cli_path_in_image", "derive_cli_image", "verifier_image"]
