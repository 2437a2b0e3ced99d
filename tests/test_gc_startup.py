"""The cyclic collector paused while a command starts (``pluginbench/_gc.py``)."""

from __future__ import annotations

import subprocess
import sys


def _states(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", "import gc; from pluginbench import _gc\n" + code],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_start_up_pauses_the_collector_and_its_end_freezes_and_resumes_it() -> None:
    """``pause_startup`` turns the collector off; ``end_startup`` turns it back on with what
    start-up made frozen, and a second ``end_startup`` changes nothing."""
    code = ("_gc.pause_startup(); print(gc.isenabled(), gc.get_freeze_count() == 0); _gc.end_startup(); "
            "print(gc.isenabled(), gc.get_freeze_count() > 0); gc.disable(); _gc.end_startup(); print(gc.isenabled())")
    assert _states(code) == ["False", "True", "True", "True", "False"]


def test_the_end_of_start_up_leaves_a_collector_someone_else_paused_alone() -> None:
    """When the collector was already off (a caller's ``paused_gc``), start-up neither owns it
    nor turns it on."""
    code = "gc.disable(); _gc.pause_startup(); _gc.end_startup(); print(gc.isenabled(), gc.get_freeze_count())"
    assert _states(code) == ["False", "0"]


def test_a_command_runs_with_the_collector_on() -> None:
    """The console entry point turns the collector back on before a command other than a run
    does its work (``pluginbench status`` of a folder that is no run: an error, said as usual)."""
    code = ("import sys; from pluginbench import _main\n"
            "sys.argv = ['pluginbench', 'status', '/nonexistent-run-dir']\n"
            "try:\n"
            "    _main.main()\n"
            "except SystemExit as e:\n"
            "    print(gc.isenabled(), e.code)\n")
    assert _states(code) == ["True", "2"]
