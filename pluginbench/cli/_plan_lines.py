"""The plan a dry run prints (``run --dry-run``, ``check``): attempts, budgets, cost,
limits, network, capabilities and the vanilla cache's decisions, as a table or JSON.

Pure formatting of a plan summary (``pluginbench.plan.plan_summary``): nothing here starts,
reads or writes a run; only dry runs and ``check`` import it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from rich.markup import escape

from ..plan import generation_line, sequential_lines
from ..stats import power_sentence
from ._common import console, print_json


def recorded_cache(state: Any) -> dict[str, Any]:
    """A saved run's cache decisions as preparation recorded them (none before preparation)."""
    attempts = [
        {"attempt_id": d.attempt_id, "task": c.task, "repeat": d.repeat, "cohort": c.cohort,
         "decision": d.decision, "reason": d.reason}
        for c in state.vanilla_cache.values() for d in c.decisions
    ]
    return {"recorded": True, "attempts": attempts,
            "planned_hits": sum(1 for a in attempts if a["decision"] in ("hit", "rejected"))}


def config_value(value: object) -> str:
    """A capability value as the config spells it (true, false, null, 4), not Python's repr."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def print_cache_decisions(cache: dict[str, Any], *, verbose: bool = True) -> None:
    """The hit count, then (``verbose``) one line per vanilla attempt: hit or miss, and the
    cohort (relative to the cache root)."""
    if cache.get("enabled") is False:
        console.print("vanilla cache: off (runner.vanilla_cache or PLUGINBENCH_VANILLA_CACHE)", highlight=False)
        return
    attempts = cache.get("attempts") or []
    hits = sum(1 for a in attempts if a["decision"] == "hit")
    where = f" under {cache['root']}" if cache.get("root") else ""
    # A run directory shows what its preparation decided then, not a lookup made now.
    label = "vanilla cache (as decided when the run prepared)" if cache.get("recorded") else "vanilla cache"
    console.print(f"{label}: {hits} of {len(attempts)} vanilla attempts hit{where}"
                  + ("" if verbose or not attempts else " (--verbose lists each)"), highlight=False)
    for a in attempts if verbose else ():
        why = f" ({a['reason']})" if a.get("reason") else ""
        console.print(f"  {a['attempt_id']}: {a['decision']} {a['cohort']}/{a['repeat']}{why}", highlight=False)


def cost_line(cost: dict[str, Any]) -> str:
    """The plan's worst case in dollars, and the ceiling, in one line."""
    ceiling = f"; cost_ceiling ${cost['cost_ceiling_usd']:g}" if cost.get("cost_ceiling_usd") is not None else "; no cost_ceiling"
    if cost["worst_case_usd"] is None:
        return f"worst-case cost: unknown ({cost['reason']}){ceiling}"
    return (f"worst-case cost: ${cost['worst_case_usd']:.2f} (${cost['worst_case_usd_per_attempt']:.4f} per attempt; "
            f"{cost['basis']}){ceiling}")


# The plan table's slot, task (folded), arm (folded) and repeat columns and its borders.
_TABLE_WITHOUT_ID = 40


def counted(n: int, noun: str) -> str:
    """``1 repeat``, ``3 repeats``: a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def sandbox_limits(ev: Any, tasks: Mapping[str, Any]) -> dict[str, dict[str, object]]:
    """Each task's sandbox limits as the plan shows them (memory, cpus, processes, disk)."""
    from ..environments import task_limits

    env = ev.environment
    return {tid: task_limits(t.memory_mb, t.cpus, t.pids_limit, t.storage_mb, env.container_cpus,
                             env.container_memory_mb).describe() for tid, t in sorted(tasks.items())}


def print_plan(summary: dict[str, Any], json_out: bool) -> None:
    if json_out:
        print_json(summary)
        return
    from rich.table import Column, Table
    from rich.text import Text

    console.print(
        f"[bold]{escape(str(summary['name']))}[/]: {summary['coding_attempts']} coding attempts = "
        f"{counted(len(summary['tasks']), 'task')} × {counted(len(summary['arms']), 'arm')} × "
        f"{counted(summary['repeats'], 'repeat')}; "
        f"jobs {summary['jobs']}, seed {summary['seed']}, harness {summary['harness']}",
        highlight=False,
    )
    budgets = summary["budgets"]
    console.print(f"budget: {budgets['timeout_seconds_per_attempt']} s per attempt; model calls: {summary['model_calls']}", highlight=False, markup=False)
    console.print(cost_line(summary["cost"]), highlight=False, markup=False)
    if summary.get("generation"):
        console.print(generation_line(summary["generation"]), highlight=False, markup=False)
    for tid, lim in (summary.get("limits") or {}).items():
        console.print(f"limits {tid}: memory {lim['memory_mb']} MB, cpus {lim['cpus'] or 'no cap'}, "
                      f"{lim['pids']} processes, disk {lim['storage_mb']} MB", highlight=False, markup=False)
    if summary.get("power"):
        console.print("power: " + power_sentence(summary["power"]), highlight=False, markup=False)
    if summary.get("sequential"):
        for line in sequential_lines(summary["sequential"]):
            console.print(line, highlight=False, markup=False)
    caps = summary["capabilities"]
    console.print("capabilities: " + ", ".join(
        f"{key} {config_value(caps[key]['value'])} ({caps[key]['enforcement']})" for key in ("subagents", "max_threads", "max_depth")
    ), highlight=False, markup=False)
    slots: list[dict[str, Any]] = summary["slots"]
    width = max((len(s["attempt_id"]) for s in slots), default=0)
    # Attempt ids are what users copy, so they are never cut: when the table cannot hold
    # them whole beside the other columns, plain columns (as for thousands of rows, which
    # a rich table takes seconds to lay out).
    if len(slots) > 500 or width + _TABLE_WITHOUT_ID > console.width:
        sys.stdout.write("slot  " + "attempt".ljust(width) + "  repeat\n")
        sys.stdout.writelines(f"{s['slot']:>4}  {s['attempt_id']:<{width}}  {s['repeat']:>6}\n" for s in slots)
        sys.stdout.flush()
    else:
        table = Table("slot", Column("attempt", no_wrap=True, min_width=width), Column("task", overflow="fold"),
                      Column("arm", overflow="fold"), "repeat")
        for s in slots:
            table.add_row(*(Text(str(s[k])) for k in ("slot", "attempt_id", "task", "arm", "repeat")))  # never markup
        console.print(table)
    for task, policy in summary.get("network", {}).items():
        console.print(f"network {task}: coding {policy['coding']}; verifier and readiness {policy['verifier']}",
                      highlight=False, markup=False)
    if "vanilla_cache" in summary:
        print_cache_decisions(summary["vanilla_cache"])
    if "resume" in summary:
        resume: dict[str, int] = summary["resume"]
        console.print(
            f"resume: {resume['complete']} complete (never coded again), {resume['to_code']} to code, "
            f"{resume['source_only_replays']} source-only grades to replay", highlight=False)
    console.print("dry run: nothing was started")
