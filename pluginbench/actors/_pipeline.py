"""One attempt's I/O: code in a fresh sandbox, capture the canonical patch, grade it in
another fresh sandbox. Shared by the coding and grader actors and by readiness checks,
so controls go through exactly the path real attempts take.
"""

import contextlib
import inspect
import json
import shutil
import stat
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import msgspec

from ..environments import (
    GIT_APPLY,
    Environment,
    Role,
    Sandbox,
    SandboxSpec,
    limits_of,
    over_storage,
    policy_for,
)
from ..errors import ResourceLimitHit, SandboxLost, WorkerLost
from ..harnesses import AgentRun, AttemptContext, FrozenTreatment, Harness
from ..tasks import (
    SOLUTION,
    HarborTask,
    VerifierContract,
    VerifierEnv,
    host_values,
    owned_in_tree,
    patch_paths,
    resolve_env,
    resolve_verifier_env,
    restore_removed,
    stripped_copy,
)
from ._context import SandboxSource
from ._patch import PatchInfo, make_patch
from ._prestart import discard_prestarted, prestarting
from ._reward import GradeResult, _stderr_hint, classify, read_reward
from ._task_env import environment_env, with_task_env
from ._task_owned import strip_task_owned_inside


class CodingResult(NamedTuple):
    run: AgentRun
    patch: PatchInfo | None
    capture_error: str | None


def write_json(path: Path, data: object) -> None:
    """Write JSON atomically (a temp file of its own, fsync, rename): two writers of one file
    (two runs sharing the readiness cache) each rename a whole file, never each other's half."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def _spec(
    role: Role, run_id: str, attempt_id: str, task: HarborTask, src: SandboxSource, hidden: tuple[Path, ...],
    **extra: Any,
) -> SandboxSpec:
    """A sandbox of ``task`` for ``role``: where it starts, its limits, what it must not see
    and what it may reach (``egress``: the caller's for a coding sandbox; otherwise the
    verifier phase's ``network_mode``, which gives nothing unless it is ``public``)."""
    extra.setdefault("egress", policy_for(role, task.verifier_network_mode, probe_port=None, model_hosts=()))
    return SandboxSpec(
        run_id=run_id, attempt_id=attempt_id, role=role, task=task.id, workspace=src.workspace,
        image=src.image, workdir=task.workdir, hidden=hidden,
        # A backend without its own limit settings (local) takes the task's declaration.
        cpus=src.cpus if src.cpus is not None else task.cpus,
        memory_mb=src.memory_mb if src.memory_mb is not None else task.memory_mb,
        pids=task.pids_limit, storage_mb=task.storage_mb, **extra,
    )


async def code_attempt(
    *,
    environment: Environment,
    harness: Harness,
    run_id: str,
    attempt_id: str,
    task: HarborTask,
    starting_source: Path,
    treatment: FrozenTreatment,
    attempt_dir: Path,
    model: str | None,
    reasoning: str | None,
    seed: int,
    timeout: float,
    hidden: tuple[Path, ...],
    launched: Callable[[Sequence[str]], Awaitable[None]],
    source: SandboxSource | None = None,
    writes: str | None = None,
    verifier: SandboxSpec | None = None,
    solution_env: VerifierEnv | None = None,
) -> CodingResult:
    """Deliver, run the agent, stop the sandbox, export the tree, make the patch.

    Every command the harness runs gets the task's ``[environment.env]``; a harness that
    needs the solution (the oracle) also gets ``solution_env`` (the task's resolved
    ``[solution.env]``; without one, its literals only), whose host values are redacted
    from the attempt's evidence like the harness's credentials.

    With ``verifier`` (the spec :func:`grade_patch` will ask for, :func:`verifier_spec`),
    a backend that can pre-start sandboxes (``prestart``: docker, and local under bubblewrap)
    makes the attempt's own fresh grading sandbox while the agent codes; it is kept for grading only when a
    patch was captured, and removed on every other way out (no patch, a failure, a cancel).

    Raises only for failures *before* the agent launched (the sandbox or delivery is
    broken); after launch every failure is folded into the result so the paid session
    is kept. On every way out (a provider stop, a timeout, a crash, a cancel) the
    harness's credentials, in every encoded form, are redacted from the saved evidence
    and an export holding one is deleted (:func:`scrub_attempt`).
    """
    graded_next = False
    solution = VerifierEnv({}, {})
    if harness.needs_solution:  # without a resolved one (no evaluation to allow host variables): literals only
        solution = solution_env or resolve_env(task.solution_env, SOLUTION, allowed=(), host={},
                                               file=str(task.root / "task.toml"), tid=task.id)
    try:
        with contextlib.ExitStack() as stack:
            removed: tuple[str, ...] | None = None
            inside = False
            if treatment.task_owned == "remove":  # this arm starts without the repository's own guidance
                src = source or SandboxSource(starting_source, None, None, None)
                if src.workspace is None:
                    # An image task: its exported starting source says what to remove, and the
                    # sandbox removes it inside itself before the agent starts.
                    removed, inside = await anyio.to_thread.run_sync(owned_in_tree, starting_source), True
                else:
                    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pb-task-owned-")))
                    removed = await anyio.to_thread.run_sync(stripped_copy, src.workspace, tmp / "workspace")
                    source = src._replace(workspace=tmp / "workspace")
            result = await _code_attempt(
                environment=environment, harness=harness, run_id=run_id, attempt_id=attempt_id, task=task,
                starting_source=starting_source, treatment=treatment, attempt_dir=attempt_dir, model=model,
                reasoning=reasoning, seed=seed, timeout=timeout, hidden=hidden, launched=launched, source=source,
                removed=removed, strip_inside=inside, writes=writes, verifier=verifier, solution_env=solution.values,
            )
            graded_next = result.patch is not None
            return _without_values(result, host_values(solution))
    finally:
        with anyio.CancelScope(shield=True):
            if verifier is not None and not graded_next:
                await discard_prestarted(environment, verifier.run_id, verifier.attempt_id)
            await anyio.to_thread.run_sync(scrub_attempt, [*harness.secrets(), *host_values(solution)], attempt_dir)


def _without_values(result: CodingResult, values: Sequence[str]) -> CodingResult:
    """``result`` with ``values`` (the oracle's host variables) redacted from its error, which
    quotes ``solve.sh``'s stderr and is recorded in the events."""
    error = result.run.error
    if not values or not error:
        return result
    from ..harnesses import redact_text

    return result._replace(run=result.run._replace(error=redact_text(error, values)))


def executable_by_all(tests_dir: Path | None) -> bool:
    """Whether the task's own ``tests/test.sh`` is a regular file with every execute bit set.
    Both backends stage ``tests/`` with its files' modes, so ``chmod +x`` (any umask) would
    change nothing in the sandbox and is not run."""
    if tests_dir is None:  # the image's own /tests: its modes are unknown here
        return False
    try:
        st = (tests_dir / "test.sh").lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_mode & 0o111 == 0o111


def verifier_spec(run_id: str, attempt_id: str, task: HarborTask, starting_source: Path, hidden: tuple[Path, ...],
                  source: SandboxSource | None = None) -> SandboxSpec:
    """The spec of the attempt's grading sandbox (:func:`grade_in_sandbox` asks for exactly this one)."""
    return _spec("verifier", run_id, attempt_id, task, source or SandboxSource(starting_source, None, None, None),
                 hidden, tests=task.tests_dir)


def scrub_attempt(secrets: Sequence[str], attempt_dir: Path) -> list[str]:
    """Redact every form of ``secrets`` from the files under ``attempt_dir``; an
    ``export/`` holding one is deleted whole (it is the agent's tree, not evidence).
    One label per file found, sorted."""
    from ..harnesses import redact_secrets, scan_for_secrets

    if not secrets or not attempt_dir.exists():
        return []
    export = attempt_dir / "export"
    found: set[str] = set()
    if any(True for _ in scan_for_secrets([export], secrets)):
        found.add("workspace export")
        shutil.rmtree(export, ignore_errors=True)
    for path in redact_secrets([attempt_dir], secrets):
        found.add(f"evidence: {path.relative_to(attempt_dir)}")
    return sorted(found)


async def _code_attempt(
    *,
    environment: Environment,
    harness: Harness,
    run_id: str,
    attempt_id: str,
    task: HarborTask,
    starting_source: Path,
    treatment: FrozenTreatment,
    attempt_dir: Path,
    model: str | None,
    reasoning: str | None,
    seed: int,
    timeout: float,
    hidden: tuple[Path, ...],
    launched: Callable[[Sequence[str]], Awaitable[None]],
    source: SandboxSource | None,
    removed: tuple[str, ...] | None = None,
    strip_inside: bool = False,
    writes: str | None = None,
    verifier: SandboxSpec | None = None,
    solution_env: Mapping[str, str] | None = None,
) -> CodingResult:
    task_env = environment_env(task).values
    attempt_dir.mkdir(parents=True, exist_ok=True)
    (attempt_dir / "agent").mkdir(exist_ok=True)
    delivery = attempt_dir / "delivery"
    if delivery.exists():
        shutil.rmtree(delivery)
    delivery.mkdir()
    receipt = await anyio.to_thread.run_sync(harness.deliver, treatment, delivery)
    if removed is not None:  # recorded beside what was delivered: what this arm's source lacks
        receipt = {**receipt, "task_owned": {"setting": "remove", "removed": list(removed)}}
        write_json(attempt_dir / "task_owned.json", {"setting": "remove", "removed": list(removed)})
    if treatment.generated is not None:  # a generated-guidance arm: the file delivered is the one frozen
        receipt = {**receipt, "generated": {"file": treatment.guidance[0].name, "sha256": treatment.generated,
                                            "fingerprint": treatment.fingerprint}}
    write_json(attempt_dir / "delivery.json", receipt)
    spec = _spec(
        "coding", run_id, attempt_id, task, source or SandboxSource(starting_source, None, None, None), hidden,
        solution=task.root / "solution" if harness.needs_solution else None,
        home=delivery,
        readonly=tuple(harness.readonly),
        egress=harness.egress("coding", task.agent_network_mode),
    )
    launched_flag = False
    measured: list[float] = []  # the agent process's wall time, once the harness measured it

    async def on_launch(argv: Sequence[str]) -> None:
        nonlocal launched_flag
        write_json(
            attempt_dir / "invocation.json",
            {"attempt_id": attempt_id, "task": task.id, "arm": treatment.arm, "harness": harness.name,
             "model": model, "reasoning": reasoning, "argv": list(argv), "call_started": True},
        )
        await launched(argv)
        launched_flag = True

    ctx = AttemptContext(
        run_id=run_id,
        attempt_id=attempt_id,
        task=task,
        treatment=treatment,
        model=model,
        reasoning=reasoning,
        seed=seed,
        timeout_seconds=timeout,
        attempt_dir=attempt_dir,
        launched=on_launch,
        writes=writes,
        measured=measured.append,
    )
    export = attempt_dir / "export"

    async def in_sandbox(ready: Callable[[], None]) -> CodingResult | AgentRun:
        """The agent in its sandbox, then stop and export: an early result, or the run."""
        async with environment.sandbox(spec) as sandbox:
            ready()
            if strip_inside and removed:
                await strip_task_owned_inside(sandbox, removed)
            try:
                run = await harness.run(with_task_env(sandbox, {**task_env, **(solution_env or {})}), ctx)
            except Exception as exc:  # noqa: BLE001 - after launch, a harness crash is the attempt's result
                if not launched_flag or isinstance(exc, WorkerLost):
                    raise
                await _raise_if_lost(sandbox, exc, settle=KILLED_SETTLE_SECONDS)
                from ..events import Usage

                # the wall time the harness measured before it failed, else unknown (never 0)
                run = AgentRun(
                    exit_code=None,
                    timed_out=False,
                    coding_seconds=round(measured[-1], 3) if measured else None,
                    usage=Usage(status="unknown", reason=f"the harness failed: {exc}"),
                    error=f"harness error: {exc}",
                )
            run = await _with_limits(run, sandbox)
            if run.resource_limit is None:
                # A sandbox its own limit ended (an OOM kill) is the attempt's resource_limit,
                # recorded above; one ended from outside the run is an environment failure.
                killed = run.exit_code is None or run.exit_code >= 128 or run.exit_code < 0  # ended by a signal
                await _raise_if_lost(sandbox, settle=KILLED_SETTLE_SECONDS if killed else 0.0)
                run = _ended_inside(sandbox, run)
            _merge_execution(attempt_dir / "execution.json", {"attempt_id": attempt_id, **_run_dict(run),
                                                              "limits": _limits_record(sandbox, spec)})
            if run.provider_stop:
                return CodingResult(run, None, None)
            await _collect_artifacts(with_task_env(sandbox, task_env), task, attempt_dir)
            await sandbox.stop()
            if export.exists():
                shutil.rmtree(export)
            try:
                await sandbox.export_workspace(export)
            except WorkerLost:
                raise  # the node is gone: the attempt is interrupted, not missing a submission
            except ResourceLimitHit as exc:
                shutil.rmtree(export, ignore_errors=True)
                run = run._replace(resource_limit=run.resource_limit or str(exc))
                _merge_execution(attempt_dir / "execution.json", {**_run_dict(run)})
                return CodingResult(run, None, f"resource_limit: {exc}; the attempt is not graded")
            except Exception as exc:  # noqa: BLE001
                return CodingResult(run, None, f"could not export the working tree: {exc}")
        return run

    coded = await prestarting(environment, verifier, in_sandbox)
    if isinstance(coded, CodingResult):
        return coded
    run = coded
    too_big = await anyio.to_thread.run_sync(over_storage, export, limits_of(
        spec.memory_mb, spec.cpus, spec.pids, spec.storage_mb))
    if too_big:
        shutil.rmtree(export, ignore_errors=True)
        run = run._replace(resource_limit=run.resource_limit or too_big)
        _merge_execution(attempt_dir / "execution.json", {**_run_dict(run)})
        return CodingResult(run, None, f"resource_limit: {too_big}; the export was deleted and the attempt is not graded")
    leaked = _scrub_credentials(harness, attempt_dir, export)
    if leaked:
        shutil.rmtree(export, ignore_errors=True)
        return CodingResult(
            run, None,
            f"the credential was found ({'; '.join(leaked)}); it was redacted from the evidence, the export was "
            "deleted, and the attempt is not graded",
        )
    if removed:  # the patch base is the whole starting source: put back what the agent never saw
        restored = await anyio.to_thread.run_sync(restore_removed, starting_source, export, removed)
        write_json(attempt_dir / "task_owned.json", {"setting": "remove", "removed": list(removed),
                                                     "restored_before_patch": list(restored)})
    try:
        patch = await anyio.to_thread.run_sync(make_patch, starting_source, export, attempt_dir / "model.patch")
    except ResourceLimitHit as exc:  # a patch as large as the workspace bound: never read whole on the host
        run = run._replace(resource_limit=run.resource_limit or str(exc))
        _merge_execution(attempt_dir / "execution.json", {**_run_dict(run)})
        return CodingResult(run, None, f"resource_limit: {exc}; the attempt is not graded")
    except Exception as exc:  # noqa: BLE001
        return CodingResult(run, None, f"could not make the canonical patch: {exc}")
    return CodingResult(run, patch, None)


#: How long a sandbox whose agent was killed by a signal is given to report that the
#: sandbox itself ended (the engine marks a killed container stopped a moment later).
KILLED_SETTLE_SECONDS = 3.0


async def _raise_if_lost(sandbox: Sandbox, cause: BaseException | None = None, *, settle: float = 0.0) -> None:
    """A sandbox that ended under the agent from outside the run (a backend that can tell
    says why through ``ended_by``) is an environment failure: :class:`SandboxLost`, so
    the attempt is discarded and replaced instead of scored on what was left."""
    ended_by = getattr(sandbox, "ended_by", None)
    why = await ended_by(settle) if ended_by is not None else None
    if why is not None:
        raise SandboxLost(f"the coding sandbox ended under the agent: {why}") from cause


def _ended_inside(sandbox: Sandbox, run: AgentRun) -> AgentRun:
    """``run`` with its error saying so when the agent's own processes ended the sandbox
    (a backend that can tell sets ``ended_inside``): the agent's outcome, not a loss."""
    inside = getattr(sandbox, "ended_inside", None)
    if not inside:
        return run
    return run._replace(error=f"{run.error}; {inside}" if run.error else inside)


async def _collect_artifacts(sandbox: Sandbox, task: HarborTask, attempt_dir: Path) -> None:
    """Run the task's ``[[verifier.collect]]`` commands after the agent, then save
    ``/logs/artifacts``. Like Harbor, a failing command is recorded, not fatal."""
    out = attempt_dir / "collect"
    if task.collect:
        out.mkdir(parents=True, exist_ok=True)
    results = []
    for i, command in enumerate(task.collect):
        done = await sandbox.exec(["bash", "-c", command.command], cwd=sandbox.paths.app, timeout=command.timeout_sec,
                                  stdout_path=out / f"{i}.stdout.txt", stderr_path=out / f"{i}.stderr.txt")
        results.append({"command": command.command, "exit_code": done.exit_code, "timed_out": done.timed_out})
    if results:
        write_json(out / "collect.json", results)
    artifacts = attempt_dir / "artifacts"
    if artifacts.exists():
        shutil.rmtree(artifacts)
    try:
        await sandbox.get(f"{sandbox.paths.logs}/artifacts", artifacts)
    except ResourceLimitHit as exc:  # a sparse file there would be gigabytes on the host
        shutil.rmtree(artifacts, ignore_errors=True)
        artifacts.mkdir(parents=True)
        (attempt_dir / "artifacts.dropped.txt").write_text(f"/logs/artifacts: {exc}\n")
    except Exception:  # noqa: BLE001 - an empty or missing artifacts folder is not an error
        artifacts.mkdir(parents=True, exist_ok=True)


def _merge_execution(path: Path, summary: dict[str, object]) -> None:
    """Add the engine's summary to the harness's own execution.json (never drop its detail)."""
    try:
        existing = json.loads(path.read_text())
    except (OSError, ValueError):
        existing = {}
    if not isinstance(existing, dict):
        existing = {}
    write_json(path, {**existing, **summary})


def _scrub_credentials(harness: Harness, attempt_dir: Path, export: Path) -> list[str]:
    """Find the harness's delivered credentials in the attempt's files; redact them in
    saved evidence (the export is deleted by the caller). One label per file."""
    from ..harnesses import redact_secrets, scan_for_secrets

    secrets = harness.secrets()
    found = {f"workspace: {path.relative_to(export)}" for path, _ in scan_for_secrets([export], secrets)}
    outside = [p for p in attempt_dir.iterdir() if p != export]
    found |= {f"evidence: {path.relative_to(attempt_dir)}" for path in redact_secrets(outside, secrets)}
    return sorted(found)


async def _with_limits(run: AgentRun, sandbox: Sandbox) -> AgentRun:
    """``run`` with the limits its sandbox hit, if any (a backend without limit counters
    reports none; ``limit_breaches`` may be plain or async)."""
    breaches = getattr(sandbox, "limit_breaches", None)
    found = breaches() if callable(breaches) else []
    if inspect.isawaitable(found):
        found = await found
    if not found:
        return run
    why = "; ".join(found)
    return run._replace(resource_limit=why, error=f"resource_limit: {why}" + (f"; {run.error}" if run.error else ""))


def _limits_record(sandbox: Sandbox, spec: SandboxSpec) -> dict[str, object]:
    """The limits the attempt ran under and how the backend enforced them."""
    limits = getattr(sandbox, "limits", None) or limits_of(spec.memory_mb, spec.cpus, spec.pids, spec.storage_mb)
    return {**limits.describe(), "mechanism": getattr(sandbox, "limit_mechanism", "not reported by the backend")}


def _run_dict(run: AgentRun) -> dict[str, object]:
    return {
        "execution_outcome": "resource_limit" if run.resource_limit else None,
        "resource_limit": run.resource_limit,
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "coding_seconds": run.coding_seconds,
        "usage": msgspec.to_builtins(run.usage),
        "error": run.error,
        "provider_stop": run.provider_stop,
        "integrity": list(run.integrity),
        "model_record": msgspec.to_builtins(run.model_record),
    }


async def grade_patch(
    *,
    environment: Environment,
    run_id: str,
    attempt_id: str,
    task: HarborTask,
    starting_source: Path,
    patch_path: Path,
    empty: bool,
    out_dir: Path,
    hidden: tuple[Path, ...],
    source: SandboxSource | None = None,
    contract: VerifierContract | None = None,
    secrets: Sequence[str] = (),
    verifier_env: VerifierEnv | None = None,
) -> GradeResult:
    """:func:`grade_in_sandbox`, then every form of ``secrets`` (the coding harness's
    credentials) and of the verifier's host variables is redacted from the grading output
    in ``out_dir`` on every way out: test code can print what the agent hid in its patch,
    and what it was given."""
    if verifier_env is None:  # no evaluation to allow host variables: the task's literals only
        verifier_env = resolve_verifier_env(task.verifier_env, allowed=(), host={},
                                            file=str(task.root / "task.toml"), tid=task.id)
    secrets = [*secrets, *host_values(verifier_env)]
    # test.sh runs in the task's environment too: its [environment.env], then [verifier.env] over it
    test_env = {**environment_env(task).values, **verifier_env.values}
    try:
        return await grade_in_sandbox(
            environment=environment, run_id=run_id, attempt_id=attempt_id, task=task,
            starting_source=starting_source, patch_path=patch_path, empty=empty, out_dir=out_dir,
            hidden=hidden, source=source, contract=contract, verifier_env=test_env,
        )
    finally:
        if secrets:
            from ..harnesses import redact_secrets

            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(redact_secrets, [out_dir], list(secrets))


#: grading's own deadline for ``git apply``, and what a patch that does not apply is graded
_APPLY_TIMEOUT = 120
_DOES_NOT_APPLY = "the canonical patch does not apply to the starting source"


async def grade_in_sandbox(
    *,
    environment: Environment,
    run_id: str,
    attempt_id: str,
    task: HarborTask,
    starting_source: Path,
    patch_path: Path,
    empty: bool,
    out_dir: Path,
    hidden: tuple[Path, ...],
    source: SandboxSource | None = None,
    contract: VerifierContract | None = None,
    verifier_env: Mapping[str, str] | None = None,
) -> GradeResult:
    """Grade the canonical patch in a separate sandbox made from the starting source (or
    the verifier image), with the hidden tests in ``/tests``: ``/logs/artifacts`` holds only
    what PluginBench made, the canonical ``model.patch`` (never what the agent left under
    ``/logs/artifacts``, which stays evidence in the attempt's ``artifacts/``), PluginBench
    applies the patch unless the task's contract says its verifier does, then
    ``tests/test.sh`` runs with ``verifier_env`` (the task's ``[environment.env]`` and its
    resolved ``[verifier.env]`` over it) and the reward is read. Where the sandbox offers
    ``apply_and_exec`` (local, bubblewrap) the apply and test.sh are one launch whose apply
    result test.sh cannot reach; elsewhere two, with the same grade and files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = verifier_spec(run_id, attempt_id, task, starting_source, hidden, source)
    async with environment.sandbox(spec) as sb:
        # The agent's /logs/artifacts never reaches the verifier: a symlink, a model.patch
        # folder or planted files there could void the grade or feed the tests.
        with tempfile.TemporaryDirectory(prefix="pluginbench-grade-") as tmp:
            staged = Path(tmp) / "model.patch"
            shutil.copyfile(patch_path, staged)  # empty or not, the canonical patch is the one graded
            await sb.put(staged, f"{sb.paths.logs}/artifacts/model.patch")
        patch_in = f"{sb.paths.logs}/artifacts/model.patch"
        apply = not empty and (contract is None or contract.patch_applied_by == "pluginbench")
        test_sh = f"{sb.paths.tests}/test.sh"
        test_env = dict(verifier_env) if verifier_env else None
        test_out, test_err = out_dir / "test-stdout.txt", out_dir / "test-stderr.txt"
        if not executable_by_all(task.tests_dir):  # else the staged copy already is: chmod +x would change nothing
            await sb.exec(["chmod", "+x", test_sh], timeout=30, egress=False)
        # One launch for the apply and test.sh where the backend can keep the apply's result out
        # of test.sh's reach (local under bubblewrap: environments/_local_apply.py); else two.
        together = getattr(sb, "apply_and_exec", None) if apply else None
        ran = None if together is None else await together(
            patch_in, [test_sh], cwd=sb.paths.app, env=test_env, apply_timeout=_APPLY_TIMEOUT,
            timeout=task.verifier_timeout_sec, stdout_path=test_out, stderr_path=test_err)
        if ran is not None:
            if not ran.applied:
                (out_dir / "apply.txt").write_bytes(ran.apply_output)
                return GradeResult("unknown", None, _DOES_NOT_APPLY)
            result = ran.result
        else:
            if apply:
                applied = await sb.exec(
                    [*GIT_APPLY, patch_in],
                    cwd=sb.paths.app,
                    timeout=_APPLY_TIMEOUT,
                    egress=False,  # a public verifier's forwarder is for test.sh
                )
                if applied.exit_code != 0:
                    (out_dir / "apply.txt").write_bytes(applied.stdout + applied.stderr)
                    return GradeResult("unknown", None, _DOES_NOT_APPLY)
            result = await sb.exec([test_sh], cwd=sb.paths.app, env=test_env, timeout=task.verifier_timeout_sec,
                                   stdout_path=test_out, stderr_path=test_err)
        await sb.stop()
        verifier_out = out_dir / "verifier"
        if verifier_out.exists():
            shutil.rmtree(verifier_out)
        await sb.get(f"{sb.paths.logs}/verifier", verifier_out)
    if result.timed_out:
        return GradeResult("unknown", None, f"the verifier timed out after {task.verifier_timeout_sec:g} s")
    reward, reason, native = read_reward(verifier_out)
    if reward is None and result.exit_code != 0:
        reason = f"{reason}; tests/test.sh exited {result.exit_code}" + _stderr_hint(out_dir / "test-stderr.txt")
    overlap: tuple[str, ...] = ()
    if contract is not None and contract.replaced_paths and not empty:
        changed = set(patch_paths(patch_path.read_text(encoding="utf-8", errors="replace")))
        overlap = tuple(p for p in contract.replaced_paths if p in changed)
    return classify(reward, reason, empty, native, overlap)
