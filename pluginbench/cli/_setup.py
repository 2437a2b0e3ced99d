"""``init`` and ``check``: write a starter config; check one without any model call."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer
from rich.markup import escape

from ..config import is_cross_agent, per_harness, template_text
from ..errors import ConfigError
from ..plan import plan_summary
from ._common import console, errors_to_exit_codes, print_failed_control, print_json

if TYPE_CHECKING:
    from ..config import Evaluation
    from ..tasks import HarborTask


@errors_to_exit_codes
def init_command(
    path: Annotated[Path, typer.Argument(help="Where to write the starter config.")] = Path("evaluation.yaml"),
) -> None:
    """Write a commented starter evaluation config. Never overwrites a file."""
    if path.is_symlink():
        raise ConfigError(
            f"{path} is a symlink; init writes only a new regular file", file=str(path),
            fix="choose a path that does not exist yet",
        )
    if path.exists():
        raise ConfigError(
            f"{path} already exists; init never overwrites", file=str(path),
            fix="choose another path, or edit the existing file",
        )
    if path.suffix not in (".yaml", ".yml", ".json"):
        raise ConfigError(
            f"unsupported config extension '{path.suffix}'", file=str(path),
            fix="name it evaluation.yaml (or .yml or .json): check and run read only those",
        )
    if not path.parent.is_dir():
        raise ConfigError(
            f"the folder {path.parent} does not exist", file=str(path),
            fix=f"create it first (mkdir -p {path.parent}) or choose another path",
        )
    if path.suffix == ".json":
        import json

        import yaml

        text = json.dumps(yaml.safe_load(template_text()), indent=2) + "\n"
    else:
        text = template_text()
    created = False
    try:
        with open(path, "x", encoding="utf-8") as fh:  # "x": never through a link, never over a file
            created = True
            fh.write(text)
    except OSError as exc:
        if created:
            path.unlink(missing_ok=True)  # a half-written starter is worse than none
        raise ConfigError(
            f"cannot write {path}: {exc.strerror}", file=str(path),
            fix="choose a writable folder (not a read-only mount)",
        ) from None
    console.print(f"wrote {path}; edit it, then: pluginbench check {path}", highlight=False)


@errors_to_exit_codes
def check_command(
    config: Annotated[Path, typer.Argument(help="The evaluation config to check.")],
    readiness: Annotated[bool, typer.Option("--readiness/--no-readiness", help="Also run the oracle and nop controls on every task.")] = True,
    json_out: Annotated[bool, typer.Option("--json", help="Print the check results as JSON.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also print each task's verifier contract and each vanilla attempt's cache decision.")] = False,
) -> None:
    """Run every check that needs no model call.

    The config, each task (settings that would grant the host, such as privileged or
    host volumes, are refused with exit 2; settings the backend ignores are named),
    each treatment (admission rules), credentials and refused variables, the sandbox
    policy and each task's sandbox limits, the Docker engine and capacity, and (by default)
    readiness: oracle must pass and nop must fail on every task through the real patch
    and verifier path."""
    from ..actors import (
        check_inputs,
        effective_isolation,
        load_config,
        plan_decisions,
        read_prices,
        resolve_paths,
    )

    loaded = load_config(config)
    ev = resolve_paths(loaded)
    cross = is_cross_agent(ev)
    if cross:  # runner.harnesses: every harness's admission; readiness and contracts do not depend on it
        from ..actors import check_group_inputs

        tasks = check_group_inputs(loaded)
        harnesses = per_harness(ev)
        full, ev = ev, harnesses[0][1]
    else:
        tasks = check_inputs(ev, loaded.path)
    from ..tasks import admit_contract
    from ._plan_lines import sandbox_limits

    contracts = {tid: admit_contract(t) for tid, t in sorted(tasks.items())}
    from ..environments import backend_of
    from ..tasks import ignored_settings

    backend = backend_of(ev, loaded.path)
    ignored = {tid: list(found) for tid, t in sorted(tasks.items())
               if (found := ignored_settings(t.settings, backend.task_settings))}
    results: dict[str, Any] = {
        "config": str(loaded.path),
        "tasks": sorted(tasks),
        "contracts": {tid: msgspec.to_builtins(c) for tid, c in contracts.items()},
        "isolation": effective_isolation(ev),
        "plan": {**{k: v for k, v in plan_summary(ev, list(tasks), read_prices(ev)).items() if k != "slots"},
                 "limits": sandbox_limits(ev, tasks)},
        "vanilla_cache": plan_decisions(ev, tasks),
    }
    if cross:
        from ..plan import cross_agent_plan

        plan = cross_agent_plan(full, list(tasks), read_prices(full))
        for p in plan["per_harness"].values():
            p.pop("slots")
        results["plan"] = {**plan, "limits": sandbox_limits(ev, tasks)}
        results["vanilla_cache"] = {name: plan_decisions(sub, tasks) for name, sub in harnesses}
    results |= {
        "readiness": [],
        "ignored_settings": ignored,
    }
    sandbox_root = backend.sandbox_root(ev)
    if sandbox_root is not None:  # docker: whether a sandbox's root is the host's
        results["sandbox_root"] = sandbox_root
    if not json_out:
        # Everything known without a sandbox is printed before readiness, which can take minutes.
        console.print(f"config ok: {len(tasks)} tasks, arms {', '.join(results['plan']['arms'])}, isolation {results['isolation']}", highlight=False, markup=False)
        if verbose:
            for tid, c in contracts.items():
                console.print(f"contract {tid}: {c.describe()}", highlight=False, markup=False)
        else:
            console.print(f"verifier contracts: {len(contracts)} task(s) admitted (--verbose prints each)",
                          highlight=False, markup=False)
        if sandbox_root is not None:
            console.print(f"sandbox root: {sandbox_root_words(sandbox_root)}", highlight=False, markup=False,
                          style="yellow" if sandbox_root == "none" else None)
        for tid, names in ignored.items():
            console.print(f"task {tid}: the {backend.name} backend ignores {', '.join(names)}",
                          style="yellow", highlight=False, markup=False)
        from ..stats import power_sentence
        from ._plan_lines import cost_line, print_cache_decisions

        if cross:
            from ..plan import cross_agent_lines

            for line in cross_agent_lines(results["plan"]):
                console.print(line, highlight=False, markup=False)
            first = next(iter(results["plan"]["per_harness"].values()))
            console.print("power (per harness): " + power_sentence(first["power"]), highlight=False, markup=False)
            for name, cache in results["vanilla_cache"].items():
                console.print(f"{name}:", highlight=False, markup=False, end=" ")
                print_cache_decisions(cache, verbose=verbose)
        else:
            console.print(cost_line(results["plan"]["cost"]), highlight=False, markup=False)
            if results["plan"].get("generation"):
                from ..plan import generation_line

                console.print(generation_line(results["plan"]["generation"]), highlight=False, markup=False)
            console.print("power: " + power_sentence(results["plan"]["power"]), highlight=False, markup=False)
        if ev.stopping is not None and (seq := (first if cross else results["plan"]).get("sequential")):
            from ..plan import sequential_lines

            for line in sequential_lines(seq):
                console.print(("per harness: " if cross else "") + line, highlight=False, markup=False)
        if not cross:
            print_cache_decisions(results["vanilla_cache"], verbose=verbose)
    if readiness:
        if not json_out:
            console.print(f"readiness: oracle and nop on each of {len(tasks)} task(s), then the selected measures' "
                          "checks; each line appears as its control finishes", highlight=False, markup=False)
        results["readiness"], results["measurements"] = asyncio.run(
            _readiness(ev, tasks, on_row=None if json_out else _print_control))
    measures = results.get("measurements") or {}
    results["warnings"] = list(measures.get("warnings", []))
    results["not_measured"] = list(measures.get("not_measured", []))
    ok = all(r["ok"] for r in results["readiness"]) and not measures.get("blocking")
    results["ok"] = ok
    if json_out:
        print_json(results)
    else:
        print_measure_readiness(measures)
        console.print(_verdict(results, readiness, measures), highlight=False)
    if not ok:
        raise typer.Exit(1)


def sandbox_root_words(user_namespace: str) -> str:
    """``check``'s line about whose uid a sandbox's root is (:meth:`Backend.sandbox_root`)."""
    if user_namespace == "none":
        return "the host's root (no user-namespace remapping; accepted by environment.allow_host_root)"
    return f"an unprivileged host uid ({user_namespace})"


def _print_control(r: dict[str, Any]) -> None:
    mark = "[green]ok[/]" if r["ok"] else "[red]FAILED[/]"
    console.print(f"readiness {escape(r['task'])}: {r['control']} {mark}" + (f" — {escape(r['reason'])}" if r["reason"] else ""))
    print_failed_control(r)


def _verdict(results: dict[str, Any], readiness: bool, measures: dict[str, Any]) -> str:
    """The last line of ``check``: whether a run of this config would start, and what to do."""
    failed = sum(1 for r in results["readiness"] if not r["ok"])
    blocking = len(measures.get("blocking", []))
    if failed or blocking:
        problems = ([f"{failed} readiness control(s) failed"] if failed else []) + (
            [f"{blocking} measure problem(s) stop the run"] if blocking else [])
        return f"[red]check failed:[/] {escape(', '.join(problems))}; fix them (above) before `pluginbench run`"
    if not readiness:
        return ("[green]check passed[/] without readiness (--no-readiness): run it without the flag to try the "
                "oracle and nop controls before spending anything")
    return "[green]check passed:[/] `pluginbench run` would start coding with these settings"


def print_measure_readiness(measures: dict[str, Any]) -> None:
    """The selected measures' readiness per task, their warnings and what stops the run."""
    for m in measures.get("readiness", []):
        mark = {"ready": "[green]ready[/]", "not_configured": "[yellow]not_configured[/]"}.get(m["state"], "[red]broken[/]")
        console.print(f"measure readiness {escape(m['task'])}: {escape(m['measure'])} {mark}"
                      + (f" — {escape(m['reason'])}" if m["reason"] else ""))
    for line in measures.get("warnings", []):
        console.print(escape(line), style="yellow")
    for line in measures.get("blocking", []):
        console.print("[red]stops the run:[/] " + escape(line))


def measures_with_checks(ev: Evaluation) -> bool:
    """Whether a selected measure declares a readiness check (only those can stop a run)."""
    from .. import measures as registry

    return any(spec.check is not None for spec in registry.selected(ev.measurements))


def measure_readiness(ev: Evaluation, tasks: Mapping[str, HarborTask]) -> dict[str, Any]:
    """The selected measures' readiness document, as ``check`` computes it, without the
    oracle and nop controls (``run --dry-run``)."""
    return asyncio.run(_readiness(ev, tasks, controls=False))[1]


async def _readiness(
    ev: Evaluation, tasks: Mapping[str, HarborTask], on_row: Callable[[dict[str, Any]], None] | None = None,
    *, controls: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Oracle and nop on every task (unless not ``controls``), then the selected measures'
    readiness, in a throwaway run directory; ``on_row`` sees each control's row as soon as
    it finishes."""
    import anyio

    from ..actors import (
        Engine,
        Outbox,
        cache_root,
        freeze_task,
        measurement_readiness,
        readiness_document,
        record_contract,
        run_control,
    )
    from ..environments import backend_of
    from ..harnesses import make_harness
    from ..measures import settings_of
    from ..rundir import RunDir
    from ..tasks import load_task

    rows: list[dict[str, Any]] = []
    # Kept when a control fails, so the evidence folder that check prints still exists.
    tmp = tempfile.mkdtemp(prefix="pluginbench-check-")
    try:
        rd = RunDir(Path(tmp))
        engine = Engine(
            run_dir=rd, run_id="check", evaluation=ev,
            environment=backend_of(ev).make(ev, "check"),
            harness=make_harness("nop"), task_sources={}, outbox=Outbox(None),  # type: ignore[arg-type]  # no Supervisor: controls record no events
            hidden=(cache_root(), Path(ev.tasks.source or "").resolve()),
        )
        for task_id, task in tasks.items():
            freeze_task(task.root, rd.frozen_task(task_id), task_id)
            engine.tasks[task_id] = load_task(rd.frozen_task(task_id), task_id)
            record_contract(engine, task_id)
        if backend_of(ev).uses_images:
            from ..actors import check_capacity, prepare_task_images

            await check_capacity(engine)
            for task_id in tasks:
                await prepare_task_images(engine, task_id)
        # ``jobs`` tasks at a time (the capacity check made sure they fit), each task's oracle
        # then nop; rows in task order, each printed as it finishes.
        done: dict[tuple[int, int], dict[str, Any]] = {}
        failures: dict[int, Exception] = {}
        limiter = anyio.CapacityLimiter(max(1, ev.jobs))

        async with anyio.create_task_group() as tg:
            async def controls_of(i: int, task_id: str) -> None:
                async with limiter:
                    try:
                        for j, control in enumerate(("oracle", "nop")):
                            got = await run_control(engine, task_id, control)
                            row = {"task": task_id, "control": control, "ok": got.ok, "reward": got.reward,
                                   "reason": got.reason, "verifier_tail": got.verifier_tail,
                                   "evidence": str(got.evidence) if got.evidence is not None else None}
                            done[(i, j)] = row
                            if on_row is not None:
                                on_row(row)
                    except Exception as exc:  # noqa: BLE001 - re-raised below, the first in task order
                        failures[i] = exc
                        tg.cancel_scope.cancel()

            for i, task_id in enumerate(tasks if controls else ()):
                tg.start_soon(controls_of, i, task_id)
        rows.extend(done[key] for key in sorted(done))
        if failures:
            raise failures[min(failures)]
        # Readiness per task and selected measure (coverage: its command twice on the starting source).
        mrows = await measurement_readiness(engine, list(tasks), Path(tmp) / "measure")
        mdoc = readiness_document(mrows, settings_of(ev.measurement_settings).require_ready, list(ev.measurements))
    finally:
        if all(r["ok"] for r in rows):
            shutil.rmtree(tmp, ignore_errors=True)
    return rows, mdoc
