"""Running the pinned JavaScript/TypeScript analyzers (the I/O edge of JS/TS dead code).

* knip 6.44.2 (npm): unused files, exports, types and members of a project with a
  ``package.json``; run offline on the copy, with no dependency installed (the analysis does
  not download project dependencies).
* jscpd 5.3.2 (npm): duplicate-code groups among JavaScript/TypeScript files, with its
  default thresholds (50 tokens, 5 lines).

Both come from ``tools/install-analyzers.sh`` (run by ``tools/setup.sh --dev``) into the
project-local ``.tools/analyzers``; a binary on ``PATH`` at the pinned version is used too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import AnalyzerFailed
from ._deadcode import KnipScan, duplicate_groups, parse_knip

PINNED = {"knip": "6.44.2", "jscpd": "5.3.2"}
_ROOT = Path(__file__).resolve().parents[2]


def _binary(name: str) -> Path | None:
    local = _ROOT / ".tools" / "analyzers" / "node_modules" / ".bin" / name
    if local.is_file():
        return local
    found = shutil.which(name)
    return Path(found) if found else None


def tool_status(name: str) -> tuple[str | None, str | None]:
    """(``"knip 6.44.2"``, None) when the pinned tool answers, else (None, why)."""
    path = _binary(name)
    if path is None:
        return None, f"{name} {PINNED[name]} is not installed (tools/install-analyzers.sh)"
    try:
        proc = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60, check=False,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{name} does not run: {exc}"
    version = proc.stdout.strip().split()[-1] if proc.stdout.strip() else ""
    if version != PINNED[name]:
        return None, f"{name} {version or '?'} answers but {PINNED[name]} is pinned"
    return f"{name} {version}", None


def run_knip(root: Path, timeout: float = 300.0) -> KnipScan:
    """knip's unused-code candidates of the project at ``root`` (needs its package.json)."""
    path = _binary("knip")
    if path is None:
        raise AnalyzerFailed(tool_status("knip")[1] or "knip is not installed")
    proc = subprocess.run([str(path), "--reporter", "json", "--no-progress", "--no-config-hints"], cwd=root,
                          capture_output=True, text=True, check=False, timeout=timeout,
                          stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AnalyzerFailed(f"knip exited {proc.returncode} without a report: "
                             f"{(proc.stderr or proc.stdout).strip()[:300]}") from None
    return parse_knip(report)


def run_jscpd(root: Path, timeout: float = 300.0) -> set[str]:
    """jscpd's duplicate-code groups among the JS/TS files under ``root``."""
    path = _binary("jscpd")
    if path is None:
        raise AnalyzerFailed(tool_status("jscpd")[1] or "jscpd is not installed")
    with tempfile.TemporaryDirectory(prefix="pb-jscpd-") as out:
        proc = subprocess.run([str(path), "--silent", "--reporters", "json", "--output", out, "--format",
                               "javascript,typescript,jsx,tsx", "--ignore", "**/node_modules/**,**/.git/**", "."],
                              cwd=root, capture_output=True, text=True, check=False, timeout=timeout,
                              stdin=subprocess.DEVNULL, start_new_session=True)
        report_file = Path(out) / "jscpd-report.json"
        if not report_file.is_file():
            if proc.returncode == 1 and "analyzes no files" in (proc.stderr + proc.stdout):
                return set()
            raise AnalyzerFailed(f"jscpd exited {proc.returncode} without a report: {proc.stderr.strip()[:300]}")
        return duplicate_groups(json.loads(report_file.read_text()))
