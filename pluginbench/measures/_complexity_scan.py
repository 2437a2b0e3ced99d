"""Running the pinned complexity analyzers on source files (the I/O edge of complexity).

* Python, JavaScript, TypeScript and Rust: Mozilla's rust-code-analysis (RCA), through its
  Python binding ``rust-code-analysis-python`` (PyPI, pinned in ``pyproject.toml``). Its
  function spaces (``kind == "function"``) are the population, with RCA's cyclomatic and
  cognitive sums.
* Go: ``lizard`` (PyPI, pinned) with its cognitive-complexity extension. The pinned Go
  analyzers of the product description (gocognit, gocyclo) come only from the Go module
  proxy, which this project's machines cannot reach; lizard is on PyPI, kept up (releases
  through 2026) and scores Go with the same cyclomatic and SonarSource cognitive rules.

A language whose analyzer is not installed is reported by :func:`analyzer_status`; the
collector then leaves its values unknown with that reason, never zero.

The analyzers parse in a child process (:func:`scan_paths`) with a deadline: their time is
not linear in a file's size (rust-code-analysis is quadratic in nesting depth: 80 KB of
nested parentheses took four minutes), so a file past :data:`SCAN_SECONDS` leaves the scan
unknown instead of stalling the measurement.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ._complexity import FileScan, FunctionScore, qualify
from ._lines import is_test_path
from ._tree import read_inside

LANGUAGES: dict[str, str] = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
    ".go": "go", ".rs": "rust",
}
#: the distribution that provides each language's analyzer
ANALYZER_PACKAGE = {"python": "rust-code-analysis-python", "javascript": "rust-code-analysis-python",
                    "typescript": "rust-code-analysis-python", "rust": "rust-code-analysis-python",
                    "go": "lizard"}
ANALYZER_NAME = {"rust-code-analysis-python": "rust-code-analysis", "lizard": "lizard"}
#: the versions pyproject.toml pins; another installed version is not used
PINNED = {"rust-code-analysis-python": "0.0.4", "lizard": "1.24.3"}


def language_of(path: str) -> str | None:
    """The analyzed language of a source file (test files and ``.d.ts`` excluded), or None."""
    if is_test_path(path) or path.endswith(".d.ts"):
        return None
    return LANGUAGES.get(Path(path).suffix)


def analyzer_status(language: str) -> tuple[str | None, str | None]:
    """(``"<analyzer> <version>"``, None) when the language's pinned analyzer is installed,
    else (None, the reason)."""
    import importlib.metadata  # on first use: its email/socket imports cost every run otherwise

    package = ANALYZER_PACKAGE[language]
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None, (f"the {language} complexity analyzer is not installed: pip install "
                      f"{package}=={PINNED[package]} (tools/setup.sh --dev installs it)")
    if version != PINNED[package]:
        return None, f"{package} {version} is installed but {PINNED[package]} is pinned"
    return f"{ANALYZER_NAME[package]} {version}", None


def scan_file(path: str, text: str) -> FileScan:
    """The function population of one source file (``path`` relative, for identity)."""
    language = LANGUAGES[Path(path).suffix]
    analyzer, reason = analyzer_status(language)
    if analyzer is None:
        return FileScan(path, language, ANALYZER_NAME[ANALYZER_PACKAGE[language]], (), reason)
    try:
        functions = _lizard(path, text) if language == "go" else _rca(path, text)
    except Exception as exc:  # noqa: BLE001 - an analyzer failure is an unknown value, with its reason
        return FileScan(path, language, analyzer, (), f"{analyzer} failed on {path}: {exc}")
    except BaseException as exc:  # a Rust panic surfaces as pyo3's PanicException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return FileScan(path, language, analyzer, (), f"{analyzer} panicked on {path}: {exc}")
    return FileScan(path, language, analyzer, tuple(functions))


def _rca(path: str, text: str) -> list[FunctionScore]:
    from rust_code_analysis_python import compute_metrics

    root = compute_metrics(path, text, unit=False)
    found: list[tuple[tuple[str, ...], int, int, bool]] = []

    def walk(space: dict[str, Any], names: tuple[str, ...], in_function: bool) -> None:
        for child in space.get("spaces") or []:
            kind = child.get("kind")
            qualified = (*names, str(child.get("name") or "<anonymous>"))
            if kind == "function":
                m = child["metrics"]
                found.append((qualified, int(m["cyclomatic"]["sum"]), int(m["cognitive"]["sum"]), not in_function))
                walk(child, qualified, True)
            else:
                walk(child, qualified, in_function)

    walk(root, (), False)
    names = qualify(q for q, *_ in found)
    return [FunctionScore(path, n, cyc, cog, outer) for n, (_, cyc, cog, outer) in zip(names, found, strict=True)]


def _lizard(path: str, text: str) -> list[FunctionScore]:
    import lizard

    analyzer = lizard.FileAnalyzer(lizard.get_extensions(["cognitive"]))
    result = analyzer.analyze_source_code(path, text)
    found = []
    for f in result.function_list:
        receiver = f.long_name.split(")", 1)[0] + ")" if f.long_name.startswith("(") else ""
        found.append(((receiver + f.name,), int(f.cyclomatic_complexity), int(f.cognitive_complexity)))
    names = qualify(q for q, *_ in found)
    return [FunctionScore(path, n, cyc, cog, True) for n, (_, cyc, cog) in zip(names, found, strict=True)]


#: the longest the scan of one tree's changed files may take, all files together
SCAN_SECONDS = 120.0


def scan_paths(root: Path, paths: set[str], timeout: float = SCAN_SECONDS) -> dict[str, FileScan]:
    """Scans of the analyzed source files among ``paths`` that exist under ``root`` (one tree
    of :func:`scan_trees`)."""
    return scan_trees([(root, paths)], timeout)[0]


def scan_trees(trees: list[tuple[Path, set[str]]], timeout: float = SCAN_SECONDS) -> list[dict[str, FileScan]]:
    """For each ``(root, paths)``: the scans of the analyzed source files among ``paths`` that
    exist under ``root``, all parsed in one child process (:func:`scan_texts`). Past
    ``timeout`` seconds, or when the child dies, every file's scan is an error naming why
    (the values are then unknown)."""
    texts: dict[str, str] = {}
    for i, (root, paths) in enumerate(trees):
        for rel in sorted(paths):
            if language_of(rel) is None:
                continue
            data = read_inside(root, rel)  # never through a symlink: a host file is not source
            if data is not None:
                texts[f"{i}/{rel}"] = data.decode("utf-8", errors="replace")
    scans = scan_texts(texts, timeout) if texts else {}
    out: list[dict[str, FileScan]] = [{} for _ in trees]
    for key, scan in scans.items():
        tree, rel = key.split("/", 1)
        out[int(tree)][rel] = scan._replace(path=rel, functions=tuple(f._replace(path=rel) for f in scan.functions))
    return out


def scan_texts(texts: dict[str, str], timeout: float = SCAN_SECONDS) -> dict[str, FileScan]:
    """:func:`scan_file` of each ``path → text``, run in a child interpreter (``-P``: no
    working folder on its import path; started from ``/``) that is killed at ``timeout``."""
    def failed(why: str) -> dict[str, FileScan]:
        out = {}
        for rel in texts:
            language = LANGUAGES[Path(rel).suffix]
            out[rel] = FileScan(rel, language, ANALYZER_NAME[ANALYZER_PACKAGE[language]], (), why)
        return out

    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", "from pluginbench.measures._complexity_scan import child_main; child_main()"],
            input=json.dumps(texts).encode(), capture_output=True, timeout=timeout, check=False, cwd="/",
            start_new_session=True)
    except subprocess.TimeoutExpired:
        return failed(f"the complexity analyzers did not finish within {timeout:g} s (their time grows "
                      "faster than a file's size)")
    except OSError as exc:
        return failed(f"the complexity analyzers could not start: {exc}")
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return failed(f"the complexity analyzers failed ({tail[0][:200]})")
    rows = json.loads(done.stdout)
    return {r[0]: FileScan(r[0], r[1], r[2], tuple(FunctionScore(*f) for f in r[3]), r[4]) for r in rows}


def child_main() -> None:
    """The child of :func:`scan_texts`: ``path → text`` as JSON on stdin, the scans as JSON
    rows on stdout."""
    texts = json.loads(sys.stdin.buffer.read())
    scans = [scan_file(rel, text) for rel, text in texts.items()]
    out = json.dumps([[s.path, s.language, s.analyzer, [list(f) for f in s.functions], s.error] for s in scans])
    sys.stdout.write(out)
