"""The submission's source tree: the frozen starting source with ``model.patch`` applied.

I/O edge shared by the host-side parsers (complexity, Vulture): they only parse, so they
run on the host, but on a private copy made from the canonical patch applied to the frozen
starting source, never on anything the agent left. The copy leaves out ``.git`` and
dependency folders and holds no symlink (a patch's symlink is dropped after ``git apply``,
so no parser follows one out of the tree to a host file); ``git apply`` runs with
``GIT_CEILING_DIRECTORIES`` so a repository around the run folder is never used.
:func:`read_inside` reads a file below a root only when no part of its path is a symlink.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from ..errors import PatchDoesNotApply
from ._source_only import sections

#: folders never analyzed nor copied: version control, dependencies, build output
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache",
                       ".tox", "target", "dist", "build", ".next", "vendor", ".cache"})




#: ``python -I -c`` of this, then the memory bound (bytes), ``module`` or ``script``, the
#: module's name or the script's path, and its arguments: the module or script run as
#: ``__main__`` with the process's address space bounded (``RLIMIT_AS``) first
_BOUNDED = ("import resource, runpy, sys; bound, kind, target = sys.argv[1:4]; "
            "resource.setrlimit(resource.RLIMIT_AS, (int(bound), int(bound))); sys.argv = [target, *sys.argv[4:]]; "
            "runpy.run_module(target, run_name='__main__', alter_sys=True) if kind == 'module' "
            "else runpy.run_path(target, run_name='__main__')")


def bounded_python(memory_bytes: int, target: str, *args: str, module: bool = False) -> list[str]:
    """The argv of a host-side parser's own interpreter: ``target`` (a module's name with
    ``module``, else a script's path) run with ``args`` in isolated mode (``-I``: neither the
    working folder nor ``PYTHONPATH`` is on its import path, so no file of a submission can
    stand in for a module it imports) with its memory bounded at ``memory_bytes``. Its
    parsers' time and memory are not linear in a file's size."""
    return [sys.executable, "-I", "-c", _BOUNDED, str(memory_bytes), "module" if module else "script", target, *args]


def changed_paths(patch: str) -> tuple[set[str], set[str]]:
    """(paths before, paths after) of the files the patch touches (``/dev/null`` excluded)."""
    before: set[str] = set()
    after: set[str] = set()
    for sec in sections(patch):
        text = sec.text
        deleted = "\ndeleted file mode" in text or "\n+++ /dev/null" in text
        created = "\nnew file mode" in text or "\n--- /dev/null" in text
        if not created:
            before.add(sec.old)
        if not deleted:
            after.add(sec.new)
    return before, after


def copy_source(src: Path, dest: Path) -> Path:
    """A copy of ``src`` without :data:`SKIP_DIRS`."""
    shutil.copytree(src, dest, symlinks=True, ignore=lambda _d, names: [n for n in names if n in SKIP_DIRS])
    return dest


def submission_tree(starting: Path, patch: str, dest: Path, only: set[str] | None = None) -> Path:
    """``dest``: a copy of ``starting`` with ``patch`` applied; with ``only``, a copy of just
    those files (the ones the patch changes) before applying it."""
    if dest.exists():
        shutil.rmtree(dest)
    if only is None:
        copy_source(starting, dest)
    else:
        dest.mkdir(parents=True)
        for rel in sorted(only):
            parts = rel.split("/")
            if rel.startswith("/") or ".." in parts or ".git" in parts:
                raise PatchDoesNotApply(f"model.patch names {rel!r}, a path outside the repository's files")
            src = starting / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel, follow_symlinks=False)
    if not patch.strip():
        return dest
    patch_file = dest.parent / f"{dest.name}.patch"
    patch_file.write_bytes(patch.encode("utf-8", errors="surrogateescape"))
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(dest.parent.resolve())}
    proc = subprocess.run(["git", "apply", "--binary", "--whitespace=nowarn", str(patch_file.resolve())],
                          cwd=dest, env=env, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL, timeout=120, start_new_session=True)
    patch_file.unlink(missing_ok=True)
    if proc.returncode != 0:
        raise PatchDoesNotApply(f"model.patch does not apply to the starting source: {proc.stderr.strip()[:300]}")
    drop_symlinks(dest)
    return dest


def drop_symlinks(root: Path) -> list[str]:
    """Remove every symlink below ``root`` (never following one); their relative paths."""
    dropped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            if path.is_symlink():
                path.unlink()
                dropped.append(path.relative_to(root).as_posix())
        dirnames[:] = [d for d in dirnames if not Path(dirpath, d).is_symlink() and Path(dirpath, d).exists()]
    return sorted(dropped)


def read_inside(root: Path, rel: str) -> bytes | None:
    """The bytes of the regular file ``root/rel``, or None when it is not one: a name that
    leaves ``root`` or any symlink on the way (the file itself included) is never followed."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or rel.startswith("/") or ".." in parts:
        return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(root, flags | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        leaf = os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        os.close(fd)
        return None
    os.close(fd)
    with open(leaf, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read()


def source_files(root: Path, suffixes: frozenset[str]) -> list[str]:
    """Relative paths of files under ``root`` with one of ``suffixes``, sorted, outside
    :data:`SKIP_DIRS`."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if Path(name).suffix in suffixes:
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)
