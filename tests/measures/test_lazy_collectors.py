"""Registering the measures loads their specs, not the scanners their collectors run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_SCANNERS = ("pluginbench.measures._complexity", "pluginbench.measures._complexity_scan",
             "pluginbench.measures._deadcode", "pluginbench.measures._deadcode_scan",
             "pluginbench.measures._js_analyzers", "pluginbench.measures._sandboxed")


def test_registering_lists_every_measure_and_a_check_loads_the_scanners_it_uses(tmp_path: Path) -> None:
    """``import pluginbench.measures`` registers all ten built-in measures in their order, with
    their columns, while the complexity and dead-code scanners stay unloaded; the dead_code
    readiness check loads them and answers (no analyzed source: not configured)."""
    code = ("import json, sys; from pathlib import Path; import pluginbench.measures as m; "
            "scanners = set(sys.argv[2:]); before = sorted(scanners & set(sys.modules)); d = Path(sys.argv[1]); "
            "ready = m.get('dead_code').check(m.ReadinessInput('t', d, d, None, None, {}, d)); "
            "print(json.dumps([list(m.names()), len(m.all_columns()), before, "
            "sorted(scanners & set(sys.modules)), ready.state]))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path), *_SCANNERS], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    names, columns, before, after, state = json.loads(done.stdout)
    assert names == ["tokens", "time", "lines", "coverage", "activation", "checks", "iterations", "cyclomatic",
                     "cognitive", "dead_code"]
    assert columns > 20
    assert before == []
    assert {"pluginbench.measures._deadcode_scan", "pluginbench.measures._js_analyzers"} <= set(after)
    assert state == "not_configured"
