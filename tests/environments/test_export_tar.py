"""The docker export path (tar from the engine) keeps only data: no setuid/setgid/sticky bit, no
device, FIFO or nested .git (issue 20, item 4). Pure file work on a crafted archive."""

from __future__ import annotations

import io
import stat
import tarfile
from pathlib import Path

from pluginbench.environments._docker_tar import unpack


def _archive() -> io.BytesIO:
    """What a container's ``/app`` could come out as: a setuid, a setgid+sticky file, a FIFO, a
    device, the top-level .git, a sub/.git gitdir pointer and a nested repository's .git."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tf:
        def add(name: str, mode: int, data: bytes = b"x\n", kind: bytes = tarfile.REGTYPE) -> None:
            info = tarfile.TarInfo(name)
            info.mode, info.type, info.uid, info.gid = mode, kind, 1234, 1234
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tf.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        add("app", 0o755, kind=tarfile.DIRTYPE)
        add("app/suid-id", 0o4755)
        add("app/shared", 0o3775)
        add("app/pipe", 0o644, kind=tarfile.FIFOTYPE)
        add("app/null", 0o666, kind=tarfile.CHRTYPE)
        add("app/.git/config", 0o644)
        add("app/sub", 0o755, kind=tarfile.DIRTYPE)
        add("app/sub/.git", 0o644, b"gitdir: /srv/other/.git\n")
        add("app/sub/file.txt", 0o644)
        add("app/nested/.git/HEAD", 0o644, b"ref: refs/heads/main\n")
        add("app/nested/n.txt", 0o644)
    out.seek(0)
    return out


def test_an_exported_archive_keeps_permission_bits_only_and_no_nested_git(tmp_path: Path) -> None:
    """Unpacked as a workspace export: suid-id is 0755 and shared 0775, the FIFO and device are absent, and no
    .git (top-level, sub/.git pointer, nested repository) is written; ordinary files stay; export.dropped.txt
    names each with its reason."""
    dest = tmp_path / "export"
    unpack(_archive(), dest, skip_top=lambda n: n == ".git")
    assert stat.S_IMODE((dest / "suid-id").stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "shared").stat().st_mode) == 0o775
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "nested", "nested/n.txt", "shared", "sub", "sub/file.txt", "suid-id"]
    named = [line.split(": ", 1) for line in (tmp_path / "export.dropped.txt").read_text().splitlines()]
    assert [(path, reason.split(" ")[0]) for path, reason in named] == [
        ("suid-id", "setuid,"), ("shared", "setuid,"), ("pipe", "a"), ("null", "a"), ("sub/.git", "a"),
        ("nested/.git", "a")]
