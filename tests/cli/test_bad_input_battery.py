"""The bad-input battery (``tools/bad_input_battery.py``, issues 14 and 21) in CI: every case,
each through the real ``pluginbench`` command in its own process, ends ``ok`` (or is skipped
for want of root mounts, bubblewrap or a Docker engine)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _battery() -> Any:
    spec = importlib.util.spec_from_file_location("bad_input_battery", TOOLS / "bad_input_battery.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bad_input_battery"] = module
    spec.loader.exec_module(module)
    return module


BATTERY = _battery()
NAMES = [f"{item} {name}" for item, name, _expected, _fn in BATTERY.CASES if BATTERY.in_ci(item, name)]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    """Every case's outcome, three cases at a time (each case is its own process, mostly
    waiting on its start-up and files; about 2 minutes on two idle cores)."""
    return {f"{r.item} {r.case}": r for r in BATTERY.run_battery(jobs=3, ci=True)}


@pytest.mark.parametrize("name", NAMES)
def test_battery_case_ends_ok(outcomes: dict[str, Any], name: str) -> None:
    """The case ends as the battery requires: a clear refusal (exit 2, file or field and fix,
    nothing written), or acceptance where the product description allows it."""
    r = outcomes[name]
    assert r.verdict in ("ok", "skipped"), f"{name}: {r.verdict} (exit {r.code}): {r.first_line}"


def test_battery_covers_every_class_of_issue_21() -> None:
    """The issue-21 battery has cases of every class the issue counted, and of every listed fault."""
    items = {item for item, *_ in BATTERY.CASES}
    assert {"21T", "21H", "21S", "21V", "21D"} <= items
    names = " ".join(NAMES)
    for fault in ("300 characters", "unreadable", "read-only", "is a folder", "PYTHONIOENCODING", "XDG_CACHE_HOME",
                  "symlink loop", "1,100 folders", ".nan", "collide", "FIFO", ".env", "candidates.toml",
                  "--output inside", "ANSI", "local backend", "require_ready", "[tokens, tokens]", "duplicate key",
                  "--json", "against itself", "binary criteria", "empty guidance", "workdir", "1e-9", "not UTF-8",
                  "--version", "source_scope", "test_scope", "splits", "--dry-run exits", "isolation"):
        assert fault in names, fault


def test_classify_flags_what_a_refusal_must_not_do() -> None:
    """The verdicts: a traceback, a hang, files left behind or a refusal without file/field and
    fix are each caught, and a clear refusal is ok."""
    import subprocess

    def done(code: int, err: str) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], code, "", err)

    clear = "error: bad\n  file:  x.yaml\n  fix:   do y"
    assert BATTERY.classify(2, done(2, clear), {"wrote": False, "clear": True}) == "ok"
    assert BATTERY.classify(2, done(2, clear), {"wrote": True, "clear": True}) == "wrote"
    assert BATTERY.classify(2, done(2, "error: bad"), {"wrote": False, "clear": True}) == "vague"
    assert BATTERY.classify(2, done(1, "Traceback (most recent call last):"), False) == "traceback"
    assert BATTERY.classify(2, done(0, "fine"), False) == "silent"
    assert BATTERY.classify((0, 2), done(0, "fine"), False) == "ok"
    assert BATTERY.classify(2, BATTERY.Hung([], -9, "", ""), False) == "hang"


def test_path_errors_become_refusals_naming_the_file() -> None:
    """An OSError about a user's path (also inside an ExceptionGroup) and a RecursionError are
    bad input naming the file and a fix; an unrelated OSError stays an error of PluginBench."""
    import errno

    from pluginbench.cli._common import input_error_of

    denied = input_error_of(PermissionError(errno.EACCES, "Permission denied", "/x/events.jsonl"))
    assert denied is not None and denied.file == "/x/events.jsonl" and denied.fix
    grouped = input_error_of(ExceptionGroup("task group", [IsADirectoryError(errno.EISDIR, "Is a directory", "/g")]))
    assert grouped is not None and grouped.file == "/g"
    assert input_error_of(RecursionError()) is not None
    assert input_error_of(OSError(errno.ENOSPC, "No space left on device", "/d")) is None


def test_the_attackers_cases_cover_every_class_and_ci_runs_a_subset_of_them() -> None:
    """Items 21XO (OS errors), 21XS (silent acceptances), 21XL (log damage) and 21XC (commands and flags) each
    have cases, every CI subset name is a registered case, and CI runs some of each class."""
    import bad_input_battery_21x

    names = {name for item, name, *_ in BATTERY.CASES if item.startswith("21X")}
    assert names >= bad_input_battery_21x.CI_CASES, sorted(bad_input_battery_21x.CI_CASES - names)
    for item in ("21XO", "21XS", "21XL", "21XC"):
        mine = [name for i, name, *_ in BATTERY.CASES if i == item]
        assert len(mine) >= 30 and any(n in bad_input_battery_21x.CI_CASES for n in mine), item
