"""Host-side parsers (complexity, Vulture) read a private copy of the canonical patch applied to the
frozen starting source, and never follow a symlink out of it (issue 20, Why 6); nor does the read-back
of a Go coverage run's sources."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pluginbench.errors import MeasurementError, PatchDoesNotApply
from pluginbench.measures._coverage_run import go_sources
from pluginbench.measures._deadcode_scan import vulture_status
from pluginbench.measures._quality import collect_cyclomatic, collect_dead_code
from tests._prereq import require

from ._quality_helpers import QUALITY, fixture_input

#: a host file with an unused import and an unused branchy function: what a leak would add
HOST = "import os\n\n\ndef host_only(x):\n    if x:\n        return 1\n    return 2\n"


def _with_leak(host: Path) -> str:
    """The Python fixture's submission plus ``pkg/leak.py``, a symlink to ``host``."""
    return (QUALITY / "python" / "submission.patch").read_text() + (
        "diff --git a/pkg/leak.py b/pkg/leak.py\nnew file mode 120000\n--- /dev/null\n+++ b/pkg/leak.py\n"
        f"@@ -0,0 +1 @@\n+{host}\n\\ No newline at end of file\n")


def test_a_workspace_symlink_to_a_host_file_is_read_by_neither_complexity_nor_vulture(tmp_path: Path) -> None:
    """A submission that adds pkg/leak.py -> a host Python file gets the same complexity and unused-code values
    as without it, and no finding names the link."""
    require(vulture_status()[0] == "vulture 2.16", "Vulture 2.16 (pip install -e '.[dev]')")
    host = tmp_path / "host_secret.py"
    host.write_text(HOST)
    plain, leaky = tmp_path / "plain", tmp_path / "leaky"
    base_cyc = collect_cyclomatic(fixture_input(plain, "python"))
    got_cyc = collect_cyclomatic(fixture_input(leaky, "python", patch=_with_leak(host)))
    assert {k: (m.value, m.status) for k, m in got_cyc.items()} == {k: (m.value, m.status) for k, m in base_cyc.items()}
    base_dead = collect_dead_code(fixture_input(plain, "python"))["dead_code_candidates_added"]
    got_dead = collect_dead_code(fixture_input(leaky, "python", patch=_with_leak(host)))["dead_code_candidates_added"]
    assert (got_dead.value, got_dead.status) == (base_dead.value, base_dead.status) == (2, "measured")
    listed = (leaky / "attempt" / "measure" / "x" / "introduced.txt").read_text()
    assert "leak.py" not in listed


def test_the_private_copy_holds_no_symlink_and_reads_refuse_links(tmp_path: Path) -> None:
    """submission_tree drops the patch's symlinks after applying it; read_inside refuses a link, a path through a
    linked folder and a name that leaves the root."""
    from pluginbench.measures._tree import read_inside, submission_tree

    host = tmp_path / "host.txt"
    host.write_text("host\n")
    tree = submission_tree(QUALITY / "python" / "start", _with_leak(host), tmp_path / "tree")
    assert not (tree / "pkg" / "leak.py").is_symlink() and not (tree / "pkg" / "leak.py").exists()
    assert (tree / "pkg" / "extra.py").is_file()
    (tree / "link.txt").symlink_to(host)
    (tree / "linked").symlink_to(tmp_path)
    assert read_inside(tree, "link.txt") is None
    assert read_inside(tree, "linked/host.txt") is None
    assert read_inside(tree, "../host.txt") is None
    assert read_inside(tree, "pkg/extra.py") == (tree / "pkg" / "extra.py").read_bytes()


def test_a_patch_path_outside_the_repository_copies_nothing(tmp_path: Path) -> None:
    """A patch naming `../x`, an absolute path or a `.git` path makes no copy of a file outside the starting
    source: the private copy is refused with the path named."""
    from pluginbench.measures._tree import submission_tree

    start = tmp_path / "start"
    start.mkdir()
    (tmp_path / "outside.py").write_text("x = 1\n")
    for rel in ("../outside.py", "/etc/hostname", ".git/config"):
        with pytest.raises(PatchDoesNotApply, match="outside the repository"):
            submission_tree(start, "diff --git a/x b/x\n", tmp_path / "copy", only={rel})
        assert not any((tmp_path / "copy").rglob("*"))


def test_go_coverage_reads_back_no_host_file_through_a_symlink(tmp_path: Path) -> None:
    """The Go sources read back from a coverage sandbox's workspace leave out symlinked files and folders, FIFOs
    and a symlinked go.mod (never a host file, never a blocking read); too many bytes in all is refused."""
    secret = tmp_path / "secret.txt"
    secret.write_text("module host.example/secret\nTOPSECRET\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.go").write_text("package o\n")
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "a.go").write_text("package a\n")
    (tree / "pkg" / "b.go").write_text("package pkg\n")
    (tree / "leak.go").symlink_to(secret)
    (tree / "go.mod").symlink_to(secret)
    (tree / "linked").symlink_to(outside, target_is_directory=True)
    os.mkfifo(tree / "fifo.go")
    sources, go_mod = go_sources(tree)
    assert sources == {"a.go": "package a\n", "pkg/b.go": "package pkg\n"}
    assert go_mod == ""
    (tree / "go.mod").unlink()
    (tree / "go.mod").write_text("module example.com/a\n")
    assert go_sources(tree)[1] == "module example.com/a\n"
    with pytest.raises(MeasurementError, match="exceed"):
        go_sources(tree, limit=10)


def _coverage_from(tmp_path: Path, script: str) -> tuple[str, list[str]]:
    """Run a coverage command (``sh -c script``) in a bubblewrap sandbox of a one-file starting source; the
    measurement's error and what it left in its evidence folder."""
    import anyio

    from pluginbench.environments import LocalEnvironment, SandboxSpec, bwrap_available
    from pluginbench.measures._coverage_profile import CoverageProfile
    from pluginbench.measures._coverage_run import run_coverage

    require(bwrap_available(), "bubblewrap")
    start = tmp_path / "start"
    start.mkdir()
    (start / "a.py").write_text("x = 1\n")
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    spec = SandboxSpec(run_id="r", attempt_id="m", role="measure", task="t", workspace=start)
    profile = CoverageProfile(command=["sh", "-c", script], report_path="cov.json", format="lcov", tool_version="1")
    out = tmp_path / "out"
    with pytest.raises(MeasurementError) as caught:
        anyio.run(lambda: run_coverage(lambda: env.sandbox(spec), start, profile, None, out))
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    return str(caught.value), left


def test_a_coverage_report_that_is_a_folder_of_links_is_refused_and_not_kept(tmp_path: Path) -> None:
    """A command that leaves a folder of symlinks to host files where its report goes gets an error naming it, and
    nothing of that folder is kept as evidence (only the command's own output files)."""
    error, left = _coverage_from(tmp_path, "mkdir cov.json && ln -s /etc/shadow cov.json/shadow "
                                           "&& ln -s ../../../../ cov.json/up")
    assert "cov.json is not a regular file" in error
    assert left == ["command-exit.txt", "command-stderr.txt", "command-stdout.txt"]


def test_a_coverage_report_over_its_bound_is_never_copied_out(tmp_path: Path) -> None:
    """A 40 MiB sparse report (within the sandbox's storage bound) is over the 32 MiB report bound: an error, and
    no byte of it written on the host."""
    error, left = _coverage_from(tmp_path, "truncate -s 40M cov.json")
    assert "cov.json is over 32 MiB" in error
    assert "report.raw" not in left
