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

The analyzers parse in their own process (:mod:`._complexity_child`, :func:`scan_texts`)
with a deadline: their time is not linear in a file's size (rust-code-analysis is quadratic
in nesting depth: 80 KB of nested parentheses took four minutes), so a file past
:data:`SCAN_SECONDS` leaves the scan unknown instead of stalling the measurement.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ._complexity import FileScan, FunctionScore, qualify
from ._lines import is_test_path
from ._tree import bounded_python, read_inside

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


#: the longest the scan of one tree's changed files may take, all files together
SCAN_SECONDS = 120.0
#: the most memory (address space) the analyzers' process may take
SCAN_MEMORY_BYTES = 2 * 1024 ** 3


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


#: the analyzers' own process, run as a script by its path (it imports nothing of PluginBench's)
_CHILD = Path(__file__).with_name("_complexity_child.py")


def scan_texts(texts: dict[str, str], timeout: float = SCAN_SECONDS) -> dict[str, FileScan]:
    """The :class:`FileScan` of each ``path → text``. A language whose pinned analyzer is not
    installed gets that reason; the others are parsed in one child interpreter
    (:mod:`._complexity_child` by :func:`~._tree.bounded_python`, from ``/``, its memory
    bounded at :data:`SCAN_MEMORY_BYTES`), killed at
    ``timeout``, after which (or when it dies) every file it had gets an error naming why,
    and the values are unknown."""
    out: dict[str, FileScan] = {}
    todo: dict[str, tuple[str, str, str]] = {}  # path -> (language, analyzer, text)
    for rel, text in texts.items():
        language = LANGUAGES[Path(rel).suffix]
        analyzer, reason = analyzer_status(language)
        if analyzer is None:
            out[rel] = FileScan(rel, language, ANALYZER_NAME[ANALYZER_PACKAGE[language]], (), reason)
        else:
            todo[rel] = (language, analyzer, text)
    if not todo:
        return out

    def failed(why: str) -> dict[str, FileScan]:
        return {**out, **{rel: FileScan(rel, lang, analyzer, (), why) for rel, (lang, analyzer, _) in todo.items()}}

    request = {str(i): [lang, rel, text] for i, (rel, (lang, _, text)) in enumerate(todo.items())}
    try:
        done = subprocess.run(bounded_python(SCAN_MEMORY_BYTES, str(_CHILD)), input=json.dumps(request).encode(),
                              capture_output=True, timeout=timeout, check=False, cwd="/", start_new_session=True)
    except subprocess.TimeoutExpired:
        return failed(f"the complexity analyzers did not finish within {timeout:g} s (their time grows "
                      "faster than a file's size)")
    except OSError as exc:
        return failed(f"the complexity analyzers could not start: {exc}")
    try:
        answers = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        answers = None
    if not isinstance(answers, dict):
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return failed(f"the complexity analyzers failed ({tail[0][:200]}; their memory bound is "
                      f"{SCAN_MEMORY_BYTES // 1024 ** 2} MiB)")
    for i, (rel, (language, analyzer, _)) in enumerate(todo.items()):
        got = answers.get(str(i)) or {"functions": [], "error": "no answer"}
        if got["error"] is not None:
            bound = f" (their memory bound is {SCAN_MEMORY_BYTES // 1024 ** 2} MiB)" if got.get("out_of_memory") else ""
            out[rel] = FileScan(rel, language, analyzer, (), f"{analyzer} {got['error']}{bound}")
            continue
        rows = got["functions"]
        names = qualify(tuple(r[0]) for r in rows)
        out[rel] = FileScan(rel, language, analyzer, tuple(
            FunctionScore(rel, n, int(r[1]), int(r[2]), bool(r[3])) for n, r in zip(names, rows, strict=True)))
    return out
