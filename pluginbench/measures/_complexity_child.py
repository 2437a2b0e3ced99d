"""The complexity analyzers' own process: parse source texts, print their function scores.

:func:`pluginbench.measures._complexity_scan.scan_texts` runs this file by its path, as a
script (:func:`pluginbench.measures._tree.bounded_python`: isolated, its memory bounded),
with a deadline: the analyzers' time and memory are not linear in a file's size (1.2 MB of
arrow functions took 2.8 GB), so they never run inside PluginBench's own process. It imports
nothing of PluginBench's (starting the measures package would cost a tenth of a second per
scan), only the two analyzers, and only the one a language needs.

Input on stdin: a JSON object ``key → [language, path, text]``. Output on stdout: a JSON
object ``key → {"functions": [[names, cyclomatic, cognitive, outermost], ...], "error":
str | null}`` (with ``"out_of_memory": true`` when the error is the memory bound), where
``names`` is the function's qualified name as a list (outer first) and ``outermost`` says
it is not nested in another function. The parent qualifies the names and
builds its scores from them.
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: one function: (qualified name parts, cyclomatic sum, cognitive sum, outermost)
Row = tuple[list[str], int, int, bool]


def rca(path: str, text: str) -> list[Row]:
    """rust-code-analysis's function spaces (Python, JavaScript, TypeScript, Rust)."""
    from rust_code_analysis_python import compute_metrics

    root = compute_metrics(path, text, unit=False)
    found: list[Row] = []

    def walk(space: dict[str, Any], names: list[str], in_function: bool) -> None:
        for child in space.get("spaces") or []:
            kind = child.get("kind")
            qualified = [*names, str(child.get("name") or "<anonymous>")]
            if kind == "function":
                m = child["metrics"]
                found.append((qualified, int(m["cyclomatic"]["sum"]), int(m["cognitive"]["sum"]), not in_function))
                walk(child, qualified, True)
            else:
                walk(child, qualified, in_function)

    walk(root, [], False)
    return found


def lizard_go(path: str, text: str) -> list[Row]:
    """lizard's functions of a Go file, with its cognitive-complexity extension."""
    import lizard

    analyzer = lizard.FileAnalyzer(lizard.get_extensions(["cognitive"]))
    result = analyzer.analyze_source_code(path, text)
    found: list[Row] = []
    for f in result.function_list:
        receiver = f.long_name.split(")", 1)[0] + ")" if f.long_name.startswith("(") else ""
        found.append(([receiver + f.name], int(f.cyclomatic_complexity), int(f.cognitive_complexity), True))
    return found


def _out_of_memory(path: str) -> dict[str, Any]:
    return {"functions": [], "error": f"ran out of memory on {path}", "out_of_memory": True}


#: a failure after this process's address space came this close to its bound is the bound's:
#: a tenth of the bound, or 64 MiB (one failed allocation of the analyzer's can be that big),
#: whichever is more
NEAR_BOUND_SHARE = 0.1
NEAR_BOUND_BYTES = 64 * 1024 * 1024


def _near(peak: int, bound: int) -> bool:
    return bound - peak <= max(NEAR_BOUND_SHARE * bound, NEAR_BOUND_BYTES)


def address_space() -> tuple[int, int | None]:
    """This process's peak address space in bytes (``VmPeak``; 0 when unreadable) and its
    ``RLIMIT_AS`` bound (None: unbounded): the bound the parent sets is on exactly this."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    try:
        with open("/proc/self/status") as fh:
            peak = next((int(line.split()[1]) * 1024 for line in fh if line.startswith("VmPeak:")), 0)
    except (OSError, ValueError):
        peak = 0
    return peak, None if soft == resource.RLIM_INFINITY else soft


def score(language: str, path: str, text: str) -> dict[str, Any]:
    """One file's rows, or the analyzer's failure as ``error`` (a Rust panic included).

    A failure is out of memory when it is a MemoryError, when the analyzer's binding
    wrapped one (rust-code-analysis: ``ValueError("MemoryError: ")``, met building its
    result), or when it came as this file's parse took the address space near its bound
    (:func:`_near`; a pyo3 panic, "Python API call failed", is how a failed allocation
    inside the binding surfaces)."""
    before = address_space()[0]
    try:
        rows = lizard_go(path, text) if language == "go" else rca(path, text)
    except MemoryError:  # past the memory bound: the parent names the bound; the other files keep their values
        return _out_of_memory(path)
    except BaseException as exc:  # noqa: BLE001 - an analyzer failure is an unknown value, with its reason
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        peak, bound = address_space()
        if str(exc).startswith("MemoryError") or (bound is not None and _near(peak, bound) and not _near(before, bound)):
            return _out_of_memory(path)
        # a Rust panic surfaces as pyo3's PanicException, a BaseException
        verb = "failed" if isinstance(exc, Exception) else "panicked"
        return {"functions": [], "error": f"{verb} on {path}: {exc}"}
    return {"functions": [list(r) for r in rows], "error": None}


def main() -> None:
    files = json.loads(sys.stdin.buffer.read())
    sys.stdout.write(json.dumps({key: score(language, path, text) for key, (language, path, text) in files.items()}))


if __name__ == "__main__":
    main()
