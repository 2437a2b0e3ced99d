"""The review packet: everything a reviewer (or a later judge) may see, bound by digests.

``evidence/review-packets/<attempt>/packet/`` holds ``instruction.md`` (the frozen task
instruction), ``criteria.md`` (the run's fixed criteria), ``submission.patch`` (the
canonical patch, byte for byte), ``response-schema.json`` and ``source/`` (the frozen
starting source). ``binding.json`` beside it binds the packet to the attempt's submission
(the patch's SHA-256 recorded in ``submission.captured``) and to the starting source
(its tree fingerprint), plus the instruction, criteria and schema digests. Never in it:
the arm's name, its guidance, the agent's traces or the verifier's result.
"""

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import PacketError
from ..tasks import copy_tree, fingerprint, scan_tree
from ._response import schema_bytes


class Packet(NamedTuple):
    root: Path  # the packet/ folder
    binding: dict[str, Any]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def packet_dir(evidence: Path, attempt_id: str) -> Path:
    return evidence / "review-packets" / attempt_id


def build_packet(evidence: Path, attempt_id: str, *, task: str, patch: Path, patch_sha256: str,
                 starting_source: Path, instruction: str, criteria: bytes) -> Packet:
    """Write (once) and verify the packet of ``attempt_id``; an existing valid one is reused."""
    folder = packet_dir(evidence, attempt_id)
    if (folder / "binding.json").is_file():
        return verify_packet(evidence, attempt_id, patch_sha256=patch_sha256)
    patch_bytes = patch.read_bytes()
    if _sha(patch_bytes) != patch_sha256:
        raise PacketError(f"{patch} does not match the submission's SHA-256 ({patch_sha256[:12]})")
    tmp = folder.with_name(folder.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    root = tmp / "packet"
    source_entries = scan_tree(starting_source, context="the starting source")
    copy_tree(starting_source, root / "source", source_entries)
    (root / "instruction.md").write_text(instruction, encoding="utf-8")
    (root / "criteria.md").write_bytes(criteria)
    (root / "submission.patch").write_bytes(patch_bytes)
    (root / "response-schema.json").write_bytes(schema_bytes())
    binding = {
        "attempt_id": attempt_id, "task": task,
        "submission_sha256": patch_sha256,
        "starting_source_fingerprint": fingerprint(scan_tree(root / "source")),
        "instruction_sha256": _sha(instruction.encode()),
        "criteria_sha256": _sha(criteria),
        "response_schema_sha256": _sha(schema_bytes()),
    }
    if binding["starting_source_fingerprint"] != fingerprint(source_entries):
        raise PacketError(f"the starting source copy of {attempt_id} differs from the frozen one")
    (tmp / "binding.json").write_text(json.dumps(binding, indent=2, sort_keys=True) + "\n")
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)
    return Packet(folder / "packet", binding)


def verify_packet(evidence: Path, attempt_id: str, *, patch_sha256: str) -> Packet:
    """The saved packet, checked file by file against its binding and the submission."""
    folder = packet_dir(evidence, attempt_id)
    try:
        binding = json.loads((folder / "binding.json").read_text())
        root = folder / "packet"
        checks = {
            "submission_sha256": _sha((root / "submission.patch").read_bytes()),
            "starting_source_fingerprint": fingerprint(scan_tree(root / "source")),
            "instruction_sha256": _sha((root / "instruction.md").read_bytes()),
            "criteria_sha256": _sha((root / "criteria.md").read_bytes()),
            "response_schema_sha256": _sha((root / "response-schema.json").read_bytes()),
        }
    except (OSError, ValueError) as exc:
        raise PacketError(f"the review packet of {attempt_id} is unreadable: {exc}") from None
    for key, value in checks.items():
        if binding.get(key) != value:
            raise PacketError(f"the review packet of {attempt_id} no longer matches binding.json field {key}")
    if binding["submission_sha256"] != patch_sha256:
        raise PacketError(f"the review packet of {attempt_id} is bound to another submission")
    return Packet(root, binding)
