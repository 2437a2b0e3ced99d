"""The quick exit of the commands that own a run (``pluginbench/_exit.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: a process that prints without a newline, registers an exit handler and holds an object
#: whose finalizer only the interpreter's teardown runs, then ends through exit_quickly
_PROGRAM = """
import atexit, sys, threading, time
from pluginbench._exit import exit_quickly

class Noisy:
    def __del__(self):
        print("teardown", end="")

kept = Noisy()
atexit.register(lambda: print("handler ", end=""))
print("out ", end="")
mode = sys.argv[1]
if mode == "thread":
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread ", end=""))).start()
exit_quickly(SystemExit("a message" if mode == "message" else 3))
"""


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PROGRAM, mode], capture_output=True, text=True, timeout=60)


def test_a_numeric_status_ends_after_the_exit_handlers_and_a_flush_without_the_teardown() -> None:
    """The status is the exit code, what was printed and the exit handlers' output reach
    stdout, and no finalizer of the interpreter's teardown runs."""
    done = _run("plain")
    assert (done.returncode, done.stdout, done.stderr) == (3, "out handler ", "")


def test_a_live_non_daemon_thread_gets_the_normal_exit_that_waits_for_it() -> None:
    """With a non-daemon thread still running, the exit is Python's own: the thread
    finishes (its output is there), then the handlers and the teardown run."""
    done = _run("thread")
    assert (done.returncode, done.stdout) == (3, "out thread handler teardown")


def test_a_message_status_is_printed_by_the_normal_exit() -> None:
    """``SystemExit("a message")``: Python prints the message and exits 1, as always."""
    done = _run("message")
    assert (done.returncode, done.stdout, done.stderr.strip()) == (1, "out handler teardown", "a message")


def _console(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m pluginbench ARGV`` with a ``sitecustomize`` that has the interpreter's own
    shutdown (the step that waits for threads, before its teardown) print "teardown" to
    stderr."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os, threading\nthreading._register_atexit(lambda: os.write(2, b'teardown'))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "pluginbench", *argv], capture_output=True, text=True, timeout=120,
                          env=env, cwd=tmp_path)


def test_a_run_command_ends_through_the_quick_exit_with_its_status(tmp_path: Path) -> None:
    """``pluginbench run`` of a config file that does not exist: exit 2 and the usual
    error, and no teardown; ``pluginbench status`` of a folder that is no run keeps
    Python's own exit (its teardown runs)."""
    run = _console(tmp_path, "run", str(tmp_path / "missing.yaml"))
    assert run.returncode == 2, run.stderr
    assert "the config file does not exist" in run.stderr and "teardown" not in run.stderr
    status = _console(tmp_path, "status", str(tmp_path / "missing"))
    assert status.returncode == 2 and status.stderr.endswith("teardown"), status.stderr
