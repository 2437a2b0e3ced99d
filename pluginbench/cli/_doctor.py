"""``doctor``: check a real harness on this machine without spending anything."""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import console, errors_to_exit_codes, print_json


@errors_to_exit_codes
def doctor_command(
    harness: Annotated[list[str] | None, typer.Option("--harness", help="A harness with a pinned CLI: claude, codex, qwen, opencode or gemini (repeatable); default all of them.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    ray: Annotated[str | None, typer.Option("--ray", metavar="ADDRESS", help=(
        "Check a Ray cluster for the ray backend (head GCS address, or auto); alone, only the cluster."))] = None,
    ray_label: Annotated[str, typer.Option("--ray-label", help="The node label of worker nodes.")] = "pluginbench-node",
    ray_sandbox: Annotated[str, typer.Option("--ray-sandbox", help=(
        "The sandbox the ray backend runs on each node: bubblewrap, or docker (then each node's own "
        "Docker Engine is checked, and the head's, where task images are prepared)."))] = "bubblewrap",
    ray_docker_host: Annotated[list[str] | None, typer.Option("--ray-docker-host", metavar="NODE=unix:///SOCK", help=(
        "A node's Docker Engine when it is not the node's default (settings.nodes.<name>.docker_host); "
        "repeatable."))] = None,
) -> None:
    """Check that a real harness can run here, spending nothing.

    Per harness: the CLI is installed, its version (qualified or not), the flags the
    pinned launch needs, whether a credential is present (not whether it is valid), a
    sandbox boundary, and one real attempt of the CLI against PluginBench's loopback
    model server with a sample treatment, printing what loaded and the parsed usage.
    With ``--ray ADDRESS``: the cluster answers, it has worker nodes carrying the label,
    and each node can make sandboxes and runs this PluginBench and Python version; with
    ``--ray-sandbox docker`` each node's own Docker Engine answers with Linux containers.
    Exits 0 only when every check passed.
    """
    import anyio
    import msgspec

    from ..actors import Check, end_to_end, static_checks
    from ..harness_registry import cli_pins

    with_cli = list(cli_pins())
    names = harness or ([] if ray else with_cli)
    report: dict[str, list[dict[str, object]]] = {}
    details: dict[str, object] = {}
    all_ok = True
    if ray:
        from ..actors import cluster_checks

        if ray_sandbox not in ("bubblewrap", "docker"):
            raise typer.BadParameter(f"{ray_sandbox!r}: use bubblewrap or docker", param_hint="--ray-sandbox")
        hosts: dict[str, str] = {}
        for item in ray_docker_host or []:
            node, sep, host = item.partition("=")
            if not sep or not node or not host.startswith("unix://"):
                raise typer.BadParameter(f"{item!r}: use NODE=unix:///path/to/docker.sock", param_hint="--ray-docker-host")
            hosts[node] = host
        checks = anyio.run(cluster_checks, ray, ray_label, ray_sandbox, hosts, backend="asyncio")
        report["ray"] = [c._asdict() for c in checks]
        all_ok &= all(c.ok for c in checks)
        if not json_out:
            console.print("[bold]ray cluster[/]")
            for c in checks:
                mark = "[green]ok[/]  " if c.ok else "[red]FAIL[/]"
                console.print(f"  {mark} {c.name}: {c.detail}", highlight=False)
    for name in names:
        if name not in with_cli:
            raise typer.BadParameter(f"unknown harness {name!r}: use {' or '.join(with_cli)}", param_hint="--harness")
        checks, cli, version = static_checks(name)
        if cli is not None and version is not None:
            check, detail = anyio.run(end_to_end, name, cli, version, backend="asyncio")
            checks.append(check)
            details[name] = msgspec.to_builtins(detail)
        else:
            checks.append(Check("end-to-end probe attempt", False, "skipped: the CLI is not usable"))
        report[name] = [c._asdict() for c in checks]
        all_ok &= all(c.ok for c in checks)
        if not json_out:
            console.print(f"[bold]{name}[/]")
            for c in checks:
                mark = "[green]ok[/]  " if c.ok else "[red]FAIL[/]"
                console.print(f"  {mark} {c.name}: {c.detail}", highlight=False)
            probe_detail = details.get(name)
            if isinstance(probe_detail, dict) and probe_detail.get("receipt"):
                console.print(f"  loaded (native-treatment.json): {_summary(probe_detail['receipt'])}", highlight=False)
    if json_out:
        print_json({"ok": all_ok, "checks": report, "details": details})
    if not all_ok:
        raise typer.Exit(1)


def _summary(receipt_text: str) -> str:
    import json

    try:
        data = json.loads(receipt_text)
    except ValueError:
        return "unreadable receipt"
    keys = [k for k in ("memory_file", "memory_files", "skills", "plugins", "hooks", "agents", "agents_md") if k in data]
    return "; ".join(f"{k}={data[k]}" for k in keys)[:600] or "receipt saved"
