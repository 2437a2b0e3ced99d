"""``status --watch`` redraws from the ledger's groups and the rows of the tasks it lists, and plain ``status``
from the groups and every row's terminal cell (issue 27, item 3)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from pluginbench.cli._watch import render_status
from pluginbench.status import status_snapshot, terminal_snapshot, watch_snapshot
from tests.status.test_status_json import _run


def _seed_with_tasks(tmp_path: Path, n: int) -> Path:
    for seed in range(40):
        root = tmp_path / str(seed)
        root.mkdir()
        _run(root, seed)
        if len({a["task"] for a in status_snapshot(root, now=0)["attempts"]}) >= n:
            return root
    raise AssertionError("no random run with enough tasks")


def test_the_watch_view_has_the_full_counts_and_only_the_rows_it_lists(tmp_path: Path) -> None:
    """With a one-task limit: every count and sum is the full read's, the rows are the first task's and the running ones, and the view says how many tasks it left out."""
    root = _seed_with_tasks(tmp_path, 3)
    full = status_snapshot(root, now=0)
    snap = watch_snapshot(root, tasks=1, now=0)
    assert snap["states_source"] == "ledger"
    assert {k: v for k, v in snap.items() if k not in ("attempts", "tasks_total", "tasks_limit")} == \
        {k: v for k, v in full.items() if k != "attempts"}
    first = min(a["task"] for a in full["attempts"])
    assert snap["attempts"] == [a for a in full["attempts"] if a["task"] == first or a["state"] == "running"]
    assert (snap["tasks_total"], snap["tasks_limit"]) == (len({a["task"] for a in full["attempts"]}), 1)
    out = io.StringIO()
    Console(file=out, width=200).print(render_status(snap, max_tasks=snap["tasks_limit"]))
    shown = {a["task"] for a in snap["attempts"]}
    assert f"and {snap['tasks_total'] - len(shown)} more tasks" in out.getvalue()


def test_plain_status_draws_the_full_reads_view_from_the_ledger(tmp_path: Path) -> None:
    """Plain status from the ledger: every count and sum is the full read's, each attempt holds the full read's cell fields, and the drawn view is the same text."""
    root = _seed_with_tasks(tmp_path, 3)
    full = status_snapshot(root, now=0)
    snap = terminal_snapshot(root, now=0)
    assert snap["states_source"] == "ledger"
    assert {k: v for k, v in snap.items() if k != "attempts"} == {k: v for k, v in full.items() if k != "attempts"}
    fields = ("id", "task", "arm", "repeat", "state", "outcome", "node")
    assert snap["attempts"] == [{k: a[k] for k in fields} for a in full["attempts"]]
    drawn = []
    for view in (snap, full):
        out = io.StringIO()
        Console(file=out, width=120).print(render_status(view))
        drawn.append(out.getvalue())
    assert drawn[0] == drawn[1]
