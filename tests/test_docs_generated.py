"""The reference tables in docs/ match the types they are generated from."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_doc_tables_match_the_types() -> None:
    """Every generated block in docs/ equals what tools/gen_docs.py renders from the code (run it after a schema change)."""
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    pages = mod.render()
    assert pages, "no generated blocks found"
    for page, text in pages.items():
        assert (ROOT / page).read_text(encoding="utf-8") == text, f"{page} is stale: run tools/gen_docs.py"
