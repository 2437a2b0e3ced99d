"""The report's model.patch check reads each patch whole through a file descriptor (issue 27, item 3)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pluginbench.rundir import patch_mismatch


def test_a_patch_is_hashed_whole_and_an_unreadable_one_says_why(tmp_path: Path) -> None:
    """A 3 MiB patch matches its sha256 (read in blocks), one changed byte is a mismatch, a folder or a missing file is unreadable with the OS's words."""
    data = b"+line\n" * (1 << 19)
    patch = tmp_path / "model.patch"
    patch.write_bytes(data)
    recorded = hashlib.sha256(data).hexdigest()
    assert patch_mismatch(str(patch), recorded) is None and patch_mismatch(patch, None) is None
    patch.write_bytes(data[:-1] + b"!")
    assert patch_mismatch(patch, recorded) == (
        f"patch integrity: model.patch has sha256 {hashlib.sha256(data[:-1] + b'!').hexdigest()[:12]}…, not the "
        f"{recorded[:12]}… recorded at capture; the saved submission was changed")
    assert patch_mismatch(tmp_path, recorded) == "patch integrity: model.patch is unreadable (Is a directory)"
    assert patch_mismatch(tmp_path / "gone", recorded) == (
        "patch integrity: model.patch is unreadable (No such file or directory)")
