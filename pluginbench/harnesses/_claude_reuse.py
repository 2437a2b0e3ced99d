"""Claude Code discovery answers reused from the cross-run store (:mod:`._discovery_store`).

A stored entry holds the control answers a discovery run gave (``discovery_stdout``, the
control phase only), the receipt judged from them and the run and attempt that produced
them. A reading attempt trusts the answers alone: :func:`from_store` judges them again
with this attempt's own facts (delivered trees, environment, managed settings), so a
receipt that would fail today fails here too and the entry is dropped; a passing one is
this attempt's receipt (``cli_processes: 1``), its coding process's answers still
compared with it field by field before the task. The entry is copied verbatim into the
attempt as ``agent/discovery.origin.json``: the run's evidence does not depend on the
cache root or on the origin run still existing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._discovery_store import DiscoveryStore, copy_origin, has_origin, store_note, write_noted


def from_store(store: DiscoveryStore, key: str, judge: Callable[[str], dict[str, Any]],
               agent_dir: Path) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The receipt judged again from the stored answers under ``key`` (None on a miss, a
    refused entry or answers that fail today's checks), and the ``cache.store`` note."""
    read = store.read(key)
    if read.entry is None:
        return None, store_note(read.status, read.reason)
    entry = read.entry
    origin = entry.get("origin")
    stdout, disc_argv = entry.get("discovery_stdout"), entry.get("discovery_argv")
    if not (has_origin(entry) and isinstance(origin, dict) and isinstance(stdout, str)
            and isinstance(disc_argv, list)):
        return None, store_note("refused", "the entry lacks its origin, answers or discovery argv")
    receipt = judge(stdout)
    if not receipt["passed"]:
        store.drop(key)
        return None, store_note("refused", "the stored answers fail this attempt's checks: "
                                + "; ".join(receipt["problems"])[:500])
    copy_origin(entry, agent_dir)
    receipt["discovery_argv"] = disc_argv
    receipt["cli_processes"] = 1
    receipt["cache"] = {"key": key, "hit": True, "origin_attempt": origin["attempt"], "origin_run": origin["run"],
                        "store": store_note("hit")}
    return receipt, receipt["cache"]["store"]


def keep(store: DiscoveryStore, key: str, *, run: str, attempt: str, cli_version: str | None, answers: str,
         receipt: dict[str, Any]) -> None:
    """Store the answers of a discovery whose coding process agreed with it; say so in
    ``receipt["cache"]["store"]`` (``written``, and ``write_problem`` when it could not be)."""
    write_noted(store, key, store_entry(run=run, attempt=attempt, cli_version=cli_version, control_stdout=answers,
                                        receipt=receipt), receipt)


def store_entry(*, run: str, attempt: str, cli_version: str | None, control_stdout: str,
                receipt: dict[str, Any]) -> dict[str, Any]:
    """What a passing discovery leaves in the store (see :mod:`._discovery_store`)."""
    return {"origin": {"run": run, "attempt": attempt}, "cli_version": cli_version,
            "discovery_argv": receipt["discovery_argv"], "discovery_stdout": control_stdout, "receipt": receipt}
