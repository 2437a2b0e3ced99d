"""What ``pluginbench status --json`` loads when the ledger answers: the ledger's reader, not
the fold, the report, the measures or the CLI framework (issue 27, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec

from pluginbench.projections import Ledger
from tests.projections.test_state_ledger import random_run

#: Run as ``python -c``: the real entry point, then the loaded module names into a file.
_PROBE = """
import atexit, json, runpy, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["pluginbench", *sys.argv[2:]]
runpy.run_module("pluginbench", run_name="__main__", alter_sys=True)
"""

#: Loaded only by the full read (a fold of the log), a report, a run, or the CLI framework.
_NOT_NEEDED = {
    "pluginbench.projections._state", "pluginbench.projections._integrity", "pluginbench.projections._status",
    "pluginbench.projections._view", "pluginbench.projections._report", "pluginbench.projections._ledger",
    "pluginbench.measures", "pluginbench.stats", "pluginbench.tasks", "pluginbench.config", "pluginbench.actors",
    "pluginbench.cli", "typer", "rich", "pydantic", "numpy", "yaml",
}


def test_status_json_from_the_ledger_loads_only_the_ledger_reader(tmp_path: Path) -> None:
    """A run whose ledger is at its log's last event: ``status --json`` answers from the ledger
    (states_source "ledger") without importing the fold, the report, measures, stats, tasks or typer/rich."""
    root = tmp_path / "run"
    (root / "evidence").mkdir(parents=True)
    (root / "evaluation.json").write_text('{"measurements": ["lines"]}')
    (root / "evaluation-binding.json").write_text("{}")
    ledger = Ledger(root / "evidence" / "ledger.sqlite")
    random_run(2, root / "events.jsonl", ledger)
    ledger.close()
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(out), "status", "--json", str(root)],
                          capture_output=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert msgspec.json.decode(done.stdout)["states_source"] == "ledger"
    loaded = set(json.loads(out.read_text()))
    assert "pluginbench.projections._ledger_read" in loaded  # the probe saw the ledger read
    assert sorted(m for m in loaded if m in _NOT_NEEDED or m.split(".")[0] in _NOT_NEEDED) == []
