"""What ``pluginbench run`` loads: only what running needs (issue 27, startup)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

#: Run as ``python -c``: the real entry point, then the loaded module names into a file.
_PROBE = """
import atexit, gc, json, runpy, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
atexit.register(lambda: open(out + ".gc", "w").write(json.dumps([gc.isenabled(), gc.get_freeze_count() > 0])))
sys.argv = ["pluginbench", *sys.argv[2:]]
runpy.run_module("pluginbench", run_name="__main__", alter_sys=True)
"""


def _loaded(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PLUGINBENCH_VANILLA_CACHE="off", XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", _PROBE, str(out), *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    return done, set(json.loads(out.read_text())) if out.exists() else set()


def test_a_whole_run_imports_neither_compare_nor_pydantic_nor_the_plan_printer(tmp_path: Path) -> None:
    """A one-attempt ``run --foreground`` completes without loading ``compare``'s module, the
    dry-run plan printer, the CLI framework (a plain ``run`` line needs no typer, no click,
    and so no pydantic either), rich (off a terminal every line is written as plain text,
    and the run ends with one plain line: phase, attempts done of all, time), other
    commands' modules (history mining, doctor, groups, calibration, the dashboard), nor what
    only some measures, task sources, reviews or harnesses use (regex, importlib.metadata,
    urllib.request, anyio.from_thread, the probe's HTTP server, the other harnesses' adapters,
    the code-quality scanners, remote-task pinning, the review call), and ends with the cyclic
    collector on and start-up's objects frozen."""
    task = tmp_path / "tasks" / "t"
    for sub in ("workspace", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    (task / "workspace" / "README.md").write_text("# startup\n")
    (task / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n')
    (task / "instruction.md").write_text("Write done.txt.\n")
    for script, body in (("tests/test.sh", 'mkdir -p "$LOGS_DIR/verifier"\n'
                                           'if [ -f "$APP_DIR/done.txt" ]; then echo 1; else echo 0; fi'
                                           ' > "$LOGS_DIR/verifier/reward.txt"\n'),
                         ("solution/solve.sh", 'echo done > "$APP_DIR/done.txt"\n')):
        (task / script).write_text("#!/bin/sh\n" + body)
        (task / script).chmod(0o755)
    config = tmp_path / "one.yaml"
    config.write_text(yaml.safe_dump({
        "name": "startup", "tasks": {"source": str(tmp_path / "tasks"), "ids": ["t"]},
        "treatments": {}, "runner": {"harness": "oracle"},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 120,
        "environment": {"backend": "local", "isolation": "none"},
    }))
    done, modules = _loaded(tmp_path, "run", str(config), "--output", str(tmp_path / "run"), "--foreground", "--yes")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "complete" in done.stdout
    assert re.search(r"^  complete · 0 running 1/1 \d+:\d\d:\d\d$", done.stdout, re.M), done.stdout
    assert "pluginbench.actors" in modules  # the probe saw the run itself
    unneeded = {"pluginbench.cli._compare", "pluginbench.cli._compare_io", "pluginbench.cli._plan_lines",
                "pydantic", "typer", "typer._click", "click", "pluginbench.cli._app", "pluginbench.cli._run_commands",
                # rich itself: written to a pipe, every line is plain text (the live view's
                # end is one plain line)
                "rich", "rich.console", "rich.progress", "rich.live",
                # imported on first use by the measure, task source or probe run that needs them
                "regex", "importlib.metadata", "email.message", "urllib.request", "anyio.from_thread",
                "http.server", "pluginbench.probe._server",
                "pluginbench.harnesses._codex", "pluginbench.harnesses._gemini", "pluginbench.harnesses._qwen",
                "pluginbench.harnesses._opencode", "pluginbench.harnesses._simulated",
                "pluginbench.harnesses._simulated_agent",
                # other commands' code, behind the lazy package surfaces (history mining, doctor,
                # groups, calibration, the dashboard)
                "pluginbench.tasks._mine_git", "pluginbench.tasks._mine_task", "pluginbench.tasks._mine_mutate",
                "pluginbench.actors._mine", "pluginbench.actors._doctor", "pluginbench.actors._group",
                "pluginbench.stats._calibrate", "pluginbench.dashboard", "pluginbench.cli._dashboard",
                # measures the config does not select, task sources it does not use, no reviewer
                "pluginbench.measures._complexity", "pluginbench.measures._complexity_scan",
                "pluginbench.measures._deadcode", "pluginbench.measures._deadcode_scan",
                "pluginbench.measures._js_analyzers", "pluginbench.measures._sandboxed",
                "pluginbench.tasks._remote", "pluginbench.tasks._registry", "pluginbench.tasks._urls",
                "pluginbench.tasks._deepswe", "pluginbench.actors._measure_again",
                "pluginbench.review._call", "pluginbench.review._packet", "pluginbench.review._prompt"}
    assert modules & unneeded == set()
    assert json.loads((tmp_path / "modules.json.gc").read_text()) == [True, True]


def test_a_bad_number_still_gets_typers_message_and_exit_2(tmp_path: Path) -> None:
    """A value the plain coercion leaves to typer (a number) is still refused as typer words it,
    with exit 2, and only then is pydantic loaded."""
    done, modules = _loaded(tmp_path, "dashboard", str(tmp_path), "--port", "abc")
    assert done.returncode == 2
    assert "Invalid value for '--port'" in done.stderr and "valid integer" in done.stderr
    assert "Traceback" not in done.stderr
    assert "pydantic" in modules


def test_finding_one_cli_imports_only_its_own_adapter(tmp_path: Path) -> None:
    """Looking up the claude CLI (what a claude run does) loads the claude adapter and no other
    harness's, nor the probe's HTTP server."""
    code = ("import sys; from pluginbench.probe import find_cli; find_cli('claude'); "
            "print(sorted(m for m in sys.modules if m.startswith(('pluginbench.harnesses._', 'http.'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(json.loads(done.stdout.replace("'", '"')))
    assert "pluginbench.harnesses._claude" in loaded
    assert not loaded & {"pluginbench.harnesses._codex", "pluginbench.harnesses._gemini", "pluginbench.harnesses._qwen",
                         "pluginbench.harnesses._opencode", "pluginbench.harnesses._simulated",
                "pluginbench.harnesses._simulated_agent", "http.server", "http.client"}
