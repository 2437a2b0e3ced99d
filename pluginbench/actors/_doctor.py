"""``pluginbench doctor``: is this machine ready to run a real harness? Spends nothing.

Every check reads the harness's own declaration (the registry): its pinned CLI and the
flags the launch needs, its credential check, the model its probe attempt asks for.
Checks, per harness: the CLI is installed; its version (qualified or not); the flags the
pinned launch needs are in its ``--help``; a credential is present (not whether it is
valid); a sandbox boundary exists; and an end-to-end attempt of the real CLI against the
loopback probe, with a sample treatment (guidance + a skill), in a real sandbox, graded
by a real verifier. It prints what loaded and the parsed usage.
"""

import hashlib
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..harness_registry import harness_class
from ..harnesses import FrozenTreatment
from ..tasks import load_task, scan_tree
from ._pipeline import code_attempt, grade_patch

MARKER = "PLUGINBENCH-GUIDANCE-MARKER"


class Check(NamedTuple):
    name: str
    ok: bool
    detail: str


def _help_text(cli: Path, help_argv: tuple[str, ...]) -> str:
    argv = [str(cli), *help_argv]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                              start_new_session=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"<{exc}>"
    return done.stdout + done.stderr


def static_checks(harness: str) -> tuple[list[Check], Path | None, str | None]:
    from ..environments import bwrap_available
    from ..probe import cli_version, find_cli

    cls = harness_class(harness, field="--harness")
    pin = cls.cli
    checks: list[Check] = []
    cli = find_cli(harness)
    checks.append(Check("cli installed", cli is not None, str(cli) if cli else "not found: run tools/install-clis.sh"))
    version = cli_version(cli) if cli else None
    if cli is not None:
        qualified = version == pin.version
        checks.append(Check(
            "cli version", version is not None,
            f"{version} ({'qualified' if qualified else f'not qualified; PluginBench is qualified on {pin.version}'})",
        ))
        text = _help_text(cli, pin.help_argv)
        missing = [f for f in pin.launch_flags if f not in text]
        checks.append(Check("launch flags", not missing, "all present" if not missing else "missing: " + ", ".join(missing)))
    present, detail = cls.credential_check()
    checks.append(Check("credential present", present, detail))
    bw = bwrap_available()
    checks.append(Check("sandbox boundary", bw, "bubblewrap works" if bw else "bwrap is missing or unusable: apt-get install bubblewrap"))
    return checks, cli, version


def _write_sample(root: Path) -> tuple[Path, FrozenTreatment]:
    task = root / "task"
    (task / "workspace").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "workspace" / "README.md").write_text("# doctor\n")
    (task / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n')
    (task / "instruction.md").write_text("Create solution.py with add(a, b) returning a + b.\n")
    test = task / "tests" / "test.sh"
    test.write_text(
        "#!/usr/bin/env bash\ncd \"${APP_DIR:-/app}\"; mkdir -p \"${LOGS_DIR:-/logs}/verifier\"\n"
        "python3 -c 'import solution,sys; sys.exit(0 if solution.add(2,3)==5 else 1)' "
        "&& echo 1 > \"${LOGS_DIR:-/logs}/verifier/reward.txt\" || echo 0 > \"${LOGS_DIR:-/logs}/verifier/reward.txt\"\n"
    )
    test.chmod(0o755)
    pkg = root / "treatment"
    guidance = pkg / "guidance" / "00-core.md"
    guidance.parent.mkdir(parents=True)
    guidance.write_text(f"# Sample guidance\n{MARKER}: this line proves the guidance reached the model.\n")
    skill = pkg / "skills" / "tidy-code"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy-code\ndescription: Keep code tidy.\n---\nBe tidy.\n")
    fp = hashlib.sha256(repr(scan_tree(pkg)).encode()).hexdigest()
    return task, FrozenTreatment("sample", pkg, (guidance,), (skill,), (), fp)


async def end_to_end(harness_name: str, cli: Path, version: str) -> tuple[Check, dict[str, Any]]:
    """One attempt of the real CLI against the probe (guided scenario) with a sample treatment."""
    from ..environments import LocalEnvironment
    from ..harnesses import make_harness
    from ..probe import SCENARIOS_DIR, ProbeServer, load_scenario

    cls = harness_class(harness_name, field="--harness")
    model = cls.doctor_model or harness_name
    detail: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="pluginbench-doctor-") as tmp, \
            ProbeServer(load_scenario(SCENARIOS_DIR / "guided.yaml")) as probe:
        root = Path(tmp)
        task_dir, treatment = _write_sample(root)
        task = load_task(task_dir, "doctor")
        options: dict[str, Any] = {"cli_path": cli, "cli_version": version, "probe_base_url": probe.base_url,
                                   **cls.doctor_options()}
        harness = make_harness(harness_name, **options)
        env = LocalEnvironment(isolation="auto")

        async def launched(argv: Sequence[str]) -> None:
            detail["argv"] = list(argv)

        try:
            result = await code_attempt(
                environment=env, harness=harness, run_id="doctor", attempt_id="doctor", task=task,
                starting_source=task.workspace_dir, treatment=treatment, attempt_dir=root / "attempt",
                model=model, reasoning="low", seed=0, timeout=120.0, hidden=(), launched=launched,
            )
        except Exception as exc:  # noqa: BLE001 - doctor reports every failure as a failed check
            return Check("end-to-end probe attempt", False, f"{type(exc).__name__}: {exc}"), detail
        receipt = root / "attempt" / "native-treatment.json"
        detail["receipt"] = receipt.read_text() if receipt.is_file() else None
        detail["usage"] = result.run.usage
        probe.wait_idle()
        detail["served"] = probe.served_usage()
        if result.patch is None:
            return Check("end-to-end probe attempt", False, result.capture_error or result.run.error or "no patch"), detail
        grade = await grade_patch(
            environment=env, run_id="doctor", attempt_id="doctor", task=task, starting_source=task.workspace_dir,
            patch_path=result.patch.path, empty=result.patch.empty, out_dir=root / "grading", hidden=(),
        )
        ok = grade.outcome == "pass" and result.run.usage.status == "exact"
        return Check(
            "end-to-end probe attempt", ok,
            f"guided fix graded {grade.outcome}; usage {result.run.usage.status} "
            f"(input {result.run.usage.input_tokens}, output {result.run.usage.output_tokens})",
        ), detail


async def cluster_checks(address: str, label: str, sandbox: str = "bubblewrap",
                         docker_hosts: dict[str, str] | None = None) -> list[Check]:
    """``doctor --ray ADDRESS``: the cluster answers, has worker nodes carrying ``label``,
    and each node can make sandboxes and runs the head's PluginBench and Python versions.
    With ``sandbox="docker"`` a node's check is its own Docker Engine (it answers, runs
    Linux containers; its CPUs and memory budget), and the head's engine, where task
    images are prepared, is checked too. Spends nothing and starts no attempt."""
    import sys

    from .. import __version__
    from ..environments import get_backend
    from ..errors import EnvironmentFailure

    env: Any = get_backend("ray").environment(address=address, label=label, sandbox=sandbox,
                                              docker_hosts=docker_hosts or {})
    head: list[Check] = []
    if sandbox == "docker":
        from ..environments import make_environment

        try:
            head_engine: Any = make_environment("docker")
            info = await head_engine.info()
            head.append(Check("head Docker engine (task images are prepared here)", True,
                              f"Docker {info.version}, {info.cpus} CPUs"))
        except EnvironmentFailure as exc:
            head.append(Check("head Docker engine (task images are prepared here)", False, str(exc)))
    try:
        described = await env.describe()
    except EnvironmentFailure as exc:
        return [*head, Check("ray cluster reachable", False, str(exc))]
    checks = [*head, Check("ray cluster reachable", True, address),
              Check(f"worker nodes labelled {label}", bool(described),
                    ", ".join(d["node"] for d in described) or "none: ray start --address=<head> "
                    f"--labels={label}=<name> on each worker")]
    python = ".".join(map(str, sys.version_info[:3]))
    for d in described:
        same = d["pluginbench"] == __version__ and d["python"] == python
        problems = [p for p in (d.get("problem"),
                                None if same else f"runs pluginbench {d['pluginbench']} on Python {d['python']}, "
                                f"the head {__version__} on {python}") if p]
        docker = d.get("docker") or {}
        if d.get("sandbox") == "docker":
            where = f"Docker {docker.get('version')} at {docker.get('host')}"
            detail = f"{where}, {d['cpus']} CPUs, {d['memory_mb']} MB budget, jobs {d['jobs']}, host {d['hostname']}"
        else:
            seen = (f"Docker {docker['version']}" if docker.get("problem") is None and docker.get("version")
                    else "no Docker engine")
            detail = (f"{d['cpus']} CPUs, {d['memory_mb']} MB, {'bubblewrap' if d['isolated'] else 'no bubblewrap'}, "
                      f"{seen}, jobs {d['jobs']}, host {d['hostname']}")
        checks.append(Check(f"node {d['node']}", not problems, "; ".join(problems) or detail))
    return checks
