"""warm_report loads what a report build loads, so the build after it is warm (issue 27, startup)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from _synthetic_run import make_run
import pluginbench.actors._supervisor  # what a run has loaded before its report
from pluginbench.projections import build_report, warm_report
run = make_run(Path(sys.argv[2]), tasks=2, repeats=2, running=0)
from pluginbench.events import _types
decoder_before = _types._decoder is not None
warm_report()
decoder_built = _types._decoder is not None
written = sorted(str(p.relative_to(run)) for p in run.rglob("*"))
before = set(sys.modules)
build_report(run)
print(json.dumps({"loaded": sorted(set(sys.modules) - before), "written": written, "decoder_before": decoder_before, "decoder_built": decoder_built}))
"""


def test_a_report_built_after_warm_report_loads_no_module() -> None:
    """After warm_report, building a finished two-arm run's report imports no further module, warm_report has built the event decoder (unbuilt before it), and it writes nothing into the run."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-c", _PROBE, str(Path(__file__).parent), str(Path(tmp) / "run")],
                              capture_output=True, text=True, timeout=120, check=True)
        got = json.loads(done.stdout.splitlines()[-1])
        assert got["loaded"] == []
        assert (got["decoder_before"], got["decoder_built"]) == (False, True)
        assert not any(p.startswith("report") for p in got["written"])
