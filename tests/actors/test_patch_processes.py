"""An attempt's host-side git work in few processes: the canonical patch in two git calls once the
starting source's base is kept (five without it, the same bytes), the sandbox base commit in three,
none starting git's automatic maintenance, with the same bytes, counts and identity as git's own
commands give."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from pluginbench.actors import _patch
from pluginbench.environments import _gitbase, _gitbase_template

from ..git_helpers import GIT_ENV, record_git_processes


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
def test_patch_in_two_git_calls_counts_files_as_git_names_them(tmp_path: Path, change: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """make_patch builds the source's base once (init, add, commit), then runs add and
    one diff per patch (no maintenance), and its files_changed equals the paths ``git diff
    --name-only`` lists for the same patch."""
    monkeypatch.setattr(_gitbase_template, "_kept", _gitbase_template.OrderedDict())
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
    first = _patch.make_patch(src, export, tmp_path / "first.patch")
    assert [_verb(argv) for argv in calls] == ["init", "add", "commit", "add", "diff"]
    calls.clear()
    info = _patch.make_patch(src, export, tmp_path / "model.patch")
    assert [_verb(argv) for argv in calls] == ["add", "diff"] and info.sha256 == first.sha256
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
    calls = record_git_processes(monkeypatch)
    identity = ('Agent "Q" \\ Name', "agent@pluginbench.invalid")
    sha = anyio.run(_gitbase.init_base_repo, app, tmp_path / "home", identity)
    assert [_verb(argv) for argv in calls] == ["init", "add", "commit"]
    assert all("maintenance.auto=false" in argv for argv in calls)
    assert sha == _patch.base_commit_of(_source(tmp_path / "again"))
    got = subprocess.run(["git", "config", "--get-regexp", "^user"], cwd=app, env=GIT_ENV | {"HOME": str(tmp_path)},
                         capture_output=True, text=True, check=True).stdout
    assert got == f"user.name {identity[0]}\nuser.email {identity[1]}\n"


def _tricky(root: Path) -> tuple[Path, Path]:
    """A starting source and an export with a binary edit, a mode change, a rename, a deletion, CRLF lines
    (also under a text=auto attribute), a new empty file and a tracked file the agent's .gitignore now ignores."""
    src = _source(root)
    (src / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (src / "auto").mkdir()
    (src / "auto" / ".gitattributes").write_text("* text=auto\n")
    (src / "auto" / "w.txt").write_bytes(b"x\r\ny\r\n")
    (src / "kept.log").write_text("tracked\n")
    export = root / "export"
    subprocess.run(["cp", "-a", str(src), str(export)], check=True)
    (export / "bin.dat").write_bytes(bytes(range(255, -1, -1)) * 4)
    os.chmod(export / "run.sh", 0o755)
    (export / "ren.txt").rename(export / "ren2.txt")
    (export / "d" / "x.py").unlink()
    (export / "crlf.txt").write_bytes(b"one\r\nthree\r\n")
    (export / "auto" / "w.txt").write_bytes(b"x\r\nz\r\n")
    (export / "empty").write_bytes(b"")
    (export / ".gitignore").write_text("*.log\n__pycache__/\n")
    (export / "kept.log").write_text("changed while ignored\n")
    return src, export


def test_a_kept_base_gives_the_same_patch_bytes_as_a_fresh_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The patch made over the kept base is byte-identical to the one made over a freshly built base, on an
    export with binary, mode, rename, deletion, CRLF and ignored-but-tracked changes; the kept base is untouched."""
    monkeypatch.setattr(_gitbase_template, "_kept", _gitbase_template.OrderedDict())
    src, export = _tricky(tmp_path)
    kept = [_patch.make_patch(src, export, tmp_path / f"kept{i}.patch") for i in range(2)]
    template = _gitbase_template.template_for(src, _patch.scan_tree(src))
    index = (template.repo / ".git" / "index").read_bytes()
    monkeypatch.setattr(_patch, "_base_from_template", lambda *a: None)
    fresh = _patch.make_patch(src, export, tmp_path / "fresh.patch")
    assert kept[0].path.read_bytes() == kept[1].path.read_bytes() == fresh.path.read_bytes()
    assert kept[0].files_changed == fresh.files_changed == 9  # the rename is one header
    assert b"kept.log" in fresh.path.read_bytes() and b"GIT binary patch" in fresh.path.read_bytes()
    assert (template.repo / ".git" / "index").read_bytes() == index


def test_a_gitattributes_of_the_agents_cannot_pass_a_text_change_off_as_binary(tmp_path: Path) -> None:
    """With `*.py -diff` and `*.txt binary` in the export's .gitattributes, the patch still shows the Python
    and text edits as lines (git tells text from binary by content), a real binary edit stays binary, and the
    patch applied to the source gives the export's files."""
    src = _source(tmp_path)
    export = tmp_path / "export"
    subprocess.run(["cp", "-a", str(src), str(export)], check=True)
    (export / ".gitattributes").write_text("*.py -diff\n*.txt binary\n")
    (export / "d" / "x.py").write_text("print(1)\nprint('added')\n")
    (export / "a.txt").write_text("a\nb\nc\n")
    (export / "bin.dat").write_bytes(bytes(range(255, -1, -1)) * 4)
    patch = _patch.make_patch(src, export, tmp_path / "model.patch").path.read_text()
    assert "+print('added')" in patch and "\n+c\n" in patch
    assert patch.count("GIT binary patch") == 1  # bin.dat only
    applied = tmp_path / "applied"
    subprocess.run(["cp", "-a", str(src), str(applied)], check=True)
    subprocess.run(["git", "apply", "--binary", str(tmp_path / "model.patch")], cwd=applied, check=True, env=GIT_ENV)
    for rel in (".gitattributes", "d/x.py", "a.txt", "bin.dat"):
        assert (applied / rel).read_bytes() == (export / rel).read_bytes(), rel


def test_a_patch_over_its_bound_is_refused_and_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The canonical patch is streamed to its file and bounded (the host reads it whole afterwards): one over
    PATCH_BYTES is a ResourceLimitHit and leaves no model.patch; within the bound, the same bytes as before."""
    from pluginbench.errors import ResourceLimitHit

    src = _source(tmp_path)
    export = tmp_path / "export"
    subprocess.run(["cp", "-a", str(src), str(export)], check=True)
    (export / "big.txt").write_text("".join(f"line {i}\n" for i in range(2000)))
    within = _patch.make_patch(src, export, tmp_path / "a" / "model.patch")
    assert within.path.read_bytes().count(b"\n+line ") == 2000
    monkeypatch.setattr(_patch, "PATCH_BYTES", 4096)
    with pytest.raises(ResourceLimitHit, match="over the 0 MiB patch bound"):
        _patch.make_patch(src, export, tmp_path / "b" / "model.patch")
    assert not (tmp_path / "b" / "model.patch").exists()


def test_a_big_new_file_is_refused_before_git_holds_it_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file over PATCH_BYTES that the starting source does not hold unchanged (here a sparse 1 GiB file,
    which would take host-side git 1 GiB of memory to diff into a 6 MB patch) is a ResourceLimitHit naming it
    and the bound, before any git runs, and leaves no model.patch; the starting source's own big file,
    unchanged, is no change and no refusal, while the same file changed is refused."""
    from pluginbench.errors import ResourceLimitHit

    src = _source(tmp_path)
    export = tmp_path / "export"
    subprocess.run(["cp", "-a", str(src), str(export)], check=True)
    with open(export / "zeros.bin", "wb") as fh:
        fh.truncate(1024 ** 3)
    gits: list[list[str]] = []
    real_git = _patch._git
    monkeypatch.setattr(_patch, "_git", lambda repo, *a, **k: (gits.append(list(a)), real_git(repo, *a, **k))[1])
    with pytest.raises(ResourceLimitHit, match=r"zeros\.bin is 1024 MiB and not the starting source's, over the "
                                               r"256 MiB patch bound"):
        _patch.make_patch(src, export, tmp_path / "a" / "model.patch")
    assert not (tmp_path / "a" / "model.patch").exists()
    assert not any(a and a[0] in ("add", "diff") for a in gits), gits
    (export / "zeros.bin").unlink()

    monkeypatch.setattr(_patch, "PATCH_BYTES", 4096)
    (src / "data.bin").write_bytes(bytes(range(256)) * 64)  # 16 KiB, over this bound, in the starting source
    subprocess.run(["cp", "-a", str(src / "data.bin"), str(export / "data.bin")], check=True)
    same = _patch.make_patch(src, export, tmp_path / "b" / "model.patch")
    assert same.empty
    (export / "data.bin").write_bytes(bytes(range(256)) * 63 + bytes(256))
    with pytest.raises(ResourceLimitHit, match=r"data\.bin is 0 MiB and not the starting source's"):
        _patch.make_patch(src, export, tmp_path / "c" / "model.patch")
