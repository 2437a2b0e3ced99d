"""Running the pinned JavaScript/TypeScript analyzers (the I/O edge of JS/TS dead code).

* knip 6.44.2 (npm): unused files, exports, types and members of a project with a
  ``package.json``; run offline on the copy, with no dependency installed (the analysis does
  not download project dependencies).
* jscpd 5.3.2 (npm): duplicate-code groups among JavaScript/TypeScript files, with its
  default thresholds (50 tokens, 5 lines).

Both come from ``tools/install-analyzers.sh`` (run by ``tools/setup.sh --dev``) into the
project-local ``.tools/analyzers``; a binary on ``PATH`` at the pinned version is used too.
Both load project configuration that can be code (``knip.config.js``), so they run in a
fresh sandbox of the frozen task with their install folder bound read-only
(:mod:`._sandboxed`), never on the host; ``--version`` alone runs on the host (no project
file is read).

What configures them comes from the frozen starting source, never from the submission
(:func:`analysis_patch`): a submission's changes to a root knip or jscpd configuration file,
to any ``.gitignore`` or ``.ignore``, or to a configuration script knip's plugins load from
a package's root folder (``jest.config.js``, ``.eslintrc.cjs``, ...; :data:`_PLUGIN_CONFIG`)
are left out of the tree they analyze, and the ``knip`` and ``jscpd`` keys of its
``package.json`` are set back to the starting source's before they run. Otherwise a submission could tell them what not to see (``knip.json``
``{"ignore": [...]}``, ``.jscpd.json`` ``{"minTokens": 100000}``) and report none of what
it added.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from ..errors import AnalyzerFailed
from ._deadcode import KnipScan, duplicate_groups, parse_knip
from ._sandboxed import TMP, SandboxedRun, not_found, run_sandboxed
from ._source_only import sections, without_sections
from ._tree import read_inside

OpenSandbox = Callable[..., AbstractAsyncContextManager[Any]]

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


#: knip's and jscpd's configuration files, read from the repository root (jscpd also reads
#: ``.config/jscpd.json`` and ``.config/.jscpd.json``)
_CONFIG_FILE = re.compile(r"\.?knip(\.config)?\.(jsonc?|[cm]?[jt]s)|(\.config/\.?jscpd|\.jscpd)\.json")
#: the keys of package.json they read their configuration from
MANIFEST_KEYS = ("knip", "jscpd")
#: run inside the sandbox before the analyzer: package.json's MANIFEST_KEYS set to the
#: starting source's (argv[1]: those keys as a JSON object; a key it lacks is removed)
_RESTORE_KEYS = ("const fs=require('fs');const p=JSON.parse(fs.readFileSync('package.json','utf8').replace(/^\\uFEFF/,''));"
                 "const w=JSON.parse(process.argv[1]);for(const k of " + json.dumps(list(MANIFEST_KEYS)) + ")"
                 "{if(Object.prototype.hasOwnProperty.call(w,k))p[k]=w[k];else delete p[k];}"
                 "fs.writeFileSync('package.json',JSON.stringify(p,null,2)+'\\n')")


#: ignore files, at any level, that make them skip what they list (jscpd honours ``.ignore`` too)
_IGNORE_FILES = frozenset({".gitignore", ".ignore"})
#: the code-bearing configuration files of the tools knip's plugins load (``jest.config.js``,
#: ``vite.config.ts``, ``.eslintrc.cjs``, ``gatsby-node.js``, ``Gruntfile.js``,
#: ``.storybook/main.ts``, ...), where knip looks for them: in a package's root folder (the
#: repository's, or one holding a ``package.json``). knip imports them, so a submission's
#: version would run inside knip and could print any report. Elsewhere such a name is
#: source (Angular's ``src/app/app.config.ts``) and is analyzed as the submission has it.
_PLUGIN_CONFIG = re.compile(
    r"(?:.*/)?(?:[^/]*\.(?:config|conf|workspace)(?:\.[^/.]+)?|\.[^/]*rc|gatsby-(?:browser|config|node|ssr)"
    r"|[Gg]runtfile|[Gg]ulpfile)\.[cm]?[jt]sx?|(?:.*/)?\.storybook/[^/]*\.[cm]?[jt]sx?")


def _configures(path: str, package_root: Callable[[str], bool] = lambda folder: folder == "") -> bool:
    """Whether ``path`` tells knip or jscpd what to analyze, or is code knip loads as
    configuration: a root configuration file of theirs, an ignore file at any level
    (:data:`_IGNORE_FILES`), or a plugin's configuration script (:data:`_PLUGIN_CONFIG`) in
    a folder ``package_root`` says is a package's root (by default only the repository's)."""
    if _CONFIG_FILE.fullmatch(path) or posixpath.basename(path) in _IGNORE_FILES:
        return True
    if not _PLUGIN_CONFIG.fullmatch(path):
        return False
    folder = posixpath.dirname(path)
    if posixpath.basename(folder) == ".storybook":
        folder = posixpath.dirname(folder)
    return ".." in folder.split("/") or package_root(folder)


def analysis_patch(patch: str, starting: Path | None = None) -> str:
    """``patch`` without its file sections that change what configures the analyzers
    (:func:`_configures`, either side of a rename): the analysis sees those files as the
    frozen starting source has them. A package's root folder is the repository's, one
    holding a ``package.json`` in ``starting``, or one the patch gives a ``package.json``."""
    manifests = {posixpath.dirname(p) for s in sections(patch) for p in (s.old, s.new)
                 if posixpath.basename(p) == "package.json"}

    def package_root(folder: str) -> bool:
        return folder == "" or folder in manifests or (
            starting is not None and os.path.lexists(starting / folder / "package.json"))

    return without_sections(patch, lambda path: _configures(path, package_root))


def starting_keys(starting: Path) -> dict[str, Any]:
    """The :data:`MANIFEST_KEYS` of the starting source's ``package.json`` (none when it has
    no readable one)."""
    data = read_inside(starting, "package.json")
    try:
        manifest = json.loads(data) if data is not None else {}
    except ValueError:
        return {}
    return {k: manifest[k] for k in MANIFEST_KEYS if isinstance(manifest, dict) and k in manifest}


def _install_root(path: Path) -> Path:
    """The folder holding the ``node_modules`` a tool binary lives in (bound read-only)."""
    for parent in path.parents:
        if parent.name == "node_modules":
            return parent.parent
    return path.parent


def _sandboxed(name: str, open_sandbox: OpenSandbox | None, patch: str, args: list[str], timeout: float,
               outputs: tuple[str, ...] = (), starting: Path | None = None) -> SandboxedRun:
    """``name`` (its binary from :func:`_binary`) run in a fresh sandbox of the frozen task
    with ``patch`` applied as :func:`analysis_patch` leaves it, its install folder bound
    read-only; when the patch changes ``package.json``, its :data:`MANIFEST_KEYS` are first
    set back to those of ``starting`` (the starting source)."""
    path = _binary(name)
    if path is None:
        raise AnalyzerFailed(tool_status(name)[1] or f"{name} is not installed")
    roots = (_install_root(path), _install_root(path.resolve()))
    patch = analysis_patch(patch, starting)
    argv = [str(path), *args]
    if starting is not None and any("package.json" in (s.old, s.new) for s in sections(patch)):
        argv = ["sh", "-c", 'node -e "$1" "$2" && shift 2 && exec "$@"', "sh", _RESTORE_KEYS,
                json.dumps(starting_keys(starting)), *argv]
    run = run_sandboxed(open_sandbox, patch, argv, tool=name, timeout=timeout, readonly=roots,
                        outputs=outputs, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1"})
    if not_found(run):
        raise AnalyzerFailed(f"{name} (or node) is not in the analysis sandbox (on docker the frozen task image "
                             "must carry it)")
    return run


def run_knip(open_sandbox: OpenSandbox | None, patch: str, timeout: float = 300.0,
             starting: Path | None = None) -> KnipScan:
    """knip's unused-code candidates of the project at the repository root (needs its
    package.json), in a fresh sandbox: knip loads the project's ``knip.config.js`` and its
    plugins' configuration files, which are code. Configured as ``starting`` (the starting
    source) is (:func:`_sandboxed`)."""
    run = _sandboxed("knip", open_sandbox, patch, ["--reporter", "json", "--no-progress", "--no-config-hints"],
                     timeout, starting=starting)
    try:
        report = json.loads(run.stdout)
    except ValueError:
        raise AnalyzerFailed(f"knip exited {run.exit_code} without a report: "
                             f"{(run.stderr or run.stdout).strip()[:300]}") from None
    return parse_knip(report)


def run_jscpd(open_sandbox: OpenSandbox | None, patch: str, timeout: float = 300.0,
              starting: Path | None = None) -> set[str]:
    """jscpd's duplicate-code groups among the JS/TS files of the repository, in a fresh
    sandbox (it reads the project's ``.jscpd.json`` and ``package.json`` settings), configured
    as ``starting`` (the starting source) is (:func:`_sandboxed`)."""
    run = _sandboxed("jscpd", open_sandbox, patch,
                     ["--silent", "--reporters", "json", "--output", f"{TMP}/jscpd-out", "--format",
                      "javascript,typescript,jsx,tsx", "--ignore", "**/node_modules/**,**/.git/**", "."],
                     timeout, outputs=("jscpd-out/jscpd-report.json",), starting=starting)
    report = run.files.get("jscpd-out/jscpd-report.json")
    if report is None:
        if run.exit_code == 1 and "analyzes no files" in (run.stderr + run.stdout):
            return set()
        raise AnalyzerFailed(f"jscpd exited {run.exit_code} without a report: {run.stderr.strip()[:300]}")
    return duplicate_groups(json.loads(report))
