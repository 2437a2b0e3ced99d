"""Preparation's proof that a DeepSWE grader image matches the frozen inputs.

For a reviewed DeepSWE contract on docker, before readiness: a fresh verifier sandbox of
the frozen grader image (with the frozen ``tests/`` staged as ``/tests``) must have

* ``/app`` at ``HEAD == tests/config.json base_commit``;
* the same git base inventory (``git ls-files -s``: paths, modes, blob ids) as the coding
  image's ``/app``;
* a working tree whose paths, file modes and bytes equal the frozen starting source that
  patches are made against (exported from the task image);
* the verifier payload (``/tests/test.sh``, ``grader.py``, ``test.patch``, ``config.json``)
  with the sha256s admission recorded.

Anything else could redirect verification and is refused (preparation fails, naming what
differs). The proof, and the cleanup of its sandboxes, go to
``evidence/frozen/contracts/<task>.proof.json``.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from ..environments import SandboxSpec
from ..errors import TaskError
from ..tasks import fingerprint, scan_tree
from ._context import Engine
from ._pipeline import write_json


async def _inventory(engine: Engine, task_id: str, image: str, role: str, tests: Path | None,
                     export: Path | None) -> tuple[str, str, dict[str, str]]:
    """(HEAD, sha256 of ``git ls-files -s``, payload sha256s) of ``/app`` in a sandbox of ``image``."""
    task = engine.tasks[task_id]
    spec = SandboxSpec(run_id=engine.run_id, attempt_id=f"grader-proof-{role}-{task_id}", role="readiness",
                       task=task_id, image=image, workdir=task.workdir, tests=tests, hidden=engine.hidden)
    async with engine.environment.sandbox(spec) as sb:
        app = sb.paths.app
        git = ["git", "-c", f"safe.directory={app}", "-C", app]
        head = await sb.exec([*git, "rev-parse", "HEAD"], timeout=120)
        files = await sb.exec([*git, "ls-files", "-s"], timeout=300)
        payload: dict[str, str] = {}
        if tests is not None:
            from ..tasks import DEEPSWE_PAYLOAD  # the DeepSWE contract's code, only for its tasks

            for name in DEEPSWE_PAYLOAD:
                got = await sb.exec(["sha256sum", f"{sb.paths.tests}/{name}"], timeout=60)
                payload[f"tests/{name}"] = got.stdout.decode(errors="replace").split(" ")[0].strip()
        await sb.stop()
        if export is not None:
            await sb.export_workspace(export)
    if head.exit_code != 0 or files.exit_code != 0:
        raise TaskError(
            f"task '{task_id}': the {role} image's {app} is not a git repository "
            f"({(head.stderr + files.stderr).decode(errors='replace').strip()[:200]})",
            field="environment.docker_image", fix="use the task's prebuilt image with its repository at the base commit",
        )
    return head.stdout.decode().strip(), hashlib.sha256(files.stdout).hexdigest(), payload


async def prove_grader_image(engine: Engine, task_id: str) -> dict[str, object] | None:
    """Check a DeepSWE grader image against the frozen inputs (see the module docstring)."""
    contract = engine.contracts.get(task_id)
    images = engine.images.get(task_id)
    if contract is None or contract.kind != "deepswe" or images is None:
        return None
    task = engine.tasks[task_id]
    with tempfile.TemporaryDirectory(prefix="pluginbench-proof-") as tmp:
        export = Path(tmp) / "app"
        v_head, v_files, payload = await _inventory(engine, task_id, images.verifier, "grader", task.tests_dir, export)
        c_head, c_files, _ = await _inventory(engine, task_id, images.coding, "coding", None, None)
        grader_tree = fingerprint(scan_tree(export, context="the grader image's starting source"))
    starting = engine.starting_source(task_id)
    frozen_tree = fingerprint(scan_tree(starting, context="the frozen starting source"))
    problems = []
    if v_head != contract.base_commit:
        problems.append(f"the grader image's /app HEAD is {v_head[:12]}, not base_commit {contract.base_commit}")
    if c_head != v_head or c_files != v_files:
        problems.append("the grader image's git base inventory (paths, modes, blobs) differs from the coding image's")
    if grader_tree != frozen_tree:
        problems.append("the grader image's /app (paths, file modes, bytes) differs from the frozen starting source")
    wrong = sorted(k for k, v in contract.payload.items() if payload.get(k) != v)
    if wrong:
        problems.append(f"the verifier payload in the grader sandbox differs from the frozen one: {', '.join(wrong)}")
    if problems:
        raise TaskError(
            f"task '{task_id}': the DeepSWE grader image does not match the frozen inputs: {'; '.join(problems)}",
            field="tests/Dockerfile", fix="rebuild the task image and its verifier image from the same base commit",
        )
    proof: dict[str, object] = {
        "task": task_id, "grader_image": images.verifier, "coding_image": images.coding,
        "base_commit": v_head, "git_inventory_sha256": v_files, "starting_source_fingerprint": frozen_tree,
        "payload": payload, "cleanup": "both proof sandboxes were removed; the export was deleted",
    }
    write_json(engine.run_dir.evidence / "frozen" / "contracts" / f"{task_id}.proof.json", proof)
    return proof
