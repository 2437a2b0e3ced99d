"""The background worker `run` starts before the run exists: it waits, writing nothing, until it is handed
the run; it is the process that then owns the run; any other way out of `run` leaves no such worker."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from pluginbench import _worker_start
from pluginbench._worker_start import (
    EarlyWorker,
    WorkerStart,
    encode_start,
    read_start,
    start_early,
    take_early,
)
from tests.runs_helpers import events_of, write_config

from .test_runs import wait_until_unowned


def _started_at(pid: int) -> float:
    """When process ``pid`` started (epoch seconds, to the clock tick, rounded down)."""
    with open(f"/proc/{pid}/stat") as fh:
        ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as fh:
        boot = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _marked(mark: str) -> list[int]:
    """Live processes whose environment carries ``PB_TEST_MARK=mark`` (this test's own only)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if f"PB_TEST_MARK={mark}".encode() in fh.read().split(b"\0"):
                    with open(f"/proc/{name}/stat") as st:
                        if st.read().rsplit(")", 1)[1].split()[0] != "Z":
                            found.append(int(name))
        except OSError:
            continue
    return found


def _cli(*args: str, mark: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PB_TEST_MARK": mark}
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def test_the_start_line_reads_back_and_anything_else_is_refused() -> None:
    """What `run` writes reads back unchanged; end-of-file is no run; a malformed line is a ValueError."""
    start = WorkerStart(Path("/tmp/run-1"), True, 12.5, '[["/x",1,2,3,"1.0"]]')
    assert read_start(encode_start(start)) == start
    assert read_start(encode_start(start._replace(cost_ceiling=None, notify=False))) == start._replace(
        cost_ceiling=None, notify=False)
    assert read_start(b"") is None
    for bad in (b"[]\n", b'{"run_dir":"rel","notify":false,"cost_ceiling":null,"versions":""}\n',
                b'{"run_dir":"/a","notify":1,"cost_ceiling":null,"versions":""}\n',
                b'{"run_dir":"/a","notify":false,"cost_ceiling":-1,"versions":""}\n',
                b'{"run_dir":"/a","notify":false,"cost_ceiling":true,"versions":""}\n',
                b'{"run_dir":"/a","notify":false,"cost_ceiling":null}\n', b"not json\n"):
        with pytest.raises(ValueError):
            read_start(bad)


def test_only_a_background_run_starts_a_worker_at_the_entry_point(monkeypatch) -> None:
    """`run CONFIG` (and a resume) start one at the entry; --foreground, --dry-run, --json, --help and other commands
    do not; run takes it once."""
    started: list[list[str]] = []
    worker = SimpleNamespace(discard=lambda: None)
    monkeypatch.setattr(EarlyWorker, "start", classmethod(lambda cls, scope: started.append(scope) or worker))
    monkeypatch.setattr(_worker_start, "systemd_scope", lambda: ["scope"])
    monkeypatch.setattr(_worker_start.atexit, "register", lambda fn: None)
    for argv in (["run", "c.yaml", "--foreground"], ["run", "c.yaml", "--dry-run"], ["run", "c.yaml", "--dry-run", "--json"],
                 ["run", "--help"], ["status", "r"], ["worker", "-"], []):
        start_early(argv)
        assert take_early() is None, argv
    for argv in (["run", "c.yaml"], ["run", "-y", "c.yaml", "-o", "out"], ["run", "runs/r1", "--cost-ceiling", "5"]):
        start_early(argv)
        assert take_early() is worker and take_early() is None, argv
    assert started == [["scope"]] * 3


def test_a_waiting_worker_whose_run_never_comes_exits_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    """Its pipe closed without a line (the foreground was killed), the early worker exits 0 having printed and
    written nothing; discard() of a live one kills and reaps it."""
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    worker = EarlyWorker.start([])
    assert worker is not None and worker.process.stdin is not None
    worker.process.stdin.close()
    assert worker.process.wait(timeout=60) == 0
    worker.output.seek(0)
    assert worker.output.read() == b""
    assert set(os.listdir(tmp_path)) == before
    worker.discard()
    other = EarlyWorker.start([])
    assert other is not None
    other.discard()
    assert other.process.returncode is not None
    assert not other.handed


def test_a_background_run_is_owned_by_the_worker_started_before_it(tmp_path: Path) -> None:
    """The worker that owns a new background run was started before the run was created, and the run completes."""
    config = write_config(tmp_path, harness="simulated", repeats=3)
    run = tmp_path / "run"
    done = _cli("run", str(config), "--output", str(run), mark=uuid.uuid4().hex, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    pid = int(done.stdout.split("(pid ")[1].split(")")[0])
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
        started = _started_at(pid)
    except OSError:
        pytest.fail("the run ended before its worker could be looked at")  # 12 attempts take seconds
    assert argv[argv.index(b"worker") + 1] == b"-", argv
    created = events_of(run)[0]
    assert created["type"] == "run.created"
    created_at = dt.datetime.fromisoformat(created["at"].replace("Z", "+00:00")).timestamp()
    assert started < created_at
    assert wait_until_unowned(run)["phase"] == "complete"


def test_run_refused_after_its_worker_started_leaves_no_worker(tmp_path: Path) -> None:
    """A valid config whose run is refused later (its --output is a folder with files) exits 2 and leaves no
    process behind and nothing written."""
    config = write_config(tmp_path, harness="simulated")
    mark = uuid.uuid4().hex
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    done = _cli("run", str(config), "--output", str(taken), mark=mark, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert sorted(os.listdir(taken)) == ["keep.txt"]
    assert _marked(mark) == []


def test_a_background_run_started_beside_a_pluginbench_folder_completes(tmp_path: Path) -> None:
    """Started from a folder that holds a `pluginbench/` folder of the user's (here, its config), the background
    worker still imports the installed package, owns the run and completes it."""
    (tmp_path / "pluginbench").mkdir()
    config = write_config(tmp_path / "pluginbench", harness="simulated")
    run = tmp_path / "run"
    # -P, as the console script starts: no working folder on the import path of the command itself
    done = subprocess.run([sys.executable, "-P", "-m", "pluginbench", "run", str(config), "--output", str(run)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert wait_until_unowned(run)["phase"] == "complete"


def test_the_waiting_worker_has_the_engine_imported_before_its_run_arrives() -> None:
    """While it waits for the start line, the early worker imports the Supervisor, its
    actors and the event loop's backend (they load on the other core while the foreground
    checks and creates the run); end-of-file still means no run."""
    code = ("import io, sys\n"
            "from pluginbench._worker_start import await_start\n"
            "print(await_start(io.BytesIO(b'')), *(m in sys.modules for m in "
            "('pluginbench.actors._worker', 'pluginbench.actors._supervisor', 'anyio._backends._asyncio')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "True", "True", "True"]
