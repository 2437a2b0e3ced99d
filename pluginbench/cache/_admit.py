"""Cache admission: may this saved vanilla entry stand in for a fresh attempt? Pure.

:func:`admit` gets the entry's manifest, what the current run expects (key, repeat,
inputs, images) and what was read back from disk (file digests, the invocation and
execution receipts, the hash of the canonical patch reconstructed from the saved
export), and returns ``None`` to admit or the reason to refuse. A refused entry is
skipped and the attempt is coded fresh; nothing here touches the disk.

Admission executes nothing from the entry on the host: the only host work before it is the
reconstruction of the canonical patch (``actors._patch.make_patch``: git on a fresh
repository, every nested ``.git`` and gitlink of the saved export dropped, no hooks, no
configuration of the host). A reused attempt's collectors run like a fresh one's: analyzers
that execute repository code only in a sandbox of the frozen task, so a poisoned vanilla
entry runs nothing on the host when a later run reuses it.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..events import Usage
from ..harness_registry import harness_class, is_registered
from ._key import KeyInputs

MANIFEST_FORMAT = 1
#: Treatment components a vanilla receipt must list as empty (task-owned files are separate).
COMPONENTS = ("plugins", "skills", "hooks", "agents", "commands")
_PLACEHOLDER = re.compile(r"^<[a-z_]+>$")


class AttemptRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What the origin run recorded about the attempt's coding (never its grade)."""

    exit_code: int | None
    timed_out: bool
    coding_seconds: float | None
    usage: Usage
    error: str | None = None
    patch_sha256: str | None = None
    empty: bool | None = None
    files_changed: int | None = None
    missing_reason: str | None = None


class EntryManifest(msgspec.Struct, frozen=True, kw_only=True):
    """``entry.json`` of one ``vanilla/<key>/<repeat>`` entry."""

    format: int = MANIFEST_FORMAT
    key: str
    repeat: int
    inputs: KeyInputs
    #: docker backend: the coding and verifier image IDs the attempt ran against
    images: list[str] | None = None
    origin_run: str
    origin_attempt: str
    attempt: AttemptRecord
    #: every file of the entry's ``attempt/`` folder: relpath -> "<octal mode>:<sha256>"
    files: dict[str, str]


def argv_matches(pinned: Sequence[str], recorded: Sequence[str]) -> bool:
    """The pinned argv's fixed tokens appear in the recorded argv, in order.

    Placeholders such as ``<cli>`` or ``<prompt>`` stand for per-attempt values (the
    install path, the task's instruction) and match anything."""
    fixed = [t for t in pinned if not _PLACEHOLDER.match(t)]
    it = iter(recorded)
    return all(any(tok == got for got in it) for tok in fixed)


def _diff_fields(saved: KeyInputs, expected: KeyInputs) -> list[str]:
    a, b = msgspec.to_builtins(saved), msgspec.to_builtins(expected)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def admit(  # noqa: C901 - one check per line of the admission contract
    manifest: EntryManifest,
    *,
    key: str,
    repeat: int,
    inputs: KeyInputs,
    images: Sequence[str] | None,
    files: Mapping[str, str],
    invocation: Mapping[str, Any] | None,
    execution: Mapping[str, Any] | None,
    reconstructed_sha256: str | None,
    receipt: Mapping[str, Any] | None = None,
) -> str | None:
    """``None`` when the entry may be reused, else why not."""
    if manifest.format != MANIFEST_FORMAT:
        return f"entry format {manifest.format} is not {MANIFEST_FORMAT}"
    if manifest.key != key or manifest.repeat != repeat:
        return f"the entry says key {manifest.key} repeat {manifest.repeat}, not {key} repeat {repeat}"
    if manifest.inputs != inputs:
        return "saved for other settings: " + ", ".join(_diff_fields(manifest.inputs, inputs))
    if (list(manifest.images) if manifest.images else None) != (list(images) if images else None):
        return "the entry ran against other image IDs"
    if dict(files) != manifest.files:
        changed = sorted(set(files) ^ set(manifest.files) | {p for p in files if manifest.files.get(p) != files[p]})
        return "files changed since the entry was published: " + ", ".join(changed[:5])
    if invocation is None:
        return "no invocation receipt"
    if invocation.get("arm") != "vanilla" or invocation.get("harness") != inputs.harness:
        return "the invocation receipt is not a vanilla attempt of this harness"
    if invocation.get("model") != inputs.model or invocation.get("reasoning") != inputs.reasoning:
        return "the invocation receipt names another model or reasoning effort"
    argv = invocation.get("argv")
    if invocation.get("call_started") is not True or not isinstance(argv, list) or not argv:
        return "the invocation receipt records no launch"
    if not argv_matches(inputs.launch.get("argv", []), [str(a) for a in argv]):
        return "the invocation's argv is not the pinned launch"
    if is_registered(inputs.harness) and harness_class(inputs.harness).native_receipts:
        why = _receipt_problem(receipt, inputs)
        if why is not None:
            return why
    if execution is None:
        return "no execution receipt"
    if execution.get("provider_stop"):
        return "the provider stopped the session; such attempts are never reused"
    rec = manifest.attempt
    if execution.get("exit_code") != rec.exit_code or bool(execution.get("timed_out")) != rec.timed_out:
        return "the execution receipt disagrees with the entry (exit code or timeout)"
    if execution.get("usage") != msgspec.to_builtins(rec.usage):
        return "the execution receipt's usage disagrees with the entry"
    if rec.patch_sha256 is not None:
        mp = files.get("model.patch")
        if mp is None or mp.split(":", 1)[1] != rec.patch_sha256:
            return "model.patch does not hash to the recorded patch"
        if reconstructed_sha256 is None:
            return "the canonical patch could not be reconstructed from the saved export"
        if reconstructed_sha256 != rec.patch_sha256:
            return "the canonical patch reconstructed from the saved export differs from model.patch"
    elif not rec.missing_reason:
        return "the entry has neither a patch nor a reason for its missing submission"
    return None


def _receipt_problem(receipt: Mapping[str, Any] | None, inputs: KeyInputs) -> str | None:
    """The discovery receipt is there, passed, is vanilla's, names the key's CLI version,
    and lists no treatment component."""
    if receipt is None:
        return "no discovery receipt (native-treatment.json)"
    if receipt.get("passed", receipt.get("ok")) is not True:
        return "the discovery receipt did not pass"
    if receipt.get("arm") != "vanilla":
        return "the discovery receipt is not a vanilla attempt's"
    if receipt.get("cli_version") != inputs.cli_version:
        return f"the discovery receipt reports CLI {receipt.get('cli_version')}, not {inputs.cli_version}"
    loaded = [k for k in COMPONENTS if receipt.get(k)]
    if loaded:
        return "the discovery receipt is not empty: it lists " + ", ".join(loaded)
    return None
