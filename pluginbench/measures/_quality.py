"""The code-quality measures, registered on import: ``iterations``, ``cyclomatic``,
``cognitive`` and ``dead_code`` (issue 9 items 1, 3, 4; the duplicated-test-lines column
belongs to ``lines`` in ``_builtin.py``).

Each collector is a thin edge: it reads the frozen evidence a :class:`CollectorInput`
names, runs the pure rules (``_iterations``, ``_complexity``, ``_deadcode``) on what the
pinned analyzers report, and returns a value or an unknown with the reason per column.
"""

import hashlib
import shutil
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import AnalyzerFailed, PatchDoesNotApply
from ..events import Measure
from ._iterations import METHOD, count_attempt
from ._port import CollectorInput, Column, MeasureSpec, Readiness, ReadinessInput
from ._registry import register
from ._tree import changed_paths, source_files, submission_tree

# The scanners and rules of cyclomatic, cognitive and dead_code (``_complexity*``,
# ``_deadcode*``, ``_js_analyzers``) load with their first collection or readiness check:
# registering the measures (every command that reads a config) does not need them.
if TYPE_CHECKING:
    from ._complexity import ComplexityDelta

# ------------------------------------------------------------------ iterations


def collect_iterations(inp: CollectorInput) -> Mapping[str, Measure]:
    if not inp.agent_traces:
        return ITERATIONS.unknown(f"the {inp.harness} harness saves no agent transcript to count")
    return count_attempt(inp.attempt_dir)


def check_iterations(inp: ReadinessInput) -> Readiness:
    return Readiness("ready", None, METHOD)


ITERATIONS = register(MeasureSpec(
    name="iterations",
    description=("Verification commands and command → edit → command loops counted in the saved agent "
                 f"transcripts, root and subagent ({METHOD})."),
    columns=(
        Column("verification_commands", "commands", "verify",
               "Verification commands (tests, type checks, linters) that started.", "Verification commands"),
        Column("verification_iterations", "iterations", "iter",
               "Verification command → workspace edit → next verification command sequences.",
               "Verification iterations"),
        Column("failed_verification_commands", "commands", "failed",
               "Verification commands that exited non-zero with an unmasked status.",
               "Failed verification commands", table=False),
    ),
    observer_version="2",
    collect=collect_iterations,
    check=check_iterations,
    observer_modules=("pluginbench.measures._iterations", "pluginbench.measures._shell", "pluginbench.measures._traces"),
))

# ------------------------------------------------------------------ complexity

_SCAN_LOCK = threading.Lock()
_SCANS: "dict[str, tuple[str | None, str | None, str | None, ComplexityDelta | None]]" = {}


def _complexity(inp: CollectorInput) -> "tuple[str | None, str | None, str | None, ComplexityDelta | None]":
    """(language, analyzer, reason when unknown, delta) of the submission; cached per
    starting source and patch, since cyclomatic and cognitive share one scan."""
    key = hashlib.sha256(f"{inp.starting_source}\0{inp.patch}".encode("utf-8", "surrogateescape")).hexdigest()
    with _SCAN_LOCK:
        if key in _SCANS:
            return _SCANS[key]
    got = _scan_complexity(inp)
    with _SCAN_LOCK:
        if len(_SCANS) > 32:
            _SCANS.clear()
        _SCANS[key] = got
    return got


def _scan_complexity(inp: CollectorInput) -> "tuple[str | None, str | None, str | None, ComplexityDelta | None]":
    from ._complexity import ComplexityDelta, compare
    from ._complexity_scan import analyzer_status, language_of, scan_trees

    before_paths, after_paths = changed_paths(inp.patch)
    changed = {p for p in before_paths | after_paths if language_of(p)}
    languages = sorted({lang for p in changed if (lang := language_of(p)) is not None})
    if len(languages) > 1:
        return None, None, (f"the submission changes {' and '.join(languages)} source: scores of different "
                            "languages and analyzers are not pooled"), None
    if not languages:
        # a complete scan of a submission that changed no analyzed function adds zero
        present = sorted({lang for p in source_files(inp.starting_source, _SUFFIXES) if (lang := language_of(p)) is not None})
        language = present[0] if len(present) == 1 else None
        analyzer = analyzer_status(language)[0] if language else None
        return language, analyzer, None, ComplexityDelta(0, 0, 0, 0, 0, ())
    language = languages[0]
    analyzer, reason = analyzer_status(language)
    if analyzer is None:
        return language, None, reason, None
    work = inp.work_dir.parent / "complexity-tree"
    try:
        after_root = submission_tree(inp.starting_source, inp.patch, work, only=before_paths)
        before, after = scan_trees([(inp.starting_source, before_paths & changed), (after_root, after_paths & changed)])
    except PatchDoesNotApply as exc:
        return language, analyzer, str(exc), None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    errors = [s.error for s in (*before.values(), *after.values()) if s.error]
    if errors:
        return language, analyzer, errors[0], None
    return language, analyzer, None, compare(before, after)


_SUFFIXES = frozenset({".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".go", ".rs"})


def _tagged(values: dict[str, tuple[int, str]], language: str | None, analyzer: str | None) -> dict[str, Measure]:
    return {k: Measure(value=v, unit=u, language=language, analyzer=analyzer) for k, (v, u) in values.items()}


def collect_cyclomatic(inp: CollectorInput) -> Mapping[str, Measure]:
    language, analyzer, reason, delta = _complexity(inp)
    if delta is None:
        return {k: Measure(value=None, unit=m.unit, status="unknown", reason=reason, language=language,
                           analyzer=analyzer) for k, m in CYCLOMATIC.unknown(reason or "").items()}
    return _tagged({"cyclomatic_added": (delta.cyclomatic_added, "points"),
                    "functions_added": (delta.functions_added, "functions"),
                    "source_files_added": (delta.source_files_added, "files")}, language, analyzer)


def collect_cognitive(inp: CollectorInput) -> Mapping[str, Measure]:
    language, analyzer, reason, delta = _complexity(inp)
    if delta is None:
        return {k: Measure(value=None, unit=m.unit, status="unknown", reason=reason, language=language,
                           analyzer=analyzer) for k, m in COGNITIVE.unknown(reason or "").items()}
    return _tagged({"cognitive_added": (delta.cognitive_added, "points"),
                    "functions_over_cognitive_15": (delta.functions_over_cognitive_15, "functions")},
                   language, analyzer)


def check_complexity(inp: ReadinessInput) -> Readiness:
    """Ready when the starting source has analyzed source in languages whose analyzer is
    installed; not_configured without such source; broken when an analyzer is missing."""
    from ._complexity_scan import analyzer_status, language_of

    present = sorted({lang for p in source_files(inp.starting_source, _SUFFIXES) if (lang := language_of(p)) is not None})
    if not present:
        return Readiness("not_configured", "no Python, JavaScript, TypeScript, Go or Rust source to analyze")
    versions = []
    for language in present:
        analyzer, reason = analyzer_status(language)
        if analyzer is None:
            return Readiness("broken", reason)
        versions.append(analyzer)
    return Readiness("ready", None, ", ".join(sorted(set(versions))))


_COMPLEXITY_OBSERVER = ("pluginbench.measures._complexity", "pluginbench.measures._complexity_child",
                        "pluginbench.measures._complexity_scan")

CYCLOMATIC = register(MeasureSpec(
    name="cyclomatic",
    description=("Net cyclomatic complexity the submission adds to source code, and the functions and source "
                 "files it adds (rust-code-analysis for Python/JS/TS/Rust, lizard for Go)."),
    columns=(
        Column("cyclomatic_added", "points", "cyc +", "Net cyclomatic complexity added to source code.",
               "Net cyclomatic complexity added", better="lower"),
        Column("functions_added", "functions", "fn +", "Functions the submission adds to source code.",
               "Functions added"),
        Column("source_files_added", "files", "files +", "Analyzed source files the submission adds.",
               "Source files added", table=False),
    ),
    observer_version="1",
    languages=("python", "javascript", "typescript", "go", "rust"),
    collect=collect_cyclomatic,
    reference=True,
    check=check_complexity,
    observer_modules=_COMPLEXITY_OBSERVER,
))

COGNITIVE = register(MeasureSpec(
    name="cognitive",
    description=("Net cognitive complexity the submission adds to source code, and its new or grown functions "
                 "with a cognitive score above 15."),
    columns=(
        Column("cognitive_added", "points", "cog +", "Net cognitive complexity added to source code.",
               "Net cognitive complexity added", better="lower"),
        Column("functions_over_cognitive_15", "functions", "cog>15",
               "New or grown functions with a cognitive score above 15.", "Functions over cognitive 15",
               better="lower"),
    ),
    observer_version="1",
    languages=("python", "javascript", "typescript", "go", "rust"),
    collect=collect_cognitive,
    reference=True,
    check=check_complexity,
    observer_modules=_COMPLEXITY_OBSERVER,
))

# ------------------------------------------------------------------ dead code

_STARTING_LOCK = threading.Lock()
_STARTING_SCANS: dict[tuple[str, str], Any] = {}


def _starting(starting: Path, analyzer: str, scan: Callable[[], Any]) -> Any:
    """The starting source's scan by ``analyzer``, once per task and process (the starting
    source is frozen, so its scan cannot change)."""
    key = (str(starting.resolve()), analyzer)
    with _STARTING_LOCK:
        if key in _STARTING_SCANS:
            return _STARTING_SCANS[key]
    got = scan()
    with _STARTING_LOCK:
        _STARTING_SCANS[key] = got
    return got


def collect_dead_code(inp: CollectorInput) -> Mapping[str, Measure]:
    """Unused-code candidates (Vulture for Python, knip for JS/TS) and JS/TS duplicate-code
    groups (jscpd) the submission introduces since the starting scan."""
    from ._complexity_scan import language_of

    before_paths, after_paths = changed_paths(inp.patch)
    changed = {p for p in before_paths | after_paths if language_of(p)}
    languages = {language_of(p) for p in changed} - {None}
    js_repo = any(language_of(p) in _JS for p in source_files(inp.starting_source, _SUFFIXES)) or bool(languages & _JS)
    out = dict(_unused_candidates(inp, languages, before_paths | after_paths))
    if not js_repo:
        out["duplicate_groups_added"] = Measure(
            value=None, unit="groups", status="not_applicable",
            reason="duplicate-code groups are measured for JavaScript/TypeScript source (jscpd); the task has none")
    else:
        out["duplicate_groups_added"] = _duplicate_groups(inp, bool(languages & _JS))
    return out


_JS = frozenset({"javascript", "typescript"})


def _unused_candidates(inp: CollectorInput, languages: set[str | None], touched: set[str]) -> dict[str, Measure]:
    from ._deadcode import introduced
    from ._deadcode_scan import run_vulture, vulture_status

    unit = "candidates"
    groups = [g for g in ({"python"}, _JS, {"rust"}, {"go"}) if languages & g]
    if len(groups) > 1:
        return {"dead_code_candidates_added": Measure(
            value=None, unit=unit, status="unknown",
            reason=f"the submission changes {' and '.join(sorted(str(x) for x in languages))} source: candidates "
                   "of different analyzers are not pooled")}
    if languages & _JS:
        return {"dead_code_candidates_added": _knip_candidates(inp, touched)}
    if "rust" in languages:
        return {"dead_code_candidates_added": _checker_candidates(inp, _CARGO)}
    if "go" in languages:
        return {"dead_code_candidates_added": _checker_candidates(inp, _STATICCHECK)}
    analyzer, reason = vulture_status()
    if analyzer is None:
        return {"dead_code_candidates_added": Measure(value=None, unit=unit, status="unknown", reason=reason)}
    if not any(p.endswith(".py") for p in touched):
        # Vulture's findings depend only on Python files: none changed, none introduced
        return {"dead_code_candidates_added": Measure(value=0, unit=unit, language="python", analyzer=analyzer)}
    work = inp.work_dir.parent / "dead-code-tree"
    try:
        # Vulture only parses: it runs on the host, on a private copy holding no symlink
        before = _starting(inp.starting_source, "vulture",
                           lambda: _vulture_copy(inp.starting_source, inp.work_dir.parent))
        after = run_vulture(submission_tree(inp.starting_source, inp.patch, work))
    except (PatchDoesNotApply, AnalyzerFailed) as exc:
        return {"dead_code_candidates_added": Measure(value=None, unit=unit, status="unknown", reason=str(exc))}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    unreadable = [p for p in after.unreadable if p in touched]
    if unreadable:
        return {"dead_code_candidates_added": Measure(
            value=None, unit=unit, status="unknown", reason=f"Vulture could not parse {unreadable[0]} after the patch")}
    new = introduced(before.candidates, after.candidates)
    _evidence(inp, "introduced.txt", [f"{c.path}:{c.line}: {c.message}" for c in new])
    return {"dead_code_candidates_added": Measure(value=len(new), unit=unit, language="python", analyzer=analyzer)}


def _knip_candidates(inp: CollectorInput, touched: set[str]) -> Measure:
    from ._complexity_scan import language_of
    from ._deadcode import introduced
    from ._js_analyzers import run_knip, tool_status

    unit = "candidates"
    analyzer, reason = tool_status("knip")
    if analyzer is None:
        return Measure(value=None, unit=unit, status="unknown", reason=reason)
    if not (inp.starting_source / "package.json").is_file():
        return Measure(value=None, unit=unit, status="unknown",
                       reason="knip needs the repository's package.json; the starting source has none")
    language = "typescript" if any(language_of(p) == "typescript" for p in touched) else "javascript"
    try:
        before = _starting(inp.starting_source, "knip", lambda: run_knip(inp.open_task_sandbox, ""))
        after = run_knip(inp.open_task_sandbox, inp.patch, starting=inp.starting_source)
    except (PatchDoesNotApply, AnalyzerFailed) as exc:
        return Measure(value=None, unit=unit, status="unknown", reason=str(exc), language=language, analyzer=analyzer)
    unresolved = [u for u in after.unresolved if u not in before.unresolved]
    if unresolved:
        f, name = unresolved[0]
        return Measure(value=None, unit=unit, status="unknown", language=language, analyzer=analyzer,
                       reason=f"knip could not resolve the import '{name}' in {f}, so it cannot tell which "
                              "exports are used")
    new = introduced(before.candidates, after.candidates)
    _evidence(inp, "introduced.txt", [f"{c.path}:{c.line}: {c.message}" for c in new])
    return Measure(value=len(new), unit=unit, language=language, analyzer=analyzer)


class _BuildChecker(msgspec.Struct, frozen=True, kw_only=True):
    """A compiled language's unused-code checker: it needs the build manifest at the
    repository root and runs in a fresh sandbox of the frozen task (it loads or executes
    repository code: ``build.rs``, ``go list``)."""

    language: str
    key: str  # the starting-scan cache key
    manifest: str
    tool: str  # as named in messages
    status: str  # the ``_deadcode_scan`` function: () -> (analyzer, reason)
    run: str  # the ``_deadcode_scan`` function: (open_task_sandbox, patch) -> scan


def _checker_candidates(inp: CollectorInput, checker: _BuildChecker) -> Measure:
    from . import _deadcode_scan
    from ._deadcode import introduced

    status: Callable[[], tuple[str | None, str | None]] = getattr(_deadcode_scan, checker.status)
    run: Callable[[Any, str], Any] = getattr(_deadcode_scan, checker.run)
    unit = "candidates"
    analyzer, reason = status()
    if analyzer is None:
        return Measure(value=None, unit=unit, status="unknown", reason=reason)
    if not (inp.starting_source / checker.manifest).is_file():
        return Measure(value=None, unit=unit, status="unknown",
                       reason=f"{checker.tool} needs the repository's {checker.manifest} at its root; "
                              "the starting source has none")
    try:
        before = _starting(inp.starting_source, checker.key, lambda: run(inp.open_task_sandbox, ""))
        after = run(inp.open_task_sandbox, inp.patch)
    except (PatchDoesNotApply, AnalyzerFailed) as exc:
        return Measure(value=None, unit=unit, status="unknown", reason=str(exc),
                       language=checker.language, analyzer=analyzer)
    new = introduced(before.candidates, after.candidates)
    _evidence(inp, "introduced.txt", [f"{c.path}:{c.line}: {c.message}" for c in new])
    return Measure(value=len(new), unit=unit, language=checker.language, analyzer=analyzer)


_CARGO = _BuildChecker(language="rust", key="cargo", tool="cargo check", manifest="Cargo.toml", status="cargo_status",
                       run="run_cargo_check")
_STATICCHECK = _BuildChecker(language="go", key="staticcheck", tool="staticcheck", manifest="go.mod",
                             status="staticcheck_status", run="run_staticcheck")


def _vulture_copy(starting: Path, scratch: Path) -> object:
    """Vulture on a private copy of the starting source (no symlink, nothing outside it)."""
    from ._deadcode_scan import run_vulture

    work = scratch / "dead-code-start"
    try:
        return run_vulture(submission_tree(starting, "", work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _duplicate_groups(inp: CollectorInput, js_changed: bool) -> Measure:
    from ._deadcode import introduced_groups
    from ._js_analyzers import run_jscpd, tool_status

    unit = "groups"
    analyzer, reason = tool_status("jscpd")
    if analyzer is None:
        return Measure(value=None, unit=unit, status="unknown", reason=reason)
    if not js_changed:
        # jscpd's JS/TS groups depend only on JS/TS files: none changed, none introduced
        return Measure(value=0, unit=unit, language="javascript/typescript", analyzer=analyzer)
    try:
        before = _starting(inp.starting_source, "jscpd", lambda: run_jscpd(inp.open_task_sandbox, ""))
        after = run_jscpd(inp.open_task_sandbox, inp.patch, starting=inp.starting_source)
    except (PatchDoesNotApply, AnalyzerFailed) as exc:
        return Measure(value=None, unit=unit, status="unknown", reason=str(exc))
    new = introduced_groups(before, after)
    _evidence(inp, "duplicate-groups.txt", [g[:200] for g in new])
    return Measure(value=len(new), unit=unit, language="javascript/typescript", analyzer=analyzer)


def _evidence(inp: CollectorInput, name: str, lines: list[str]) -> None:
    inp.work_dir.mkdir(parents=True, exist_ok=True)
    (inp.work_dir / name).write_text("".join(f"{line}\n" for line in lines))


def check_dead_code(inp: ReadinessInput) -> Readiness:
    from ._complexity_scan import language_of
    from ._deadcode_scan import cargo_status, staticcheck_status, vulture_status
    from ._js_analyzers import tool_status

    present = {language_of(p) for p in source_files(inp.starting_source, _SUFFIXES)} - {None}
    if not present & ({"python", "rust", "go"} | _JS):
        return Readiness("not_configured", "dead code is analyzed for Python (Vulture), JavaScript/TypeScript "
                                           "(knip, jscpd), Rust (cargo check) and Go (staticcheck) source")
    versions = []
    if "python" in present:
        analyzer, reason = vulture_status()
        if analyzer is None:
            return Readiness("broken", reason)
        versions.append(analyzer)
    if present & _JS:
        for tool in ("knip", "jscpd"):
            analyzer, reason = tool_status(tool)
            if analyzer is None:
                return Readiness("broken", reason)
            versions.append(analyzer)
        if not (inp.starting_source / "package.json").is_file():
            return Readiness("broken", "knip needs the repository's package.json; the starting source has none")
    if "rust" in present:
        analyzer, reason = cargo_status()
        if analyzer is None:
            return Readiness("broken", reason)
        if not (inp.starting_source / "Cargo.toml").is_file():
            return Readiness("broken", "cargo check needs the repository's Cargo.toml at its root")
        versions.append(analyzer)
    if "go" in present:
        analyzer, reason = staticcheck_status()
        if analyzer is None:
            return Readiness("broken", reason)
        if not (inp.starting_source / "go.mod").is_file():
            return Readiness("broken", "staticcheck needs the repository's go.mod at its root")
        versions.append(analyzer)
    return Readiness("ready", None, ", ".join(versions))


DEAD_CODE = register(MeasureSpec(
    name="dead_code",
    description=("Unused-code candidates the submission introduces since the starting scan (Vulture 2.16 for "
                 "Python, knip for JavaScript/TypeScript, rustc's lints for Rust, staticcheck for Go) and JS/TS duplicate-code "
                 "groups (jscpd)."),
    columns=(
        Column("dead_code_candidates_added", "candidates", "unused +",
               "Unused-code candidates introduced since the starting scan.", "Unused-code candidates added",
               better="lower"),
        Column("duplicate_groups_added", "groups", "dup +",
               "JavaScript/TypeScript duplicate-code groups introduced since the starting scan.",
               "Duplicate-code groups added", better="lower"),
    ),
    # 2: configured by the starting source only: Vulture reads no pyproject.toml; knip and jscpd see
    # the starting source's configuration files, .gitignore files and package.json keys
    observer_version="2",
    languages=("python", "javascript", "typescript", "rust", "go"),
    collect=collect_dead_code,
    reference=True,
    check=check_dead_code,
    observer_modules=("pluginbench.measures._deadcode", "pluginbench.measures._deadcode_scan",
                      "pluginbench.measures._js_analyzers"),
))
