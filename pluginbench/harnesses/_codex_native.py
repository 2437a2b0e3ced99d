"""The Codex CLI's native executable behind its npm wrapper, resolved once per harness.

npm installs ``@openai/codex`` as a node script (``bin/codex.js``) and the real program
in a platform package (``@openai/codex-linux-x64`` ...) under
``vendor/<target triple>/``, described by ``codex-package.json`` (``version``,
``target``, ``entrypoint``: ``bin/codex``). Every start through the wrapper costs a node
start (0.4-0.6 s wall on the team's machine against 0.02-0.04 s for the binary), and on
node < 22.15 node stays alive as the binary's parent. PluginBench launches the binary
directly and gives it what the wrapper (0.169.0) would:

* ``CODEX_MANAGED_PACKAGE_ROOT``: the real path of the ``@openai/codex`` package;
* ``CODEX_MANAGED_BY_NPM=1``: both installs PluginBench launches (``tools/install-clis.sh``
  and the host CLI cache) are npm installs, and the wrapper says npm when no other package
  manager owns the tree.

Left out, because they do not apply: the wrapper's bun/pnpm/vite-plus detection (npm
trees only), its removal of other ``CODEX_MANAGED_BY_*`` variables (the sandbox's
environment is built from scratch), its signal forwarding (the sandbox is the direct
parent) and its ``SIGXFSZ`` handler (needed only for node's ``execve``). The binary puts
its own ``codex-path`` folder (the bundled ``rg``) on ``PATH`` itself, found from its own
location, so nothing is added there. Pure but for reading the package's small files.
"""

import hashlib
import json
import os
import platform
from pathlib import Path
from typing import NamedTuple

from ..errors import ConfigError

#: npm's wrapper package and its platform packages, by target triple (``bin/codex.js``).
PACKAGE = "@openai/codex"
PLATFORM_PACKAGES = {
    "x86_64-unknown-linux-musl": "@openai/codex-linux-x64",
    "aarch64-unknown-linux-musl": "@openai/codex-linux-arm64",
    "x86_64-apple-darwin": "@openai/codex-darwin-x64",
    "aarch64-apple-darwin": "@openai/codex-darwin-arm64",
}
MANIFEST = "codex-package.json"
#: the environment the wrapper adds before starting the binary (its package root is added per install)
MANAGED_BY = "CODEX_MANAGED_BY_NPM"
PACKAGE_ROOT_VAR = "CODEX_MANAGED_PACKAGE_ROOT"
FIX = "reinstall the pinned Codex CLI with tools/install-clis.sh"


class NativeCli(NamedTuple):
    """The executable to launch and the environment the npm wrapper would have added."""

    exe: str
    env: tuple[tuple[str, str], ...]
    #: the manifest the version was read from (None: ``exe`` is not an npm wrapper's binary)
    manifest: str | None = None
    #: the target triple the binary is built for
    target: str | None = None


def target_triple(system: str | None = None, machine: str | None = None) -> str | None:
    """The wrapper's target triple for this host (None where it ships no binary)."""
    system = (system or platform.system()).lower()
    machine = (machine or platform.machine()).lower()
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(machine)
    if arch is None:
        return None
    return {"linux": f"{arch}-unknown-linux-musl", "darwin": f"{arch}-apple-darwin"}.get(system)


def wrapper_package(cli_path: str | Path) -> Path | None:
    """The real ``@openai/codex`` package folder when ``cli_path`` is its node wrapper, else None."""
    real = Path(os.path.realpath(cli_path))
    if real.name != "codex.js" or real.parent.name != "bin":
        return None
    root = real.parent.parent
    try:
        name = json.loads((root / "package.json").read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return root if name == PACKAGE else None


def vendor_dirs(package_root: Path, triple: str) -> list[Path]:
    """Where the wrapper looks for ``vendor/<triple>``, in its order: the platform package as
    node resolves it from the wrapper (its own ``node_modules``, then each parent's), then
    the wrapper package's own ``vendor``."""
    platform_pkg = PLATFORM_PACKAGES[triple]
    found = [folder / "node_modules" / platform_pkg / "vendor" / triple
             for folder in (package_root, *package_root.parents) if folder.name != "node_modules"]
    return [*found, package_root / "vendor" / triple]


def check_manifest(manifest: Path, text: str, *, pinned: str, triple: str) -> str:
    """The entrypoint of a ``codex-package.json`` text that matches the pin and platform;
    a :class:`ConfigError` (exit 2) naming the file otherwise."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{MANIFEST} is not JSON ({exc})", file=str(manifest), fix=FIX) from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{MANIFEST} is not a JSON object", file=str(manifest), fix=FIX)
    if pinned and doc.get("version") != pinned:  # no pin (a reviewer's unrecorded version): any
        raise ConfigError(
            f"the native Codex binary is version {doc.get('version')!r}, the run pins {pinned}",
            file=str(manifest), field="version",
            fix=f"{FIX} (or set runner.cli_version to the installed version)",
        )
    if doc.get("target") != triple:
        raise ConfigError(f"the native Codex binary is built for {doc.get('target')!r}, this host is {triple}",
                          file=str(manifest), field="target", fix=FIX)
    entry = doc.get("entrypoint")
    if not isinstance(entry, str) or not entry or entry.startswith("/") or ".." in Path(entry).parts:
        raise ConfigError(f"{MANIFEST} names no usable entrypoint: {entry!r}", file=str(manifest),
                          field="entrypoint", fix=FIX)
    return entry


def resolve_native(cli_path: str | Path, pinned: str) -> NativeCli:
    """The native binary behind ``cli_path`` (an npm wrapper) at exactly ``pinned``.

    Anything that is not the npm wrapper is launched as it is. A wrapper whose binary is
    missing, or whose ``codex-package.json`` names another version or platform, is a
    :class:`ConfigError` (exit 2) naming the file and the fix.
    """
    root = wrapper_package(cli_path)
    if root is None:
        return NativeCli(str(cli_path), ())
    triple = target_triple()
    if triple is None or triple not in PLATFORM_PACKAGES:
        raise ConfigError(f"no native Codex binary is shipped for {platform.system()} {platform.machine()}",
                          file=str(cli_path), fix="run PluginBench on Linux or macOS, x86_64 or arm64")
    for vendor in vendor_dirs(root, triple):
        manifest = vendor / MANIFEST
        if manifest.is_file():
            entry = check_manifest(manifest, manifest.read_text(encoding="utf-8"), pinned=pinned, triple=triple)
            exe = vendor / entry
            if not (exe.is_file() and os.access(exe, os.X_OK)):
                raise ConfigError(f"the native Codex binary {exe} ({MANIFEST}'s entrypoint) is missing or not "
                                  "executable", file=str(manifest), field="entrypoint", fix=FIX)
            return NativeCli(str(exe), ((MANAGED_BY, "1"), (PACKAGE_ROOT_VAR, str(root))), str(manifest), triple)
    raise ConfigError(f"the Codex npm package has no {PLATFORM_PACKAGES[triple]} binary (no vendor/{triple}/{MANIFEST})",
                      file=str(root / "package.json"), fix=FIX)


def image_native(cli_path: str, triple: str | None = None) -> NativeCli:
    """The native binary behind ``cli_path`` inside a coding image (not readable from the host):
    npm's flat layout, the platform package beside the wrapper in the same ``node_modules``
    (the image carries the host's scope folder whole). Its ``codex-package.json`` is checked
    in the first sandbox (:func:`check_manifest`). Not an npm ``.bin`` path: launched as is."""
    path = Path(cli_path)
    triple = triple or target_triple()
    if path.parent.name != ".bin" or path.parent.parent.name != "node_modules" or triple not in PLATFORM_PACKAGES:
        return NativeCli(str(cli_path), ())
    modules = path.parent.parent.as_posix()
    vendor = f"{modules}/{PLATFORM_PACKAGES[triple]}/vendor/{triple}"
    return NativeCli(f"{vendor}/bin/codex", ((MANAGED_BY, "1"), (PACKAGE_ROOT_VAR, f"{modules}/{PACKAGE}")),
                     f"{vendor}/{MANIFEST}", triple)


def identity(manifest: bytes, exe_size: int) -> str:
    """The CLI's part of the setup digest: its ``codex-package.json`` (version, target,
    entrypoint) and the binary's size, without reading the ~300 MB binary on every run."""
    return hashlib.sha256(manifest + b"\0" + str(exe_size).encode()).hexdigest()
