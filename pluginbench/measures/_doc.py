"""The registered measures as markdown tables (docs/metrics.md is generated from them)."""

from __future__ import annotations

from ._registry import general_settings, measures


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def measures_table() -> str:
    """One row per registered measure, then one row per column it produces."""
    lines = [
        "| Measure (`measurements:`) | Values from | Languages | Observer version | Default | Settings keys | Meaning |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for m in measures():
        keys = ", ".join(f"`measurement_settings.{k}`" for k in m.settings) or "—"
        source = "its collector, after capture" if m.source == "collector" else "the coding pipeline's receipts"
        lines.append(f"| `{m.name}` | {source} | {', '.join(m.languages)} | {m.observer_version} | "
                     f"{'yes' if m.default else 'no'} | {keys} | {_cell(m.description)} |")
    lines += [
        "",
        "| Column (`measures.<name>`) | Measure | Unit | Report header | Gate name | Per task × arm median | Meaning |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for m in measures():
        for c in m.columns:
            gate = f"`{c.gate_name}`" if c.gate_name else "—"
            lines.append(f"| `{c.metric}` | `{m.name}` | {c.unit} | {_cell(c.label)} | {gate} | "
                         f"{'`median_' + c.metric + '`' if c.summary else '—'} | {_cell(c.description)} |")
    shared = general_settings()
    lines += ["", "Shared `measurement_settings` keys (any selection; every collector sees them): "
              + (", ".join(f"`{k}`" for k in shared) if shared else "none yet") + "."]
    return "\n".join(lines) + "\n"
