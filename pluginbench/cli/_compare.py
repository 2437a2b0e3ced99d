"""``pluginbench compare`` (gates over saved reports, and an exit code a pipeline acts on) and
``pluginbench calibrate`` (the gates' A/A false-positive rates)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .. import stats
from ..stats import DEFAULT_SEEDS, Calibration, CompareResult, SplitResult, calibrate
from ._common import console, errors_to_exit_codes, print_json
from ._compare_io import check_split_tasks, load_gates, load_inputs, load_sequences, load_vanilla

_STYLE = {"pass": "green", "fail": "red", "undetermined": "yellow"}


def _num(v: float | None, digits: int = 4) -> str:
    if v is None:
        return "unknown"
    if float(v).is_integer():
        return f"{int(v):,}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


class _Rows:
    """A table that never wraps a cell: printed as a table when it fits the terminal (or log)
    width, else one ``column value · column value`` line per row, so an 80-column CI log never
    shows "candida / te"."""

    def __init__(self, title: str, columns: tuple[str, ...]) -> None:
        self.title, self.columns = title, columns
        self.rows: list[tuple[str | Text, ...]] = []

    def add_row(self, *cells: str | Text) -> None:
        self.rows.append(cells)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        t = Table(title=self.title, title_justify="left")
        for col in self.columns:
            t.add_column(col, no_wrap=True)
        for row in self.rows:
            t.add_row(*row)
        if Measurement.get(console, options.update(max_width=100_000), t).maximum <= options.max_width:
            yield t
            return
        yield Text(self.title, style="italic")
        for row in self.rows:
            line = Text("  ")
            for i, (col, cell) in enumerate((c, v) for c, v in zip(self.columns, row, strict=True) if str(v) != ""):
                line.append(" · " if i else "")
                line.append(f"{col} ", style="dim")
                line.append(cell if isinstance(cell, Text) else Text(cell))
            yield line


def _measure_table(split: SplitResult) -> _Rows:
    t = _Rows(f"Measures · {split.name}",
              ("task", "package", "done", "pass", "overlap", "fail", "unknown", "rate", "median in+out"))
    for r in split.measures:
        t.add_row(
            r.task, r.package, f"{r.complete}/{r.attempts}", str(r.passes), str(r.overlap_passes),
            str(r.fails), str(r.unknowns), stats.format_rate(r.pass_rate), _num(r.median_input_output_tokens),
        )
    return t


def _gate_values_table(split: SplitResult) -> _Rows | None:
    rows = [(g, v) for g in split.gates for v in g.per_task]
    if not rows:
        return None
    t = _Rows(f"Metric gate values by task · {split.name}",
              ("gate", "candidate", "task", "cand. median", "comp. median", "reference", "ratio", "left out"))
    for g, v in rows:
        t.add_row(
            g.gate, g.candidate, v.task, _num(v.candidate), _num(v.comparator),
            "" if v.reference is None else _num(v.reference), "" if v.ratio is None else _num(v.ratio),
            v.left_out or "",
        )
    return t


def _gate_table(split: SplitResult) -> _Rows:
    t = _Rows(f"Gates · {split.name}", ("gate", "candidate", "against", "result", "value", "comparator", "limit", "tasks"))
    for g in split.gates:
        status = g.status if g.deciding else f"{g.status} (context)"
        t.add_row(
            g.gate, g.candidate, g.against, Text(status, style=_STYLE[g.status] if g.deciding else "dim"),
            _value(g.kind, g.candidate_value), "" if g.comparator_value is None else _num(g.comparator_value),
            g.limit, str(g.tasks_compared),
        )
    return t


def _value(kind: str, v: float | None) -> str:
    """A gate's value for people: pp for pass-rate bounds, × for token bounds."""
    if kind == "correctness_bound":
        return stats.format_pp(v)
    if kind == "token_bound":
        return stats.format_ratio(v)
    return _num(v)


def _interval(i: Any, fmt: Any) -> str:
    pct = f"{i.level * 100:g}%"
    if i.status == "ok":
        return f"{fmt(i.estimate)} [{pct}: {fmt(i.low)} to {fmt(i.high)}] over {i.tasks} task(s)"
    if i.status == "too_few_tasks":
        return f"{fmt(i.estimate)}, too few tasks ({i.tasks} < {i.min_tasks}) for a {pct} interval"
    return "no usable task"


def _paired_lines(split: SplitResult) -> list[str]:
    out = []
    for p in split.paired:
        pr, tk, s = p.pass_rate, p.tokens, p.sign_test
        out.append(f"Paired · {split.name} · {p.candidate} vs {p.against}")
        attempts = [m.attempts for m in split.measures if m.package in (p.candidate, p.against) and m.attempts]
        out.append(f"  {stats.verdict_of_paired(p, repeats=min(attempts, default=3)).headline}")
        method = "sign-flip permutation interval" if pr.method == "sign-flip permutation test" else pr.method
        out.append(f"  mean pass-rate difference: {_interval(pr, stats.format_pp)} ({method})")
        if pr.p_greater is not None and pr.p_less is not None:
            out.append(f"  direction: one-sided sign-flip test at 0, p = {stats.format_p(pr.p_greater)} (better), "
                       f"{stats.format_p(pr.p_less)} (worse)")
        out.append(f"  secondary: exact sign test +{s.positives} −{s.negatives} ={s.ties}, two-sided p = {stats.format_p(s.p)}")
        out.append(f"  geometric-mean token ratio: {_interval(tk, stats.format_ratio)}")
        d = p.dollars
        if d is not None:
            out.append("  dollars per attempt ratio: " + (
                _interval(d, stats.format_ratio) if d.status != "no_prices"
                else "unknown (no dollars, or the two runs were priced by different tables)"))
        for tp in p.per_task:
            out.append(
                f"  {tp.task}: pass-rate difference {stats.format_pp(tp.pass_rate_difference) if tp.pass_rate_excluded is None else 'excluded'}"
                f", token ratio {stats.format_ratio(tp.token_ratio) if tp.tokens_excluded is None else 'excluded'}"
            )
        for kind in ("pass_rate", "tokens"):
            for tp in p.excluded(kind):
                why = tp.pass_rate_excluded if kind == "pass_rate" else tp.tokens_excluded
                out.append(f"  excluded from {kind.replace('_', '-')} statistics: {tp.task}: {why}")
    return out


def render(result: CompareResult) -> None:
    for line in result.run_identity:
        console.print(line, highlight=False, markup=False)
    for split in result.splits:
        console.print(Text(f"\n{split.name}: {len(split.tasks)} task(s): {', '.join(split.tasks)}", style="bold"))
        console.print(_measure_table(split))
        values = _gate_values_table(split)
        if values is not None:
            console.print(values)
        console.print(_gate_table(split))
        for g in split.gates:
            console.print(
                Text(f"  {g.gate} · {g.candidate} vs {g.against}: {g.status}"
                     + ("" if g.deciding else " (context, not deciding)") + ": ",
                     style=_STYLE[g.status] if g.deciding else "dim")
                + Text(g.detail)
            )
        missing = [m for g in split.gates for m in g.missing_values]
        if missing:
            console.print("Missing values:", highlight=False)
            for m in dict.fromkeys(missing):
                console.print(f"  {m}", highlight=False, markup=False)
        for line in _paired_lines(split):
            console.print(line, highlight=False, markup=False)
    who = f" for candidate {result.candidate}" if result.candidate else ""
    console.print(
        Text(f"\nverdict{who}: {result.status} (exit {result.exit_code})", style="bold " + _STYLE[result.status])
    )


@errors_to_exit_codes
def compare_command(
    runs: Annotated[list[str], typer.Argument(help="Run directories; DIR=ARM,ARM takes only those arms from a run.", show_default=False)],
    gates: Annotated[Path, typer.Option("--gates", help="The gates file (YAML).", show_default=False)],
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as one JSON object.")] = False,
    candidate: Annotated[str | None, typer.Option("--candidate", help="The package under test (e.g. v2): only its gate rows decide the exit code; the others (v1 against vanilla) are shown for context. Overrides the gates file's candidate:.", show_default=False)] = None,
) -> None:
    """Decide gates over finished runs' reports; exit 0 pass, 1 fail, 3 undetermined, 2 bad input.

    Reads each run's report/results.json (no model calls, nothing rebuilt) and prints,
    for each split of the gates file and for all tasks, a measure table, a gate table
    and the paired section of every package against each comparator.
    """
    gates_file = load_gates(gates)
    packages, identities = load_inputs(runs)
    check_split_tasks(gates_file, packages, gates)
    result = stats.compare_packages(packages, gates_file, identities, gates_file=str(gates), candidate=candidate,
                                    sequences=load_sequences(runs))
    if json_out:
        print_json(msgspec.to_builtins(result))
    else:
        render(result)
    raise typer.Exit(result.exit_code)


def render_calibration(cal: Calibration) -> None:
    console.print(
        f"A/A calibration of {cal.run}: {cal.seeds} seeds, {cal.tasks} task(s), resampled from "
        f"{cal.vanilla_attempts} vanilla attempts (no model calls)",
        highlight=False, markup=False,
    )
    t = Table(title="False-positive rate per gate", title_justify="left")
    for col in ("split", "gate", "kind", "false pos.", "rate", "MC 95%", "nominal", "undetermined"):
        t.add_column(col, overflow="fold")
    for r in cal.gates:
        rate = "n/a" if r.false_positive_rate is None else f"{r.false_positive_rate:.1%}"
        mc = "" if r.rate_low is None or r.rate_high is None else f"{r.rate_low:.1%}–{r.rate_high:.1%}"
        nominal = "none stated" if r.nominal is None else f"{r.nominal:.1%}"
        style = "red" if r.exceeds_nominal else ""
        t.add_row(
            r.split, r.gate, r.kind, f"{r.false_positives}/{r.determined}", Text(rate, style=style), mc, nominal,
            str(r.undetermined),
        )
    console.print(t)
    for kind, definition in sorted({(r.kind, r.definition) for r in cal.gates}):
        console.print(f"  {kind}: a false positive is a seed where the {definition}" if kind.endswith("bound")
                      else f"  {kind}: a false positive is a seed where the gate {definition}", highlight=False)
    console.print("  a rate exceeds nominal only when its whole Monte Carlo interval lies above it", highlight=False)
    # A gate undetermined in every seed has no rate: saying nothing exceeds its level would
    # read as a clean calibration of a gate that was never measured.
    never = [f"{r.gate} ({r.split})" for r in cal.gates if r.determined == 0]
    if never:
        console.print(
            Text(f"Not calibrated (undetermined in all {cal.seeds} seeds; compare says why): " + ", ".join(never),
                 style="yellow")
        )
    if cal.exceeding:
        console.print(
            Text("Calibrated rate exceeds nominal for: " + ", ".join(cal.exceeding), style="bold red")
        )
    elif len(never) < len(cal.gates):
        console.print("No calibrated gate's rate exceeds its nominal level.", highlight=False)


@errors_to_exit_codes
def calibrate_command(
    run: Annotated[Path, typer.Argument(help="A finished run directory (its report/results.json is read).", show_default=False)],
    gates: Annotated[Path, typer.Option("--gates", help="The gates file (YAML).", show_default=False)],
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="A/A resamples (seeds 0..N-1).")] = DEFAULT_SEEDS,
    json_out: Annotated[bool, typer.Option("--json", help="Print the calibration as one JSON object.")] = False,
) -> None:
    """Measure each gate's false-positive rate by A/A resampling of a finished run's vanilla attempts.

    Each seed compares vanilla with an identical-content treatment, both resampled with
    replacement from the run's vanilla attempts per task; no model call is made. Each gate
    is decided by its own rule (margin, direction, bound kind); a bound gate sees the
    treatment moved onto its own limit (the least favourable truth). Prints each gate's
    false-positive rate with its Monte Carlo interval next to its nominal level, and says
    when a calibrated rate exceeds it.
    """
    gates_file = load_gates(gates)
    vanilla = load_vanilla(run)
    cal = calibrate(vanilla, gates_file, seeds=seeds)
    if json_out:
        print_json(msgspec.to_builtins(cal))
    else:
        render_calibration(cal)
