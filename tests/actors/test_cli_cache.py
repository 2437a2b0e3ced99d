"""``runner.cli_version`` other than the installed CLI's: installed once with npm into the host
CLI cache (here from a local npm tarball, so nothing needs the network), reused from there, and
refused clearly (``runner.cli_version``, nothing left in the cache) when npm cannot install it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.actors._cli_cache import cli_cache_dir, install_cli
from pluginbench.errors import ConfigError
from pluginbench.harness_registry import CliPin
from pluginbench.probe import cli_version
from tests._prereq import require

PIN = CliPin(command="fakecli", package="@pluginbench-test/fakecli", version="9.9.9")


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(shutil.which("npm") is not None, "npm")
    root = tmp_path_factory.mktemp("npm-pack")
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "package.json").write_text(json.dumps({"name": PIN.package, "version": "1.2.3", "bin": {"fakecli": "cli.js"}}))
    (pkg / "cli.js").write_text("#!/usr/bin/env node\nconsole.log('1.2.3 (Fake CLI)');\n")
    (pkg / "cli.js").chmod(0o755)
    subprocess.run(["npm", "pack", str(pkg), "--pack-destination", str(root), "--loglevel=error"], check=True,
                   capture_output=True, cwd=root, timeout=120)
    return next(root.glob("*.tgz"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))  # npm's own cache, private and empty
    monkeypatch.setenv("npm_config_offline", "true")  # nothing from the network
    return tmp_path / "xdg" / "pluginbench" / "clis"


def test_a_pinned_version_is_installed_into_the_cache_once_and_reused(tarball: Path, cache: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned version lands in <cache>/clis/<package>@<version>/ and reports that version; a second
    resolution takes it from the cache without npm."""
    exe = install_cli(PIN, "1.2.3", spec=str(tarball))
    assert exe == cli_cache_dir(PIN, "1.2.3") / "node_modules" / ".bin" / "fakecli" and exe.is_relative_to(cache.resolve())
    assert cli_version(exe) == "1.2.3"
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)  # no npm: the cache answers
    assert install_cli(PIN, "1.2.3", spec=str(tarball)) == exe
    assert sorted(p.name for p in cache.iterdir()) == [exe.parents[2].name]


def test_an_install_that_reports_another_version_is_refused_and_leaves_nothing(tarball: Path, cache: Path) -> None:
    """A package whose CLI reports 1.2.3 does not stand for 1.2.4: refused naming runner.cli_version, no cache folder left."""
    with pytest.raises(ConfigError) as err:
        install_cli(PIN, "1.2.4", spec=str(tarball))
    assert err.value.field == "runner.cli_version" and "says 1.2.3, not 1.2.4" in str(err.value) and err.value.fix
    assert not cache.exists() or list(cache.iterdir()) == []


def test_a_version_npm_cannot_fetch_is_refused_clearly(cache: Path) -> None:
    """Offline with an empty npm cache, the version cannot be installed: refused naming runner.cli_version with
    npm's reason and how to install it by hand; nothing is left in the cache."""
    require(shutil.which("npm") is not None, "npm")
    with pytest.raises(ConfigError) as err:
        install_cli(PIN, "1.0.0")
    assert err.value.field == "runner.cli_version" and "npm install exited" in str(err.value)
    assert "npm install --prefix" in (err.value.fix or "")
    assert not cache.exists() or list(cache.iterdir()) == []


def test_check_refuses_a_pinned_cli_version_npm_cannot_install(tmp_path: Path) -> None:
    """`pluginbench check` with runner.cli_version a codex version npm cannot fetch (offline) exits 2 naming the
    field and the fix, with no traceback."""
    require(shutil.which("npm") is not None, "npm")
    tasks = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
    cfg = tmp_path / "evaluation.yaml"
    cfg.write_text(yaml.safe_dump({"name": "pin", "tasks": {"source": str(tasks), "ids": ["add-numbers"]},
                                   "treatments": {}, "runner": {"harness": "codex", "model": "gpt-5.4",
                                                                "cli_version": "0.0.1"},
                                   "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 60}))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "npm_config_cache": str(tmp_path / "npm"),
           "npm_config_offline": "true"}
    done = subprocess.run([sys.executable, "-m", "pluginbench", "check", str(cfg), "--no-readiness"],
                          capture_output=True, text=True, env=env, timeout=180)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "runner.cli_version" in out and "fix:" in out and "Traceback" not in out
