"""The package layers: which part of PluginBench may import which.

One table, two readers: ``docs/architecture.md`` shows it (``tools/gen_docs.py`` renders
:func:`markdown` between its generated markers) and ``tests/test_public_surface.py`` checks
every import under ``pluginbench/`` against it, so the page and the code cannot drift.

The rule: a unit (a package or a module directly under ``pluginbench/``) imports only
units of its own layer or lower ones, never a higher one, and two units never import each
other. A new unit gets a row here before anything imports it.
"""

from typing import NamedTuple


class Layer(NamedTuple):
    """One layer: its number (1 is the bottom), its units and what they hold."""

    number: int
    units: tuple[str, ...]
    what: str


LAYERS: tuple[Layer, ...] = (
    Layer(1, ("errors", "rundir", "doctable", "layering", "harness_registry", "_gc", "_parsing", "_lazy",
              "_serving"),
          "the one error tree, the run directory's paths, reference tables for the docs "
          "(from msgspec types), this table, the harness registry (harness names → adapter "
          "classes, imported by module path on demand), pausing the garbage collector around "
          "bulk decodes, small shared readers of input text (a field's value by its path, numeric text, JSON lines), "
          "lazy re-exports for a package's `__init__`, a socketserver loop that stops at once"),
    Layer(2, ("events", "config", "tasks", "measures", "stats", "probe"),
          "events (types, log, lock); config (uses `tasks` to check links); tasks (Harbor "
          "folders, safe trees, task links: parsing, resolving, fetching and verifying them "
          "through the task cache); measures; stats; probe (the loopback model server)"),
    Layer(3, ("environments", "treatments", "plan", "cache"),
          "environments (uses `tasks`); treatments (admission); plan; cache (the vanilla "
          "cache: pure key and admission, file I/O at the edge; uses `config`, `events`, `tasks`)"),
    Layer(4, ("harnesses", "review"),
          "harnesses (use `environments`, `treatments`, `probe`); review (the packet, the "
          "review call, the response schema; uses `harnesses`, `environments`, `tasks`)"),
    Layer(5, ("projections",),
          "pure folds of the log (use `events`, `stats`, `config` for the capability record)"),
    Layer(6, ("actors", "status", "dashboard", "judging", "viewer"),
          "actors (everything below); status (the status adapter: uses `projections`, `events`, "
          "and `environments` for the left-running check); dashboard (uses `status`, "
          "`projections`, `events`, `viewer`); judging (uses `harnesses`, `environments`, `tasks`, `probe`); "
          "viewer (one attempt's facts, transcripts, bundles: uses `status`, `measures`, `harnesses`)"),
    Layer(7, ("cli", "_main", "__main__", "_worker_start", "_exit"),
          "the command line: parsing and dispatch only (`_main` answers `status --json` "
          "without loading the CLI framework, and starts a background run's worker before "
          "it: `_worker_start`; the commands that own a run end without the interpreter's "
          "teardown: `_exit`)"),
)


def layer_of(unit: str) -> int | None:
    """The layer number of ``unit`` (``"actors"``, ``"errors"``, ...), or None if it has no row."""
    for layer in LAYERS:
        if unit in layer.units:
            return layer.number
    return None


def markdown() -> str:
    """The layer table as the architecture page shows it."""
    rows = ["| Layer | Units | What they hold |", "| --- | --- | --- |"]
    for layer in LAYERS:
        units = ", ".join(f"`{u}`" for u in layer.units)
        rows.append(f"| {layer.number} | {units} | {layer.what} |")
    return "\n".join(rows) + "\n"
