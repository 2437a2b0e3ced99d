"""The scripts in bench/ still load against the package they measure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Loads every bench script as a module (its ``main`` not run): a name it imports from
#: pluginbench that moved or was renamed fails here, not the next time someone measures.
LOAD_ALL = """
import importlib.util, pathlib, sys, traceback
sys.path.insert(0, "bench")
failed = []
for path in sorted(pathlib.Path("bench").glob("bench_*.py")):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        failed.append(f"{path}: {traceback.format_exc(limit=-1).strip()}")
    else:
        if not callable(getattr(module, "main", None)):
            failed.append(f"{path}: no main()")
print("\\n".join(failed))
"""


def test_every_bench_script_loads_and_has_a_main() -> None:
    """Each bench/bench_*.py imports cleanly in a fresh interpreter and defines main()."""
    done = subprocess.run([sys.executable, "-c", LOAD_ALL], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", done.stdout
