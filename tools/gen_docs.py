"""Rewrite the generated reference tables in docs/ from the types they describe.

Run: .venv/bin/python tools/gen_docs.py   (tests/test_docs_generated.py checks they match)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pluginbench.doctable import replace_generated  # noqa: E402


def blocks() -> dict[tuple[str, str], str]:
    """(page, block name) → the generated markdown."""
    from pluginbench.cache import KeyInputs
    from pluginbench.doctable import table
    from pluginbench.measures._doc import measures_table
    from pluginbench.projections._results_schema import ResultsJson
    from pluginbench.stats import GatesFile

    return {
        ("docs/compare.md", "gates-file"): table(GatesFile),
        ("docs/metrics.md", "measures"): measures_table(),
        ("docs/results.md", "results-json"): table(ResultsJson, with_default=False),
        ("docs/vanilla-cache.md", "vanilla-key"): table(KeyInputs, with_default=False),
    }


def render() -> dict[str, str]:
    """Every page with generated blocks, as it should read."""
    pages: dict[str, str] = {}
    for (page, name), content in blocks().items():
        text = pages.get(page) or (ROOT / page).read_text(encoding="utf-8")
        pages[page] = replace_generated(text, name, content)
    return pages


if __name__ == "__main__":
    for page, text in render().items():
        (ROOT / page).write_text(text, encoding="utf-8")
        print(f"wrote {page}")
