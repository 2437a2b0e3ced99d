"""``compare``'s pure core: packages and a gates file in, splits with tables and verdicts out.

:func:`compare_packages` takes the packages (one arm of one run each), each run's saved
``comparison_identity`` (or ``None`` for a run saved before reports carried one) and the
parsed gates file. For every named split and then for all tasks it returns a measure
table, every gate decided for every candidate package against its comparator, and the
paired section of every package against each comparator. Runs that cannot be compared
raise :class:`CompareRefused`; inputs that contradict each other raise ``InputError``.

Exit status: :data:`EXIT_PASS` when every gate passes, :data:`EXIT_FAIL` when any gate
fails, :data:`EXIT_UNDETERMINED` when none fails but some gate is undetermined — counting
only the candidate's rows when a candidate is named (``--candidate v2`` with a gate
``against: v1`` gates v2 against v1; v1 against vanilla is shown, not deciding).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..errors import CompareRefused, InputError
from ._compare_sequential import sequential_bound_gate, with_sequence
from ._cost_gate import cost_gate
from ._gate_eval import (
    FAILED,
    PASSED,
    UNDETERMINED,
    GateResult,
    bound_gate,
    count_gate,
    metric_gate,
)
from ._gates import GatesFile
from ._identity import compare_identities, shown
from ._intervals import median
from ._paired import IO_TOKENS, PairedComparison, paired_comparison
from ._rate_gate import rate_gate
from ._records import FAIL, OVERLAP_PASS, PASS, UNKNOWN, Package, correctness, metric_value

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_UNDETERMINED = 0, 1, 2, 3
ALL = "all"


class MeasureRow(msgspec.Struct, frozen=True, kw_only=True):
    """One package on one task: assigned attempts, correctness counts, medians."""

    task: str
    package: str
    run: str
    attempts: int
    complete: int
    passes: int
    overlap_passes: int
    fails: int
    unknowns: int
    pass_rate: float | None
    median_input_output_tokens: float | None


class SplitResult(msgspec.Struct, frozen=True, kw_only=True):
    """One split (or ``all``): its tasks, measure table, gate table and paired sections."""

    name: str
    tasks: list[str]
    measures: list[MeasureRow]
    gates: list[GateResult]
    paired: list[PairedComparison]


class CompareResult(msgspec.Struct, frozen=True, kw_only=True):
    """The whole comparison and the exit code a pipeline acts on."""

    status: str  # pass | fail | undetermined
    exit_code: int
    count_overlap_passes: bool
    packages: list[dict[str, str]]
    run_identity: list[str]
    splits: list[SplitResult]
    candidate: str | None = None


def _measure_row(pkg: Package, task: str, overlap: bool) -> MeasureRow:
    rows = pkg.on(task)
    classes = [correctness(a.outcome, overlap) for a in rows]
    passes = classes.count(PASS)
    fails = classes.count(FAIL)
    known = passes + fails
    io = [metric_value(a, IO_TOKENS) for a in rows]
    return MeasureRow(
        task=task,
        package=pkg.name,
        run=pkg.run,
        attempts=len(rows),
        complete=sum(1 for a in rows if a.outcome is not None),
        passes=passes,
        overlap_passes=sum(1 for a in rows if a.outcome == OVERLAP_PASS),
        fails=fails,
        unknowns=classes.count(UNKNOWN),
        pass_rate=passes / known if known else None,
        median_input_output_tokens=None
        if (None in io or not io)
        else median([v for v in io if v is not None]),
    )


def _check_inputs(packages: Sequence[Package], gates: GatesFile, file: str) -> dict[str, Package]:
    by_name: dict[str, Package] = {}
    for pkg in packages:
        if pkg.name in by_name:
            other = by_name[pkg.name]
            both = sorted(other.tasks() & pkg.tasks())
            if both:
                raise InputError(
                    f"package {pkg.name!r} has task(s) {', '.join(both)} in both {other.run} and "
                    f"{pkg.run}: the same package and task may come from only one input",
                    file=pkg.run,
                    fix=f"select arms with DIR=ARM,ARM so that {pkg.name} comes from one run per task",
                )
            prices = other.prices if other.prices == pkg.prices else f"mixed: {other.prices} + {pkg.prices}"
            by_name[pkg.name] = Package(pkg.name, f"{other.run} + {pkg.run}", other.attempts + pkg.attempts,
                                        prices=prices)
        else:
            by_name[pkg.name] = pkg
    for i, g in enumerate(gates.gates):
        if g.against not in by_name:
            raise InputError(
                f"gate {g.name!r} compares against {g.against!r}, which no input provides",
                file=file,
                field=f"gates[{i}].against",
                fix="name a package (arm) of the compared runs: " + ", ".join(sorted(by_name)),
            )
    if len(by_name) < 2:
        raise InputError(
            "compare needs at least two packages (arms) across its inputs",
            fix="pass runs with a treatment and its comparator, or select more arms with DIR=ARM,ARM",
        )
    return by_name


def _pairs(by_name: Mapping[str, Package], gates: GatesFile) -> list[tuple[Package, Package]]:
    return [
        (by_name[c], by_name[a])
        for a in gates.comparators
        for c in sorted(by_name)
        if c != a
    ]


def _runs_of(pkg: Package) -> list[str]:
    return pkg.run.split(" + ")


def check_identities(
    packages: Sequence[Package],
    pairs: Sequence[tuple[Package, Package]],
    identities: Mapping[str, Mapping[str, Any] | None],
) -> list[str]:
    """Refuse runs whose identities disagree; return the ``Run identity:`` lines."""
    notes: list[str] = []
    unchecked = sorted(r for r, ident in identities.items() if ident is None)
    if unchecked:
        notes.append(
            "Run identity: saved before reports carried comparison_identity, compared unchecked: "
            + ", ".join(unchecked)
        )
    one_sided: set[str] = set()
    problems: list[str] = []
    checked: set[tuple[str, str]] = set()
    for cand, comp in pairs:
        for rc in _runs_of(cand):
            for rp in _runs_of(comp):
                key = (min(rc, rp), max(rc, rp))
                if rc == rp or key in checked:
                    continue
                checked.add(key)
                left, right = identities.get(key[0]), identities.get(key[1])
                if left is None or right is None:
                    continue
                tasks = {a.task for p in packages if key[0] in _runs_of(p) for a in p.attempts} & {
                    a.task for p in packages if key[1] in _runs_of(p) for a in p.attempts
                }
                diffs, only = compare_identities(left, right, tasks)
                one_sided.update(only)
                if diffs:
                    lines = [f"  {d.field}: {shown(d.left)} ({key[0]}) vs {shown(d.right)} ({key[1]})" for d in diffs]
                    problems.append(
                        f"{key[0]} and {key[1]} differ on tasks {', '.join(sorted(tasks))}:\n" + "\n".join(lines)
                    )
    if problems:
        raise CompareRefused(
            "compare refuses runs it cannot compare: their comparison_identity disagrees\n"
            + "\n".join(problems),
            fix="compare runs made with the same harness, model, reasoning, CLI version, "
            "capabilities, tasks, limits and measurement settings (guidance, jobs and seed may differ)",
        )
    if one_sided:
        notes.append("Run identity: saved by only one run, not compared: " + ", ".join(sorted(one_sided)))
    return notes


def compare_packages(
    packages: Sequence[Package],
    gates: GatesFile,
    identities: Mapping[str, Mapping[str, Any] | None],
    *,
    gates_file: str = "gates.yaml",
    candidate: str | None = None,
    sequences: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> CompareResult:
    """Decide every gate of ``gates`` for every split; see the module docstring.
    ``sequences``: run → its results.json ``sequential`` (a sequential run's pairs with vanilla
    of the same run use that run's anytime-valid interval on all tasks, ``_compare_sequential``).

    ``candidate`` (or the gates file's ``candidate``): only gate rows of that package decide
    the exit code; the other packages' rows are kept with ``deciding = False``."""
    by_name = _check_inputs(packages, gates, gates_file)
    candidate = candidate if candidate is not None else gates.candidate
    if candidate is not None and candidate not in by_name:
        raise InputError(
            f"the candidate {candidate!r} is not one of the compared packages ({', '.join(sorted(by_name))})",
            file=gates_file, field="candidate",
            fix="name a package (arm) of the given runs with --candidate or candidate:",
        )
    pairs = _pairs(by_name, gates)
    notes = check_identities(list(by_name.values()), pairs, identities)
    all_tasks = sorted({a.task for p in by_name.values() for a in p.attempts})
    splits = [*((n, list(t)) for n, t in gates.splits.items()), (ALL, all_tasks)]
    overlap = gates.count_overlap_passes
    results = []
    for name, tasks in splits:
        paired = {
            (c.name, p.name): paired_comparison(tasks, c, p, count_overlap_passes=overlap, level=gates.confidence_level)
            for c, p in pairs
        }
        if name == ALL and sequences:  # a sequential run's own pairs: its anytime-valid interval
            paired = {k: with_sequence(v, by_name[k[0]], by_name[k[1]], sequences) for k, v in paired.items()}
        decided = []
        for g in gates.gates:
            comp = by_name[g.against]
            for cand_name in sorted(by_name):
                if cand_name == g.against:
                    continue
                cand = by_name[cand_name]
                if g.rate is not None:
                    row = rate_gate(g, cand, comp, tasks, gates.confidence_level)
                elif g.bound is not None:
                    pc = paired[(cand.name, comp.name)]
                    row = sequential_bound_gate(g, cand, comp, pc) or bound_gate(g, cand, comp, pc)
                elif g.cost is not None:
                    row = cost_gate(g, cand, comp, tasks, overlap, gates.confidence_level)
                elif g.correctness is not None:
                    row = count_gate(g, cand, comp, tasks, overlap)
                else:
                    row = metric_gate(g, cand, comp, tasks)
                if candidate is not None and cand_name != candidate:
                    row = msgspec.structs.replace(row, deciding=False)
                decided.append(row)
        measures = [_measure_row(by_name[n], t, overlap) for t in tasks for n in sorted(by_name)]
        results.append(
            SplitResult(name=name, tasks=tasks, measures=measures, gates=decided, paired=list(paired.values()))
        )
    statuses = {g.status for s in results for g in s.gates if g.deciding}
    if candidate is not None and not statuses:
        raise InputError(
            f"no gate checks the candidate {candidate!r}: it is every gate's comparator",
            file=gates_file, field="candidate",
            fix="name the package under test, or add a gate whose against: is its baseline",
        )
    if FAILED in statuses:
        status, code = FAILED, EXIT_FAIL
    elif UNDETERMINED in statuses:
        status, code = UNDETERMINED, EXIT_UNDETERMINED
    else:
        status, code = PASSED, EXIT_PASS
    return CompareResult(
        status=status,
        exit_code=code,
        count_overlap_passes=overlap,
        packages=[{"package": p.name, "run": p.run} for p in (by_name[n] for n in sorted(by_name))],
        run_identity=notes,
        splits=results,
        candidate=candidate,
    )
