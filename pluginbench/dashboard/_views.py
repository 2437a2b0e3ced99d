"""Page models: pure functions from what the reader holds to what a page shows.

No I/O, no clock: the same entries give the same models. Unknown stays ``None`` (a blank
cell), never zero. The three pages are Runs (one row per run), Results (one row per
attempt of every run with a report, filtered) and Run (one run in full).
"""

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ..events import KNOWN_OUTCOMES as KNOWN
from ..events import PASSING_OUTCOMES as PASSES
from ..projections import side_lines

FILTERS = (
    ("arm", "arm"),
    ("harness", "harness"),
    ("cli_version", "harness CLI version"),
    ("model", "model"),
    ("effort", "effort"),
    ("task", "task"),
    ("source", "coded or reused"),
)


class RunSource(msgspec.Struct, frozen=True, kw_only=True):
    """One run as the reader last read it (the input of every view)."""

    key: str
    root: str
    status: dict[str, Any] | None
    settings: dict[str, Any] | None
    results: dict[str, Any] | None
    stale: str | None
    completed_at: tuple[str, ...] = ()
    rows: "tuple[ResultRow, ...] | None" = None  # result_rows(self), computed once per results.json
    #: the cross-agent evaluation's folder this run is one harness of (None: a run on its own)
    group: str | None = None


# ---------------------------------------------------------------- Runs


class RunsRow(msgspec.Struct, frozen=True, kw_only=True):
    key: str
    name: str
    path: str
    phase: str
    running: bool
    completed: int | None
    total: int | None
    outcomes: dict[str, int]
    tokens: int | None
    tokens_lower_bound: bool
    #: while attempts run (``tokens`` unknown): the complete attempts' total and how many
    #: they are, as status shows it; ``None`` when one of them did not measure it
    tokens_so_far: int | None = None
    tokens_so_far_attempts: int = 0
    harness: str | None
    model: str | None
    effort: str | None
    last_activity: str | None
    stale: str | None
    error: str | None
    #: the report's verdicts (results.json ``verdicts``, from stats.verdicts): kind and headline
    verdicts: tuple[tuple[str, str], ...] = ()


def report_verdicts(results: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """(kind, headline) of each treatment in a results.json document; none without one."""
    got = (results or {}).get("verdicts") if isinstance(results, Mapping) else None
    if not isinstance(got, list):
        return ()
    return tuple((str(v.get("kind")), str(v.get("headline"))) for v in got if isinstance(v, Mapping))


def _runs_row(src: RunSource) -> RunsRow:
    s = src.status or {}
    tokens = s.get("tokens") or {}
    hb = s.get("heartbeat") or {}
    return RunsRow(
        key=src.key,
        name=s.get("name") or (src.settings or {}).get("name") or src.root.rsplit("/", 1)[-1],
        path=src.root,
        phase=s.get("phase") or "unreadable",
        running=bool(s.get("active")),
        completed=(s.get("states") or {}).get("complete") if s else None,
        total=s.get("attempts_total") if s else None,
        outcomes={k: v for k, v in (s.get("outcomes") or {}).items() if v},
        tokens=tokens.get("total_tokens"),
        tokens_lower_bound=bool(tokens.get("lower_bound")),
        tokens_so_far=tokens.get("complete_total_tokens"),
        tokens_so_far_attempts=int(tokens.get("complete_attempts") or 0),
        harness=s.get("harness"),
        model=s.get("model"),
        effort=s.get("reasoning"),
        last_activity=hb.get("at"),
        stale=src.stale,
        error=s.get("error"),
        verdicts=report_verdicts(src.results),
    )


def runs_model(sources: Iterable[RunSource]) -> list[RunsRow]:
    """Every run; running runs first, then the most recently active."""
    rows = [_runs_row(s) for s in sources]
    rows.sort(key=lambda r: (r.last_activity or "", r.path), reverse=True)
    rows.sort(key=lambda r: not r.running)
    return rows


class CrossMatrix(msgspec.Struct, frozen=True, kw_only=True):
    """A cross-agent evaluation on the Runs page: each package's verdict under each harness,
    from that harness's own report (compared within the harness only, never pooled)."""

    folder: str
    name: str
    harnesses: list[str]
    #: harness -> (run key, phase) of its run
    runs: dict[str, tuple[str, str]]
    packages: list[str]
    #: package -> harness -> (verdict kind, headline); kind "no report" before the run reports
    cells: dict[str, dict[str, tuple[str, str]]]


def cross_matrices(sources: Iterable[RunSource]) -> list[CrossMatrix]:
    """One package × harness matrix per cross-agent folder among the runs, by folder."""
    groups: dict[str, list[RunSource]] = {}
    for src in sources:
        if src.group is not None:
            groups.setdefault(src.group, []).append(src)
    out = []
    for folder, members in sorted(groups.items()):
        members.sort(key=lambda s: s.root)
        harnesses = [str((s.status or {}).get("harness") or s.root.rsplit("/", 1)[-1]) for s in members]
        verdicts = {h: dict((v["treatment"], (str(v["kind"]), str(v["headline"])))
                            for v in (s.results or {}).get("verdicts") or [] if isinstance(v, Mapping))
                    for h, s in zip(harnesses, members, strict=True)}
        packages = sorted({t for s in members for t in ((s.settings or {}).get("treatments") or {})}
                          | {t for v in verdicts.values() for t in v})
        name = next((str((s.status or {}).get("name")) for s in members if (s.status or {}).get("name")),
                    folder.rsplit("/", 1)[-1])
        out.append(CrossMatrix(
            folder=folder, name=name, harnesses=harnesses,
            runs={h: (s.key, str((s.status or {}).get("phase") or "unreadable")) for h, s in zip(harnesses, members, strict=True)},
            packages=packages,
            cells={p: {h: verdicts[h].get(p, ("no report", "this harness's run has no report with this package yet"))
                       for h in harnesses} for p in packages}))
    return out


# ---------------------------------------------------------------- Results


class ResultRow(msgspec.Struct, frozen=True, kw_only=True):
    run_key: str
    run: str
    #: the run directory, shown beside ``run`` (the evaluation name), which runs of one config share
    run_dir: str = ""
    harness: str | None
    cli_version: str | None
    model: str | None
    effort: str | None
    effective_effort: str | None
    task: str
    repeat: int | None
    arm: str
    correctness: str | None
    input_tokens: int | float | None
    output_tokens: int | float | None
    coding_seconds: int | float | None
    source_lines_added: int | float | None
    test_lines_added: int | float | None
    reasons: dict[str, str]  # column -> why it is blank
    # "coded" by this run, or "reused" from the vanilla cache: a reused attempt is also a row of
    # the run that coded it, so pooling both counts it twice; the filter keeps one of each.
    source: str = "coded"
    origin_cohort: str | None = None
    attempt_id: str = ""  # links the row to its attempt page


class ResultsPage(msgspec.Struct, frozen=True, kw_only=True):
    rows: list[ResultRow]
    total: int  # rows before filtering
    filters: dict[str, str]
    options: dict[str, list[str]]
    combinations: list[tuple[str, str, str]]  # (harness, model, effort) the rows span
    mixed: bool
    grid: dict[str, dict[str, tuple[int, int]]]  # task -> arm -> (passes, known)
    arms: list[str]
    reused: int = 0  # shown rows that were imported from the vanilla cache


def _measure(attempt: Mapping[str, Any], name: str) -> tuple[Any, str | None]:
    m = (attempt.get("measures") or {}).get(name)
    if not isinstance(m, Mapping):
        return None, "not measured in this report"
    if m.get("value") is None:
        return None, m.get("reason") or "not measured"
    return m["value"], None


def result_rows(src: RunSource) -> list[ResultRow]:
    """The rows of one run's ``report/results.json`` (none without a report)."""
    doc = src.results
    if not doc:
        return []
    run = doc.get("run") or {}
    out = []
    for a in doc.get("attempts") or []:
        if not isinstance(a, Mapping):
            continue
        reasons: dict[str, str] = {}
        tokens = a.get("tokens") or {}
        values: dict[str, Any] = {}
        for col, key in (("input_tokens", "input"), ("output_tokens", "output")):
            values[col] = tokens.get(key)
            if values[col] is None:
                reasons[col] = tokens.get("reason") or "not reported"
        values["coding_seconds"] = a.get("coding_seconds")
        if values["coding_seconds"] is None:
            reasons["coding_seconds"] = "no coding time was recorded"
        for col in ("source_lines_added", "test_lines_added"):
            values[col], why = _measure(a, col)
            if why:
                reasons[col] = why
        correctness = a.get("outcome")
        if correctness is None:
            reasons["correctness"] = a.get("outcome_reason") or "not graded"
        effective = a.get("effective_effort") or run.get("effective_reasoning")
        if effective is None:
            reasons["effective_effort"] = "not recorded in this report"
        out.append(ResultRow(
            run_key=src.key,
            run=str(run.get("name") or src.root),
            run_dir=src.root,
            harness=run.get("harness"),
            cli_version=run.get("cli_version"),
            model=run.get("model"),
            effort=run.get("reasoning"),
            effective_effort=effective,
            task=str(a.get("task")),
            repeat=a.get("repeat"),
            arm=str(a.get("arm")),
            correctness=correctness,
            reasons=reasons,
            source="reused" if a.get("reused") else "coded",
            origin_cohort=a.get("origin_cohort") if a.get("reused") else None,
            attempt_id=str(a.get("attempt_id") or ""),
            **values,
        ))
    return out


def _filter_value(row: ResultRow, name: str) -> str:
    v = getattr(row, name)
    return "" if v is None else str(v)


def results_model(sources: Iterable[RunSource], filters: Mapping[str, str]) -> ResultsPage:
    """Every attempt of every run with a report, narrowed by the filters that are set."""
    rows = [r for s in sources for r in (s.rows if s.rows is not None else result_rows(s))]
    active = {k: v for k, v in filters.items() if k in dict(FILTERS) and v}
    options = {k: sorted({_filter_value(r, k) for r in rows}) for k, _ in FILTERS}
    kept = [r for r in rows if all(_filter_value(r, k) == v for k, v in active.items())]
    combos = sorted({(r.harness or "", r.model or "", r.effort or "") for r in kept})
    arms: list[str] = []
    grid: dict[str, dict[str, tuple[int, int]]] = {}
    for r in kept:
        if r.arm not in arms:
            arms.append(r.arm)
        p, k = grid.setdefault(r.task, {}).get(r.arm, (0, 0))
        grid[r.task][r.arm] = (p + (r.correctness in PASSES), k + (r.correctness in KNOWN))
    return ResultsPage(
        rows=kept, total=len(rows), filters=active, options=options,
        combinations=combos, mixed=len(combos) > 1,
        grid=dict(sorted(grid.items())), arms=_vanilla_first(arms),
        reused=sum(r.source == "reused" for r in kept),
    )


def _vanilla_first(arms: list[str]) -> list[str]:
    return sorted(arms, key=lambda a: (a not in ("vanilla", "baseline"), arms.index(a)))


# ---------------------------------------------------------------- Run


class Repeat(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    repeat: int
    state: str  # as shown: an unowned run's running attempt shows as interrupted
    outcome: str | None
    mark: str  # outcome for complete attempts, else the state
    tokens: int | None
    tokens_status: str | None
    reason: str | None
    reused: bool = False  # imported from the vanilla cache, not coded in this run


class RunPage(msgspec.Struct, frozen=True, kw_only=True):
    key: str
    name: str
    path: str
    phase: str
    running: bool
    stale: str | None
    error: str | None
    settings: list[tuple[str, str]]
    owner: dict[str, Any] | None
    heartbeat: dict[str, Any] | None
    resume_command: str | None
    tasks: list[str]
    arms: list[str]
    cells: dict[str, dict[str, list[Repeat]]]  # task -> arm -> repeats
    grid: dict[str, dict[str, tuple[int, int]]]  # task -> arm -> (passes, known)
    totals: dict[str, dict[str, Any]]  # arm -> attempts, states, outcomes, tokens
    attempts_total: int
    states: dict[str, int]
    outcomes: dict[str, int]
    discarded: list[dict[str, Any]]
    revisions: dict[str, list[dict[str, Any]]]
    reuse: dict[str, Any]  # vanilla cache: vanilla_attempts, planned_hits, reused
    report: dict[str, Any] | None  # report/results.json, for the report's own figures
    has_report: bool
    has_csv: bool
    completed_at: tuple[str, ...]
    notes: list[str]
    #: a sequential run's live sequences and decision (status ``sequential``); None for a fixed-size run
    sequential: dict[str, Any] | None = None
    #: what runs beside coding (generation, checks, review calls and llm-check votes): (text, tone) lines
    side: list[tuple[str, str]] = []


_SETTINGS = (
    ("name", "name"), ("harness", "runner.harness"), ("model", "runner.model"),
    ("reasoning effort", "runner.reasoning"), ("harness CLI version", "runner.cli_version"),
    ("backend", "environment.backend"), ("isolation", "environment.isolation"),
    ("repeats", "repeats"), ("jobs", "jobs"), ("seed", "seed"), ("timeout (s)", "timeout_seconds"),
    ("measurements", "measurements"),
)


def _dig(doc: Mapping[str, Any] | None, dotted: str) -> Any:
    cur: Any = doc
    for part in dotted.split("."):
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def _shown(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, Mapping):
        return ", ".join(str(k) for k in v)
    return str(v)


def settings_rows(settings: Mapping[str, Any] | None, status: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The frozen settings worth a glance; a value neither file has is left out."""
    rows: list[tuple[str, str]] = []
    for label, path in _SETTINGS:
        v = _dig(settings, path)
        if v is None and label in ("harness", "model", "reasoning effort", "backend", "isolation"):
            v = status.get({"reasoning effort": "reasoning"}.get(label, label))
        if v is not None and v != []:
            rows.append((label, _shown(v)))
    tasks = sorted({a["task"] for a in status.get("attempts") or []})
    if tasks:
        rows.append(("tasks", ", ".join(tasks)))
    treatments = _dig(settings, "treatments")
    if isinstance(treatments, Mapping) and treatments:
        rows.append(("treatments", ", ".join(sorted(treatments))))
    return rows


def run_model(src: RunSource) -> RunPage:
    """One run in full, from its status (and frozen settings)."""
    s = src.status or {}
    running = bool(s.get("active"))
    attempts = s.get("attempts") or []
    arms = _vanilla_first(list(s.get("arms") or dict.fromkeys(a["arm"] for a in attempts)))
    tasks = sorted({a["task"] for a in attempts})
    cells: dict[str, dict[str, list[Repeat]]] = {t: {a: [] for a in arms} for t in tasks}
    grid: dict[str, dict[str, tuple[int, int]]] = {t: {} for t in tasks}
    for a in sorted(attempts, key=lambda a: (a["task"], a["arm"], a["repeat"])):
        state = a["state"]
        if state == "running" and not running:
            state = "interrupted"
        outcome = a.get("outcome") if state == "complete" else None
        cells[a["task"]].setdefault(a["arm"], []).append(Repeat(
            id=a["id"], repeat=a["repeat"], state=state, outcome=outcome,
            mark=(outcome or "unknown") if state == "complete" else state,
            tokens=a.get("tokens"), tokens_status=a.get("tokens_status"),
            reason=a.get("outcome_reason") or a.get("tokens_reason"),
            reused=bool(a.get("reused")),
        ))
        p, k = grid[a["task"]].get(a["arm"], (0, 0))
        grid[a["task"]][a["arm"]] = (p + (outcome in PASSES), k + (outcome in KNOWN))
    states = dict(s.get("states") or {})
    if not running and states.get("running"):
        states["interrupted"] = states.get("interrupted", 0) + states.pop("running")
    measures = s.get("measures") or {}
    notes = []
    if s.get("simulated"):
        notes.append("SIMULATED AGENT: a deterministic stand-in, not a real coding agent")
    if s.get("probe"):
        notes.append("PROBE RUN: the model is PluginBench's loopback server")
    if s.get("stopping") and s.get("phase") not in ("stopped", "failed"):
        notes.append(f"stopping: {s['stopping']}")
    return RunPage(
        key=src.key,
        name=s.get("name") or (src.settings or {}).get("name") or src.root.rsplit("/", 1)[-1],
        path=src.root,
        phase=s.get("phase") or "unreadable",
        running=running,
        stale=src.stale,
        error=s.get("error"),
        settings=settings_rows(src.settings, s),
        owner=s.get("owner"),
        heartbeat=s.get("heartbeat"),
        resume_command=s.get("resume_command"),
        tasks=tasks,
        arms=arms,
        cells=cells,
        grid=grid,
        totals={arm: dict(info) for arm, info in (s.get("arms") or {}).items()},
        attempts_total=int(s.get("attempts_total") or 0),
        states=states,
        outcomes={k: v for k, v in (s.get("outcomes") or {}).items() if v},
        discarded=list(s.get("discarded") or []),
        revisions={
            "measurement": list(measures.get("measurement_revisions") or []),
            "review": list(measures.get("review_revisions") or []),
        },
        reuse=dict(s.get("reuse") or {}),
        report=src.results,
        has_report=bool(s.get("report")),
        has_csv=src.results is not None,
        completed_at=src.completed_at,
        notes=notes,
        sequential=s.get("sequential"),
        side=side_lines({**s, "active": running}),
    )
