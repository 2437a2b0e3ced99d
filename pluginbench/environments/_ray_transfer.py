"""Files between the head and a Ray worker node: a tar archive plus a sha256 manifest.

What crosses the cluster is bytes in Ray's object store, never a path: the sender packs a
file or folder (modes kept, symlinks as symlinks, never followed), lists every member's
sha256 (or link target), and the receiver unpacks into its own folder and checks each
member against the list, so evidence lands byte-identical in the run directory or the
copy fails with an error naming the file.
"""

import io
import os
import stat
import tarfile
from pathlib import Path
from typing import NamedTuple

from ..errors import EnvironmentFailure
from ..rundir import sha256_file

#: A manifest entry: ``"f:<sha256>"`` for a file, ``"l:<target>"`` for a symlink, ``"d"`` for a folder.
Manifest = dict[str, str]


class Packed(NamedTuple):
    """A packed file or folder: ``kind`` is ``file`` or ``dir``; ``data`` a tar archive."""

    kind: str
    data: bytes
    manifest: Manifest


def _entry(path: Path) -> str:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "l:" + os.readlink(path)
    if stat.S_ISDIR(st.st_mode):
        return "d"
    return "f:" + sha256_file(path)


def pack(source: Path) -> Packed:
    """Pack a file or folder (its contents under ``.``); symlinks are stored, not followed."""
    source = Path(source)
    if source.is_symlink() or not source.exists():
        raise EnvironmentFailure(f"cannot send {source}: it is missing or a symlink")
    buf = io.BytesIO()
    manifest: Manifest = {}
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if source.is_file():
            tar.add(source, arcname="file", recursive=False)
            manifest["file"] = _entry(source)
            kind = "file"
        else:
            kind = "dir"
            for root, dirs, files in os.walk(source):
                dirs.sort()
                for name in sorted(dirs) + sorted(files):
                    path = Path(root) / name
                    rel = path.relative_to(source).as_posix()
                    tar.add(path, arcname=rel, recursive=False)
                    manifest[rel] = _entry(path)
                # os.walk does not descend into symlinked folders (followlinks=False)
    return Packed(kind, buf.getvalue(), manifest)


def _keep_modes(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """tarfile's ``tar`` filter (no absolute paths, nothing outside ``dest``, no device
    files), keeping permission bits as sent except set-id and sticky bits."""
    mode = member.mode
    member = tarfile.tar_filter(member, dest)
    if mode is not None and not (member.isdir() or member.issym()):
        member = member.replace(mode=mode & 0o777, deep=False)
    return member


def unpack(packed: Packed, dest: Path) -> None:
    """Unpack ``packed`` to exactly ``dest``, after checking every member against its
    manifest in a staging folder beside it (a failed check leaves ``dest`` untouched)."""
    import shutil
    import uuid

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.parent / f".{dest.name}.incoming-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        _extract(packed.data, staging)
        _verify(packed.manifest, staging, dest, packed.kind == "dir")
        if packed.kind == "file":
            os.replace(staging / "file", dest)
        elif not dest.exists():
            os.rename(staging, dest)
        else:
            for child in sorted(os.listdir(staging)):
                target = dest / child
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                os.replace(staging / child, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _extract(data: bytes, into: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        try:
            tar.extractall(into, filter=_keep_modes)
        except (tarfile.TarError, OSError) as exc:
            raise EnvironmentFailure(f"could not unpack a transfer into {into}: {exc}") from exc


def _verify(manifest: Manifest, root: Path, named: Path, strict: bool) -> None:
    """Every listed member is there with the listed hash or link target (and, for a
    folder, nothing unlisted)."""
    for rel, want in sorted(manifest.items()):
        try:
            got = _entry(root / rel)
        except OSError:
            got = "missing"
        if got != want:
            where = named if rel == "file" else named / rel
            raise EnvironmentFailure(
                f"transfer check failed for {where}: expected {want[:70]}, got {got[:70]}"
            )
    if strict:
        present = {
            (Path(r) / n).relative_to(root).as_posix()
            for r, dirs, files in os.walk(root) for n in dirs + files
        }
        extra = sorted(present - set(manifest))
        if extra:
            raise EnvironmentFailure(f"transfer into {named} has members its manifest does not list: {extra[:5]}")
