"""Running the pinned unused-code analyzers (the I/O edge of dead code).

* Python: Vulture 2.16 (PyPI, pinned as the product description pins it), run as
  ``python -m vulture <root> --min-confidence 60`` with the interpreter PluginBench runs
  on, over the whole tree so tests count as users.
  Vulture only parses (``ast``), so it runs on the host, on a private copy that holds no
  symlink (:func:`~._tree.submission_tree`), in isolated mode (``-I``: neither the tree nor
  ``PYTHONPATH`` is on its import path, so no module of the submission can stand in for
  Vulture's or the standard library's), with no configuration file (``--config`` names
  ``/dev/null``: a ``pyproject.toml`` of the submission's cannot tell it what to ignore) and
  with its memory bounded (:data:`VULTURE_MEMORY_BYTES`).
* Go: staticcheck's U1000 check (Debian's go-staticcheck 2023.1 with Debian's Go), offline.
* Rust: rustc's own ``dead_code`` and ``unused_*`` lints, from ``cargo check --offline``
  (the library and binaries, as shipped) with the host's Cargo.

staticcheck and ``cargo check`` load or execute repository code (``go list``, ``build.rs``,
proc macros), so they run in a fresh sandbox of the frozen task (:mod:`._sandboxed`),
never on the host.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from ..errors import AnalyzerFailed
from ._deadcode import DeadCodeScan, parse_cargo_messages, parse_staticcheck, parse_vulture
from ._sandboxed import TMP, not_found, run_sandboxed
from ._tree import bounded_python

OpenSandbox = Callable[..., AbstractAsyncContextManager[Any]]
#: the system tool folders a sandboxed analyzer searches (the environment's own PATH is the host's)
_SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/go/bin", "/usr/lib/go/bin")

VULTURE_VERSION = "2.16"
MIN_CONFIDENCE = 60
#: the most memory (address space) Vulture's process may take
VULTURE_MEMORY_BYTES = 2 * 1024 ** 3




def vulture_status() -> tuple[str | None, str | None]:
    """(``"vulture 2.16"``, None) when the pinned Vulture is installed, else (None, why)."""
    import importlib.metadata  # on first use: its email/socket imports cost every run otherwise

    try:
        version = importlib.metadata.version("vulture")
    except importlib.metadata.PackageNotFoundError:
        return None, f"Vulture is not installed: pip install vulture=={VULTURE_VERSION} (tools/setup.sh --dev)"
    if version != VULTURE_VERSION:
        return None, f"Vulture {version} is installed but {VULTURE_VERSION} is pinned"
    return f"vulture {version}", None


def run_vulture(root: Path, timeout: float = 300.0) -> DeadCodeScan:
    """Vulture's candidates under ``root`` (paths relative to it)."""
    if not any(root.rglob("*.py")):
        return DeadCodeScan((), ())
    # isolated: `python -m` would put the working folder (the submission) first on the import
    # path; bounded: Vulture's memory is not linear in a file's size (6 MB took 4.2 GB)
    proc = subprocess.run(bounded_python(VULTURE_MEMORY_BYTES, "vulture", ".", "--config", os.devnull,
                                         "--min-confidence", str(MIN_CONFIDENCE),
                                         "--exclude", ".git,node_modules,.venv,venv,__pycache__", module=True),
                          cwd=root, capture_output=True, text=True, check=False, timeout=timeout,
                          stdin=subprocess.DEVNULL, start_new_session=True)
    # 0: nothing unused, 3: unused code found, 1: some input was invalid (reported per file)
    if proc.returncode not in (0, 1, 3):
        raise AnalyzerFailed(f"vulture exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    if "Traceback (most recent call last)" in proc.stderr:  # a crash (MemoryError past the bound), not bad input
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise AnalyzerFailed(f"vulture failed: {last[:300]} (its memory bound is {VULTURE_MEMORY_BYTES // 1024 ** 2} MiB)")
    return parse_vulture(proc.stdout, proc.stderr)


# ------------------------------------------------------------------ Rust


def cargo_status() -> tuple[str | None, str | None]:
    """(``"cargo 1.95.0"``, None) when ``cargo`` answers on PATH, else (None, why)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return None, "cargo is not on PATH (Rust unused-code analysis uses the rustc dead_code/unused lints)"
    try:
        proc = subprocess.run([cargo, "--version"], capture_output=True, text=True, timeout=60, check=False,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"cargo does not run: {exc}"
    words = proc.stdout.split()
    return (f"cargo {words[1]}", None) if len(words) >= 2 else (None, "cargo --version printed nothing")


def cargo_toolchain() -> Path | None:
    """The folder of the real ``cargo`` and ``rustc`` behind ``cargo`` on PATH (rustup's proxy
    resolved with ``rustup which``, run from ``/`` so no repository's toolchain file counts)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return None
    real = Path(os.path.realpath(cargo))
    if real.name == "rustup":
        try:
            proc = subprocess.run([str(real), "which", "cargo"], capture_output=True, text=True, timeout=60,
                                  check=False, cwd="/", stdin=subprocess.DEVNULL, start_new_session=True)
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode != 0 or not proc.stdout.strip():
            return None
        real = Path(os.path.realpath(proc.stdout.strip()))
    return real.parent


def run_cargo_check(open_sandbox: OpenSandbox | None, patch: str, timeout: float = 600.0) -> DeadCodeScan:
    """rustc's ``dead_code`` and ``unused_*`` warnings of the crate at the repository root from
    an offline ``cargo check`` in a fresh sandbox (it runs ``build.rs`` and proc macros; no
    dependency is downloaded, so a crate that needs one fails). The host's toolchain is bound
    read-only on the local backend; on docker the frozen image's ``cargo`` runs."""
    toolchain = cargo_toolchain()
    search = ([str(toolchain)] if toolchain is not None else []) + ["/usr/local/cargo/bin", *_SYSTEM_PATH]
    env = {"PATH": ":".join(search), "CARGO_TARGET_DIR": f"{TMP}/cargo-target", "CARGO_HOME": f"{TMP}/cargo-home",
           "CARGO_TERM_COLOR": "never"}
    run = run_sandboxed(open_sandbox, patch, ["cargo", "check", "--offline", "--message-format=json", "--quiet"],
                        tool="cargo check", env=env, timeout=timeout,
                        readonly=(toolchain.parent,) if toolchain is not None else ())
    if not_found(run):
        raise AnalyzerFailed("cargo is not in the analysis sandbox (the frozen task image must carry Rust/Cargo)")
    found, errors = parse_cargo_messages(run.stdout)
    if run.exit_code != 0 or errors:
        reason = errors[0] if errors else (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise AnalyzerFailed(f"cargo check --offline failed: {reason[:300]}")
    return DeadCodeScan(tuple(found), ())


# ------------------------------------------------------------------ Go


def staticcheck_binary() -> str | None:
    """Debian's ``go-staticcheck`` (package go-staticcheck), else ``staticcheck`` on PATH."""
    return shutil.which("go-staticcheck") or shutil.which("staticcheck")


def staticcheck_status() -> tuple[str | None, str | None]:
    """(``"staticcheck 2023.1"``, None) when staticcheck and ``go`` answer, else (None, why)."""
    binary = staticcheck_binary()
    if binary is None or shutil.which("go") is None:
        return None, ("Go unused-code analysis needs staticcheck and a Go toolchain: apt-get install go-staticcheck "
                      "golang-go (tools/setup.sh --dev)")
    try:
        proc = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=60, check=False,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"staticcheck does not run: {exc}"
    words = proc.stdout.split()
    return (f"staticcheck {words[1]}", None) if len(words) >= 2 else (None, "staticcheck -version printed nothing")


def run_staticcheck(open_sandbox: OpenSandbox | None, patch: str, timeout: float = 600.0) -> DeadCodeScan:
    """staticcheck's U1000 (unused code) findings of the Go module at the repository root, in a
    fresh sandbox (loading the packages runs ``go list``), offline: ``GOPROXY=off`` and
    ``GOFLAGS=-mod=mod``, so a module whose dependencies are not already in the module cache
    fails instead of downloading them."""
    binary = staticcheck_binary()
    if binary is None:
        raise AnalyzerFailed(staticcheck_status()[1] or "staticcheck is not installed")
    env = {"PATH": ":".join(_SYSTEM_PATH), "GOPROXY": "off", "GOFLAGS": "-mod=mod -buildvcs=false",
           "GOTOOLCHAIN": "local", "GOWORK": "off", "GOCACHE": f"{TMP}/gocache", "XDG_CACHE_HOME": f"{TMP}/cache"}
    run = run_sandboxed(open_sandbox, patch, [Path(binary).name, "-f", "json", "-checks", "U1000", "./..."],
                        tool="staticcheck", env=env, timeout=timeout)
    if not_found(run):
        raise AnalyzerFailed("staticcheck or go is not in the analysis sandbox (the frozen task image must carry them)")
    found, errors = parse_staticcheck(run.stdout, Path(run.app))
    if errors or (run.exit_code not in (0, 1)) or (run.exit_code == 1 and not found):
        reason = errors[0] if errors else (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise AnalyzerFailed(f"staticcheck could not load the packages: {reason[:300]}")
    return DeadCodeScan(tuple(found), ())
