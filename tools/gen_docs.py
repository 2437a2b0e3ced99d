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
    from pluginbench.config import (
        DEFAULT_GENERATE_INSTRUCTION,
        Generate,
        GradingConfig,
        HarnessEntry,
    )
    from pluginbench.doctable import table
    from pluginbench.environments import BUILTIN_BACKENDS, backends_table
    from pluginbench.events import event_index_table, vocabulary_table
    from pluginbench.layering import markdown as layering_table
    from pluginbench.measures._doc import measures_table
    from pluginbench.projections import Status
    from pluginbench.projections._report_code import code_measures_table
    from pluginbench.projections._results_schema import ResultsJson
    from pluginbench.stats import GatesFile

    return {
        ("docs/architecture.md", "layering"): layering_table(),
        ("docs/events.md", "event-index"): event_index_table(),
        ("docs/architecture.md", "harnesses"): harness_table(),
        ("docs/architecture.md", "bench-index"): bench_index(),
        ("docs/compare.md", "gates-file"): table(GatesFile),
        ("docs/metrics.md", "measures"): measures_table(),
        ("docs/metrics.md", "code-measures"): code_measures_table(),
        ("docs/metrics.md", "outcome"): vocabulary_table("outcome", "Outcome"),
        ("docs/metrics.md", "usage-status"): vocabulary_table("usage-status", "Status"),
        ("docs/metrics.md", "attempt-state"): vocabulary_table("attempt-state", "State"),
        ("docs/metrics.md", "phase"): vocabulary_table("phase", "Phase"),
        ("docs/metrics.md", "measure-status"): vocabulary_table("measure-status", "Status"),
        ("docs/metrics.md", "model-status"): vocabulary_table("model-status", "Status"),
        ("docs/results.md", "results-json"): table(ResultsJson, with_default=False),
        ("docs/metrics.md", "status-json"): table(Status, with_default=False),
        ("docs/vanilla-cache.md", "vanilla-key"): table(KeyInputs, with_default=False),
        ("docs/configuration.md", "backends"): backends_table(BUILTIN_BACKENDS),
        ("docs/configuration.md", "runner-harnesses"): table(HarnessEntry),
        ("docs/configuration.md", "generate"): table(Generate),
        ("docs/configuration.md", "grading"): table(GradingConfig),
        ("docs/configuration.md", "generate-prompt"): f"```text\n{DEFAULT_GENERATE_INSTRUCTION}\n```\n",
    }


def harness_table() -> str:
    """The registered harnesses and what each declares (pluginbench/harness_registry.py)."""
    from pluginbench.harness_registry import harness_classes

    def yes(flag: bool) -> str:
        return "yes" if flag else "—"

    lines = ["| Harness | Adapter | What it is | Real CLI (pinned) | Reviewer | Simulated |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, cls in harness_classes().items():
        cli = f"`{cls.cli.package}@{cls.cli.version}`" if cls.cli is not None else "—"
        module = cls.__module__.removeprefix("pluginbench.").replace(".", "/")
        lines.append(f"| `{name}` | `{module}.py: {cls.__qualname__}` | {cls.summary} | {cli} | "
                     f"{yes(cls.reviewer)} | {yes(cls.simulated)} |")
    return "\n".join(lines) + "\n"


#: Sentences of a bench docstring's first paragraph that say how it runs, not what it measures.
_BENCH_BOILERPLATE = ("Prints numbers; asserts nothing.", "Prints; asserts nothing.", "Prints numbers.",
                      "Run on demand:")


def bench_index() -> str:
    """Every ``bench/bench_*.py`` with what it measures: its docstring's first paragraph
    (how-to-run sentences left out), so no benchmark goes unlisted or drifts from its text."""
    import ast

    lines = ["| Script | What it measures |", "| --- | --- |"]
    for path in sorted((ROOT / "bench").glob("bench_*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        summary = " ".join(doc.split("\n\n", 1)[0].split())
        for sentence in _BENCH_BOILERPLATE:
            summary = summary.replace(sentence, "")
        summary = " ".join(summary.split()).replace("|", "\\|")
        if not summary:
            raise SystemExit(f"{path.relative_to(ROOT)} has no docstring saying what it measures")
        lines.append(f"| [`{path.name}`](../bench/{path.name}) | {summary} |")
    return "\n".join(lines) + "\n"


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
