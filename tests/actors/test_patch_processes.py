"""An attempt's host-side git work in few processes: the canonical patch in five git calls and
the sandbox base commit in three, none starting git's automatic maintenance, with the same
bytes, counts and identity as git's own commands give."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from pluginbench.actors import _patch
from pluginbench.environments import _gitbase

GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _source(root: Path) -> Path:
    src = root / "src"
    (src / "d").mkdir(parents=True)
    (src / "a.txt").write_text("a\nb\n")
    (src / "d" / "x.py").write_text("print(1)\n")
    (src / "bin.dat").write_bytes(bytes(range(256)) * 4)
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "link.txt").write_text("becomes a symlink\n")
    (src / "ren.txt").write_text("rename me\n" * 20)
    return src


def _verb(argv: list[str]) -> str:
    """The git command of a call (its first word that is neither an option nor a setting)."""
    return next(x for x in argv[1:] if not x.startswith("-") and "=" not in x)


def _typechange(e: Path) -> None:
    (e / "link.txt").unlink()
    os.symlink("a.txt", e / "link.txt")


CHANGES: dict[str, Callable[[Path], Any]] = {
    "nothing": lambda e: None,
    "an edit": lambda e: (e / "a.txt").write_text("a\nc\n"),
    "an addition and a deletion": lambda e: ((e / "new.txt").write_text("n"), (e / "d" / "x.py").unlink()),
    "a binary edit": lambda e: (e / "bin.dat").write_bytes(bytes(range(255, -1, -1)) * 4),
    "a mode change": lambda e: os.chmod(e / "run.sh", 0o755),
    "a file turned symlink": _typechange,
    "a rename": lambda e: (e / "ren.txt").rename(e / "ren2.txt"),
    "a quoted name": lambda e: (e / 'we ird"name.txt').write_text("q"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_patch_in_five_git_calls_counts_files_as_git_names_them(tmp_path: Path, change: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """make_patch runs init, add, write-tree, add and one diff (no commit, no maintenance), and
    its files_changed equals the paths ``git diff --name-only`` lists for the same patch."""
    src = _source(tmp_path)
    export = tmp_path / "export"
    subprocess.run(["cp", "-a", str(src), str(export)], check=True)
    CHANGES[change](export)
    calls: list[list[str]] = []
    real = _patch.subprocess.run

    def counting(argv: list[str], *a: Any, **kw: Any) -> Any:
        calls.append(list(argv))
        return real(argv, *a, **kw)

    monkeypatch.setattr(_patch.subprocess, "run", counting)
    info = _patch.make_patch(src, export, tmp_path / "model.patch")
    assert [_verb(argv) for argv in calls] == ["init", "add", "write-tree", "add", "diff"]
    assert all("maintenance.auto=false" in argv and "gc.auto=0" in argv for argv in calls)
    # git's own list of the patch's paths, from a repository holding the starting source
    check = tmp_path / "check"
    subprocess.run(["cp", "-a", str(src), str(check)], check=True)
    for argv in (["init", "-q"], ["add", "-A"], ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "b"]):
        subprocess.run(["git", *argv], cwd=check, env=GIT_ENV | {"HOME": str(tmp_path)}, check=True)
    if not info.empty:
        subprocess.run(["git", "apply", "--binary", str(info.path)], cwd=check, env=GIT_ENV, check=True)
    subprocess.run(["git", "add", "-A"], cwd=check, env=GIT_ENV, check=True)
    names = subprocess.run(["git", "diff", "--cached", "--name-only", "-z", "HEAD"], cwd=check, env=GIT_ENV,
                           capture_output=True, check=True).stdout
    assert info.files_changed == len([n for n in names.split(b"\0") if n])
    assert info.empty == (change == "nothing")


def test_sandbox_base_commit_in_three_git_calls_with_the_agents_identity(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox base is init, add and commit (identity written to the config, HEAD read from
    its ref): the same SHA as the host-side recipe, and ``git config`` reads the identity back,
    quotes and backslashes included."""
    app = _source(tmp_path)
    (tmp_path / "home").mkdir()
    calls: list[list[str]] = []
    real = anyio.run_process

    async def counting(argv: list[str], *a: Any, **kw: Any) -> Any:
        calls.append(list(argv))
        return await real(argv, *a, **kw)

    monkeypatch.setattr(_gitbase.anyio, "run_process", counting)
    identity = ('Agent "Q" \\ Name', "agent@pluginbench.invalid")
    sha = anyio.run(_gitbase.init_base_repo, app, tmp_path / "home", identity)
    assert [_verb(argv) for argv in calls] == ["init", "add", "commit"]
    assert all("maintenance.auto=false" in argv for argv in calls)
    assert sha == _patch.base_commit_of(_source(tmp_path / "again"))
    got = subprocess.run(["git", "config", "--get-regexp", "^user"], cwd=app, env=GIT_ENV | {"HOME": str(tmp_path)},
                         capture_output=True, text=True, check=True).stdout
    assert got == f"user.name {identity[0]}\nuser.email {identity[1]}\n"
