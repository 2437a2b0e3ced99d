"""One judge call: a fresh sandbox holding a copy of ``task-N/`` (source copied in), the
judge's CLI launched through the project's harness adapter (the same launch, identity
checks and credentials as coding runs), then the trace read back.

The sandbox never holds the key, arm names, traces, final messages or verifier results:
it is built from ``task-N/`` alone, and the harness's private HOME is vanilla (nothing
delivered). Read-only is checked twice: the trace must show no writing tool, and the
workspace exported after the call must hold exactly what was presented.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..environments import SandboxSpec
from ..harness_registry import harness_class
from ..harnesses import AttemptContext, FrozenTreatment
from ..tasks import HarborTask
from ._binding import workspace_digests
from ._spec import JudgeSpec

VANILLA = FrozenTreatment(arm="judge", root=None, guidance=(), skills=(), plugins=(), fingerprint="")


def read_trace(spec: JudgeSpec, call_dir: Path) -> tuple[str | None, list[str]]:
    """The final message and any writing tool the call's saved stdout shows."""
    try:
        stdout = (call_dir / "agent" / "stdout.jsonl").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None, []
    final: tuple[str | None, list[str]] = harness_class(spec.harness).read_final(stdout)
    return final


def native_cli_version(call_dir: Path, harness: str) -> str | None:
    """The CLI version the call's own native evidence reports: the harness's native identity
    (Codex: its rollouts), else ``execution.json`` (Claude)."""
    identity = harness_class(harness).native_identity(call_dir)
    if identity:
        version = identity.get("cli_version")
    else:
        try:
            version = json.loads((call_dir / "execution.json").read_text()).get("cli_version")
        except (OSError, json.JSONDecodeError):
            return None
    return version if isinstance(version, str) else None


async def launch_judge(harness: Any, environment: Any, spec: JudgeSpec, *, task_dir: Path, brief: str,
                       call_dir: Path, seed: int, timeout: float) -> dict[str, Any]:
    """Run one judge call; returns the host evidence (also what ``host-evidence.json`` records)."""
    name = task_dir.name
    with tempfile.TemporaryDirectory(prefix="pb-judge-") as tmp:
        work = Path(tmp) / "work"
        shutil.copytree(task_dir, work, symlinks=False)  # the source link becomes a real copy
        for p in work.rglob("*"):
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        presented = workspace_digests(work)
        home = Path(tmp) / "home"
        home.mkdir()
        harness.deliver(VANILLA, home)
        launched: list[list[str]] = []

        async def on_launch(argv: Any) -> None:
            launched.append(list(argv))
            (call_dir / "launched.json").write_text(json.dumps({"argv": list(argv)[1:]}, indent=1) + "\n")

        task = HarborTask(name, task_dir, brief, "/app", timeout, 60.0, 60.0, "local", None, None,
                          None, None, (), {})
        ctx = AttemptContext("judge", f"{spec.name}-{name}-{call_dir.name}", task, VANILLA, spec.model,
                             spec.effort, seed, timeout, call_dir, on_launch)
        sandbox_spec = SandboxSpec(run_id="judge", attempt_id=ctx.attempt_id, role="coding", task=name,
                                   workspace=work, home=home, readonly=harness.readonly,
                                   hidden=(task_dir.parent,),
                                   egress=harness.egress("review", "no-network"))
        error: str | None = None
        run = None
        exported = Path(tmp) / "export"
        async with environment.sandbox(sandbox_spec) as sb:
            try:
                run = await harness.run(sb, ctx)
            except Exception as exc:  # noqa: BLE001 - a failed call is recorded, never raised
                error = f"{type(exc).__name__}: {exc}"
            await sb.stop()
            await sb.export_workspace(exported)
        after = workspace_digests(exported) if exported.is_dir() else {}
    execution: dict[str, Any] = {}
    with contextlib.suppress(OSError, json.JSONDecodeError):
        execution = json.loads((call_dir / "execution.json").read_text())
    if not execution:
        execution = harness_class(spec.harness).native_identity(call_dir)
    usage = None
    if run is not None:
        u = run.usage
        usage = {"status": u.status, "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                 "cached_input_tokens": u.cached_input_tokens, "reason": u.reason}
    changed = sorted(k for k in set(presented) | set(after) if presented.get(k) != after.get(k))
    return {
        "judge": spec.name, "pair": name, "call": call_dir.name, "launched": bool(launched),
        "harness": spec.harness, "requested_model": spec.model, "requested_effort": spec.effort,
        "model": execution.get("model"), "effort": execution.get("effort"),
        "cli_version": execution.get("cli_version"), "probe": execution.get("probe"),
        "exit_code": run.exit_code if run else None, "timed_out": run.timed_out if run else None,
        "provider_stop": run.provider_stop if run else None,
        "error": error or (run.error if run else None), "usage": usage,
        "workspace_changed": changed,
    }
