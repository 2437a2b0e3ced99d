"""``runner.cli_version`` other than the installed CLI's: that exact version, installed once
into the host CLI cache and used by the run (on the host, and copied into the coding image).

The cache is ``<cache root>/clis/<package>@<version>/`` (``<cache root>`` is
``$XDG_CACHE_HOME/pluginbench``), an npm prefix holding ``node_modules/<package>`` and
``node_modules/.bin/<command>``, the same shape as the project's ``.tools/clis``. A missing
version is installed with ``npm install`` from the npm registry this machine is configured
for (``npm config get registry``; npm's own cache makes a second install offline), into a
temporary folder renamed into place only once the installed CLI reports exactly that
version. When npm is missing, the registry cannot be reached or has no such version, the
run is refused before anything starts (exit 2, ``runner.cli_version``), nothing is left in
the cache, and the fix says how to install it by hand or pin the installed version.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import ConfigError
from ..harness_registry import CliPin
from ._context import cache_root

_SAFE = re.compile(r"[^A-Za-z0-9._+-]")
#: how long one ``npm install`` may take
INSTALL_SECONDS = 600.0


def cli_cache_dir(pin: CliPin, version: str) -> Path:
    """The cache folder (an npm prefix) of ``pin``'s package at ``version``."""
    return cache_root() / "clis" / _SAFE.sub("_", f"{pin.package}@{version}")


def cached_cli(pin: CliPin, version: str) -> Path | None:
    """The cached executable of ``pin`` at exactly ``version``, or None (never installs)."""
    from ..probe import cli_version

    exe = cli_cache_dir(pin, version) / "node_modules" / ".bin" / pin.command
    if exe.exists() and cli_version(exe) == version:
        return exe
    return None


def install_cli(pin: CliPin, version: str, spec: str | None = None) -> Path:
    """``pin`` at exactly ``version`` from the cache, installing it with npm when missing
    (``spec``: what npm installs, default ``<package>@<version>``; a local tarball in tests).
    Raises :class:`ConfigError` naming ``runner.cli_version`` when it cannot."""
    from ..probe import cli_version

    found = cached_cli(pin, version)
    if found is not None:
        return found
    dest = cli_cache_dir(pin, version)
    what = spec or f"{pin.package}@{version}"
    fix = (f"install it by hand (npm install --prefix {dest} {pin.package}@{version}), set runner.cli_version to "
           "the installed version, or leave it null to use the host CLI")
    npm = shutil.which("npm")
    if npm is None:
        raise ConfigError(f"runner.cli_version {version} is not installed and npm is not on PATH to install {what}",
                          field="runner.cli_version", fix=fix)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    except OSError as exc:
        raise ConfigError(f"cannot make the CLI cache folder: {exc.strerror or exc}", file=str(dest.parent),
                          field="runner.cli_version", fix="make the cache root writable (XDG_CACHE_HOME)") from None
    try:
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(work), "--no-save", "--no-package-lock", "--no-audit", "--no-fund",
                 "--loglevel=error", what],
                capture_output=True, text=True, timeout=INSTALL_SECONDS, stdin=subprocess.DEVNULL, check=False,
                start_new_session=True)
        except subprocess.TimeoutExpired:
            raise ConfigError(f"npm install {what} took longer than {INSTALL_SECONDS:g} s",
                              field="runner.cli_version", fix=fix) from None
        if done.returncode != 0:
            said = " ".join((done.stderr or done.stdout).split())[:300]
            raise ConfigError(f"cannot install {what} for runner.cli_version {version}: npm install exited "
                              f"{done.returncode}: {said}", field="runner.cli_version", fix=fix)
        exe = work / "node_modules" / ".bin" / pin.command
        got = cli_version(exe) if exe.exists() else None
        if got != version:
            raise ConfigError(f"npm installed {what}, but its {pin.command} --version says {got or 'nothing'}, "
                              f"not {version}", field="runner.cli_version", fix=fix)
        try:
            work.rename(dest)
        except OSError:
            if cached_cli(pin, version) is None:  # not another process that installed it first
                raise
        return dest / "node_modules" / ".bin" / pin.command
    finally:
        shutil.rmtree(work, ignore_errors=True)
