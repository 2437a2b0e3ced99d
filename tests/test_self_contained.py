"""The repository needs nothing beside it: no code or test reaches the sibling research folder."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIBLING = "sha" + "red"  # split so this file does not match its own patterns
PATTERNS = re.compile(
    "|".join(
        [
            r"\.\./" + SIBLING + r"\b",  # ../<sibling>/...
            r"/work/" + SIBLING + r"\b",  # the machine path
            r"parents?(\[\d+\])?(\.parent)*\s*/\s*[\"']" + SIBLING + r"[\"']",  # Path(...).parent / "<sibling>"
            r"[\"']" + SIBLING + r"[\"']\s*/\s*[\"'](samples|tasks|research|seeds)[\"']",
        ]
    )
)


def _text_files() -> list[Path]:
    files = []
    for top in ("pluginbench", "tests"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                files.append(path)
    return files


def test_no_file_references_the_sibling_folder() -> None:
    """Every file under pluginbench/ and tests/ is free of paths into the sibling research folder."""
    files = _text_files()
    assert len(files) > 100  # the walk really saw the tree
    hits = []
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if PATTERNS.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not hits, "files reference the sibling folder (copy the data into tests/data):\n" + "\n".join(hits)


def test_the_pattern_catches_each_way_of_reaching_the_sibling() -> None:
    """The check recognises a relative path, the machine path and a pathlib join into the sibling."""
    for line in (
        "see ../" + SIBLING + "/research/codex-cli.md",
        "/work/" + SIBLING + "/samples/x",
        'ROOT.parent / "' + SIBLING + '" / "samples"',
        'Path(__file__).resolve().parents[2].parent / "' + SIBLING + '"',
    ):
        assert PATTERNS.search(line), line
    assert not PATTERNS.search("the shared tree rules refuse symlinks")
    assert not PATTERNS.search('environment_mode = "shared"')
