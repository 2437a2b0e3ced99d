"""Codex starts its native binary, not the npm node wrapper: resolved from the package's
``vendor/<triple>/codex-package.json``, checked against the pin (exit 2 naming the file),
with the two environment variables the wrapper would add."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.errors import ConfigError
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._codex_native import (
    MANAGED_BY,
    PACKAGE_ROOT_VAR,
    PLATFORM_PACKAGES,
    image_native,
    resolve_native,
    target_triple,
)
from pluginbench.probe._clis import _version_argv, find_cli
from tests._prereq import require

TRIPLE = target_triple()


def fake_install(modules: Path, *, manifest_version: str, reports: str, binary: bool = True) -> Path:
    """An npm tree shaped like @openai/codex's: the wrapper link and a platform package whose
    "binary" is a shell script printing ``codex-cli <reports>``; the ``.bin`` link returned."""
    assert TRIPLE is not None
    pkg = modules / "@openai" / "codex"
    (pkg / "bin").mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "@openai/codex", "version": manifest_version}))
    (pkg / "bin" / "codex.js").write_text("#!/usr/bin/env node\nprocess.exit(3);\n")
    (pkg / "bin" / "codex.js").chmod(0o755)
    vendor = modules / PLATFORM_PACKAGES[TRIPLE] / "vendor" / TRIPLE
    (vendor / "bin").mkdir(parents=True)
    (vendor / "codex-package.json").write_text(json.dumps(
        {"layoutVersion": 1, "version": manifest_version, "target": TRIPLE, "entrypoint": "bin/codex"}))
    if binary:
        (vendor / "bin" / "codex").write_text(f"#!/bin/sh\necho 'codex-cli {reports}'\n")
        (vendor / "bin" / "codex").chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / "codex").symlink_to("../@openai/codex/bin/codex.js")
    return modules / ".bin" / "codex"


@pytest.fixture(autouse=True)
def _platform() -> None:
    require(TRIPLE in PLATFORM_PACKAGES, "a platform the Codex npm package ships a binary for")


def test_the_pinned_install_resolves_to_its_native_binary() -> None:
    """The installed 0.169.0 wrapper resolves to vendor/<triple>/bin/codex, which reports 0.169.0 itself, with the
    wrapper's two variables; the version question and the harness both use that binary."""
    cli = find_cli("codex")
    require(cli is not None, "codex 0.169.0 in .tools/clis (run tools/install-clis.sh)")
    assert cli is not None
    native = resolve_native(cli, "0.169.0")
    root = Path(os.path.realpath(cli)).parents[1]
    assert native.exe.endswith(f"/node_modules/{PLATFORM_PACKAGES[str(TRIPLE)]}/vendor/{TRIPLE}/bin/codex")
    assert dict(native.env) == {MANAGED_BY: "1", PACKAGE_ROOT_VAR: str(root)}
    out = subprocess.run([native.exe, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    assert out.split() == ["codex-cli", "0.169.0"]
    assert _version_argv(cli) == [native.exe, "--version"]
    assert CodexHarness(cli, "0.169.0").native == native


def test_a_binary_of_another_version_is_refused_naming_its_manifest(tmp_path: Path) -> None:
    """A codex-package.json whose version is not the pin is a ConfigError (exit 2) naming that file and the fix."""
    link = fake_install(tmp_path / "node_modules", manifest_version="0.168.0", reports="0.168.0")
    with pytest.raises(ConfigError) as err:
        CodexHarness(link, "0.169.0")
    manifest = tmp_path / "node_modules" / PLATFORM_PACKAGES[TRIPLE] / "vendor" / str(TRIPLE) / "codex-package.json"
    assert err.value.exit_code == 2 and err.value.file == str(manifest) and err.value.field == "version"
    assert "0.168.0" in err.value.message and "tools/install-clis.sh" in (err.value.fix or "")
    assert resolve_native(link, "0.168.0").exe == str(manifest.parent / "bin" / "codex")


def test_a_missing_binary_is_refused(tmp_path: Path) -> None:
    """A manifest whose entrypoint is not there is a ConfigError naming the manifest, not a failed launch later."""
    link = fake_install(tmp_path / "node_modules", manifest_version="0.169.0", reports="0.169.0", binary=False)
    with pytest.raises(ConfigError, match="missing or not executable") as err:
        resolve_native(link, "0.169.0")
    assert str(err.value.file).endswith("codex-package.json")


def test_a_coding_image_path_maps_to_the_binary_in_the_same_tree() -> None:
    """Inside a coding image the binary is the platform package's beside the wrapper; a path that is not an npm link
    is launched as it is, with nothing added."""
    native = image_native("/opt/pluginbench/clis/node_modules/.bin/codex", "x86_64-unknown-linux-musl")
    assert native.exe == ("/opt/pluginbench/clis/node_modules/@openai/codex-linux-x64/vendor/"
                          "x86_64-unknown-linux-musl/bin/codex")
    assert dict(native.env)[PACKAGE_ROOT_VAR] == "/opt/pluginbench/clis/node_modules/@openai/codex"
    assert native.manifest is not None and native.manifest.endswith("x86_64-unknown-linux-musl/codex-package.json")
    assert image_native("/x/codex", "x86_64-unknown-linux-musl") == ("/x/codex", (), None, None)


def test_check_refuses_a_cached_cli_whose_binary_is_another_version(tmp_path: Path) -> None:
    """`pluginbench check` with runner.cli_version served from the CLI cache, whose binary reports that version but
    whose codex-package.json says another, exits 2 naming the manifest, with no traceback."""
    xdg = tmp_path / "xdg"
    fake_install(xdg / "pluginbench" / "clis" / "_openai_codex_0.168.0" / "node_modules",
                 manifest_version="0.167.0", reports="0.168.0")
    tasks = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
    cfg = tmp_path / "evaluation.yaml"
    cfg.write_text(yaml.safe_dump({"name": "pin", "tasks": {"source": str(tasks), "ids": ["add-numbers"]},
                                   "treatments": {}, "runner": {"harness": "codex", "model": "gpt-5.4",
                                                                "cli_version": "0.168.0"},
                                   "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 60}))
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg), "npm_config_offline": "true"}
    done = subprocess.run([sys.executable, "-m", "pluginbench", "check", str(cfg), "--no-readiness"],
                          capture_output=True, text=True, env=env, timeout=180)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "codex-package.json" in out and "0.167.0" in out and "fix:" in out and "Traceback" not in out
