"""Running the pinned unused-code analyzers (the I/O edge of dead code).

* Python: Vulture 2.16 (PyPI, pinned as the product description pins it), run as
  ``python -m vulture <root> --min-confidence 60`` with the interpreter PluginBench runs
  on, over the whole tree so tests count as users.
* Go: staticcheck's U1000 check (Debian's go-staticcheck 2023.1 with Debian's Go), offline.
* Rust: rustc's own ``dead_code`` and ``unused_*`` lints, from ``cargo check --offline``
  (the library and binaries, as shipped) with the host's Cargo.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import AnalyzerFailed
from ._deadcode import DeadCodeScan, parse_cargo_messages, parse_staticcheck, parse_vulture

VULTURE_VERSION = "2.16"
MIN_CONFIDENCE = 60




def vulture_status() -> tuple[str | None, str | None]:
    """(``"vulture 2.16"``, None) when the pinned Vulture is installed, else (None, why)."""
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
    proc = subprocess.run([sys.executable, "-m", "vulture", ".", "--min-confidence", str(MIN_CONFIDENCE),
                           "--exclude", ".git,node_modules,.venv,venv,__pycache__"],
                          cwd=root, capture_output=True, text=True, check=False, timeout=timeout,
                          stdin=subprocess.DEVNULL, start_new_session=True)
    # 0: nothing unused, 3: unused code found, 1: some input was invalid (reported per file)
    if proc.returncode not in (0, 1, 3):
        raise AnalyzerFailed(f"vulture exited {proc.returncode}: {proc.stderr.strip()[:300]}")
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


def run_cargo_check(root: Path, target_dir: Path, timeout: float = 600.0) -> DeadCodeScan:
    """rustc's ``dead_code`` and ``unused_*`` warnings of the crate at ``root`` from an
    offline ``cargo check`` (no dependency is downloaded; a crate that needs one fails)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise AnalyzerFailed(cargo_status()[1] or "cargo is not on PATH")
    proc = subprocess.run([cargo, "check", "--offline", "--message-format=json", "--quiet"],
                          cwd=root, capture_output=True, text=True, check=False, timeout=timeout,
                          stdin=subprocess.DEVNULL, start_new_session=True,
                          env={**os.environ, "CARGO_TARGET_DIR": str(target_dir), "CARGO_TERM_COLOR": "never"})
    found, errors = parse_cargo_messages(proc.stdout)
    if proc.returncode != 0 or errors:
        reason = errors[0] if errors else (proc.stderr.strip().splitlines() or ["no message"])[-1]
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


def run_staticcheck(root: Path, scratch: Path, timeout: float = 600.0) -> DeadCodeScan:
    """staticcheck's U1000 (unused code) findings of the Go module at ``root``, offline:
    ``GOPROXY=off`` and ``GOFLAGS=-mod=mod``, so a module whose dependencies are not already
    in the module cache fails instead of downloading them."""
    binary = staticcheck_binary()
    if binary is None:
        raise AnalyzerFailed(staticcheck_status()[1] or "staticcheck is not installed")
    env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOWORK": "off",
           "GOCACHE": str(scratch / "gocache"), "XDG_CACHE_HOME": str(scratch / "cache")}
    proc = subprocess.run([binary, "-f", "json", "-checks", "U1000", "./..."], cwd=root, capture_output=True,
                          text=True, check=False, timeout=timeout, stdin=subprocess.DEVNULL, start_new_session=True,
                          env=env)
    found, errors = parse_staticcheck(proc.stdout, root)
    if errors or (proc.returncode not in (0, 1)) or (proc.returncode == 1 and not found):
        reason = errors[0] if errors else (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise AnalyzerFailed(f"staticcheck could not load the packages: {reason[:300]}")
    return DeadCodeScan(tuple(found), ())
