"""Host-side parsers (complexity, Vulture) read a private copy of the canonical patch applied to the
frozen starting source, and never follow a symlink out of it (issue 20, Why 6)."""

from __future__ import annotations

from pathlib import Path

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
