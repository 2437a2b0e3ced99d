"""``tasks mine``: turn a repository's history into Harbor tasks, running every test in a sandbox.

For each first-parent step of history (:class:`~pluginbench.tasks.Candidate`) the changed
paths are screened first (no test change, no source change, a root commit). A candidate
that survives becomes a task folder in a private staging area: the parent's files as
``workspace/``, the commit's non-test change as ``solution/solution.patch``, the commit's
test files under ``tests/files/`` with ``tests/grade.py``. Then the readiness controls run
it **in the sandbox** exactly as ``check`` does (the local backend under bubblewrap, or
docker): ``nop`` is the starting source with the commit's tests ("before"), ``oracle`` the
same with the commit's source change applied ("after"), each twice, and each run's
per-test outcomes are read back. :func:`~pluginbench.tasks.decide` turns them into the
fail-to-pass and pass-to-pass sets (or the rejection); an admitted candidate's sets are
written into ``tests/config.json`` and the finished task must then pass readiness once
more, as written: oracle reward 1 and nop reward 0.

Nothing from the mined repository runs on the host: git reads it through a hermetic bare
clone, and every test runs in a default-deny sandbox without network.
"""

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import anyio
import msgspec

from ..config import Evaluation
from ..environments import backend_of
from ..errors import ConfigError, EnvironmentFailure, GitFailed, PluginBenchError
from ..tasks import (
    GRADER_SOURCE,
    SOLVE_SH,
    TEST_SH,
    Candidate,
    MinedRepo,
    Mutation,
    Verdict,
    apply_mutation,
    classify_path,
    decide,
    grading_config,
    instruction_text,
    load_task,
    mutant_candidate,
    mutant_instruction,
    mutant_task_id,
    mutation_sites,
    readme_text,
    reject,
    reverse_patch,
    screen,
    task_id_of,
    task_toml,
)
from ._context import Engine, Outbox, cache_root
from ._preparation import (
    check_capacity,
    freeze_task,
    prepare_task_images,
    record_contract,
    run_control,
)

Backend = Literal["local", "docker"]
#: every run of the suite, before and after, is repeated this many times before deciding
RUNS = 2
#: at most this many mutation sites are tried per mutation-repair task asked for
MUTANT_TRIES = 4


class MineOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What to mine and where the tasks go."""

    repo: str
    out: Path
    since: str | None = None
    limit: int | None = None
    backend: Backend = "local"
    image: str | None = None
    #: the repository's language (auto: detected from HEAD's files, :func:`~pluginbench.tasks.detect_language`)
    language: Literal["auto", "python", "go", "javascript", "rust"] = "auto"
    #: the grader's runner (auto: the language's own; Python's auto picks pytest or unittest in the sandbox)
    runner: Literal["auto", "pytest", "unittest", "go", "node", "cargo"] = "auto"
    test_timeout: int = 300
    #: mutation-repair tasks to seed at HEAD after history (0: none)
    mutants: int = 0
    #: candidates examined at the same time (each runs its nop and oracle side by side)
    jobs: int = 1


class MinedCandidate(msgspec.Struct, frozen=True, kw_only=True):
    """One examined candidate: admitted (``task`` is its folder) or rejected with why."""

    commit: str
    parent: str | None
    merge: bool
    subject: str
    task: str
    admitted: bool
    code: str | None
    reason: str | None
    f2p: int
    p2p: int
    flaky: tuple[str, ...]
    sandbox_runs: int
    seconds: float
    #: a mutation-repair candidate's seeded bug (``operator at path:line``); None for history
    mutation: str | None = None


class MiningReport(msgspec.Struct, frozen=True, kw_only=True):
    """The summary of one mining pass (``tasks mine --json``, ``<out>/mining.json``)."""

    repo: str
    head: str
    since: str | None
    backend: str
    image: str | None
    out: str
    #: the language the tests were run as, and the grader's runner (``tests/config.json`` ``runner``)
    language: str
    runner: str
    examined: int
    admitted: int
    seconds: float
    candidates: tuple[MinedCandidate, ...]


def check_output(out: Path, repo: str | None = None) -> None:
    """Refuse an output folder that exists, lies inside the mined repository folder, or whose
    parent is missing or not writable (exit 2)."""
    if out.exists() or out.is_symlink():
        raise ConfigError(f"{out} already exists", field="--out",
                          fix="name a new folder (mining never writes into or over an existing one)")
    if repo is not None and Path(repo).is_dir():
        real_repo = Path(os.path.realpath(repo))
        real_out = Path(os.path.realpath(out.absolute().parent)) / out.name
        if real_repo == real_out or real_repo in real_out.parents:
            raise ConfigError(f"{out} is inside the repository {repo} being mined", field="--out",
                              fix="name a folder outside the repository (tasks written into it would change what is mined)")
    parent = out.absolute().parent
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"{parent} (parent of --out) is a file, not a folder", field="--out",
                          fix="choose an output folder inside a folder")
    if not parent.is_dir():
        raise ConfigError(f"the folder {parent} (parent of --out) does not exist", field="--out",
                          fix=f"create it first: mkdir -p {parent}")
    try:
        probe = tempfile.mkdtemp(prefix=".pluginbench-mine-", dir=parent)
    except OSError as exc:
        raise ConfigError(f"cannot write in {parent}: {exc.strerror or exc}", field="--out",
                          fix="choose a folder you can write in") from None
    Path(probe).rmdir()


def open_repo(repo: str, scratch: Path) -> MinedRepo:
    """The private clone of ``repo``, or exit 2 naming it when it is not a git repository."""
    source = Path(repo)
    if "://" not in repo and not source.exists():
        raise ConfigError(f"{repo} does not exist", field="REPO", fix="give a git repository folder or a git bundle")
    try:
        mined = MinedRepo(str(source.resolve()) if "://" not in repo else repo, scratch)
        mined.head()
    except GitFailed as exc:
        raise ConfigError(f"{repo} is not a git repository or bundle with commits: {exc}", field="REPO",
                          fix="give a git repository folder (with at least one commit) or a file made by git bundle create") from None
    return mined


def resolve_since(mined: MinedRepo, since: str | None, repo: str) -> str | None:
    if since is None:
        return None
    try:
        return mined.resolve(since)
    except GitFailed:
        raise ConfigError(f"--since {since!r} names no commit in {repo}", field="--since",
                          fix="give a commit, tag or branch of that repository (git log --oneline lists commits)") from None


def choose_runner(opts: MineOptions, files: list[str], package_json: str | None = None) -> tuple[str, str]:
    """The language and grader runner to mine with: ``--language`` (else the runner's, else
    detected from HEAD's files) and ``--runner`` (else the language's own); a runner of
    another language, or a JavaScript repository whose ``package.json`` names a framework
    node's runner cannot run (jest, vitest, ...) without ``--runner node``, is refused (exit 2)."""
    from ..tasks import LANGUAGE_RUNNERS, detect_language, language_of_runner, other_js_runner

    by_runner = language_of_runner(opts.runner)
    language = opts.language if opts.language != "auto" else by_runner or detect_language(files)
    if by_runner is not None and by_runner != language:
        raise ConfigError(f"--runner {opts.runner} runs {by_runner} tests, but the repository is mined as {language}",
                          field="--runner", fix=f"use --runner {LANGUAGE_RUNNERS[language][0]} (or leave --runner out), "
                          f"or --language {by_runner}")
    other = other_js_runner(package_json) if language == "javascript" and package_json is not None else None
    if other is not None and opts.runner == "auto":
        raise ConfigError(f"the repository's package.json uses {other}, whose tests node's built-in runner (the only "
                          "JavaScript runner of tasks mine) does not run: every candidate would fail",
                          field="--runner", fix="mine a repository tested with node:test, or pass --runner node to "
                          "run node --test on its test files anyway")
    return language, opts.runner if opts.runner != "auto" else LANGUAGE_RUNNERS[language][0]


def _evaluation(stage: Path, task_id: str, opts: MineOptions) -> Evaluation:
    environment: dict[str, object] = {"backend": opts.backend}
    if opts.backend == "local":
        environment["isolation"] = "bubblewrap"  # never "none": mined code never runs on the host
    return msgspec.convert({
        "name": "tasks-mine", "tasks": {"source": str(stage), "ids": [task_id]},
        "runner": {"harness": "nop"}, "environment": environment, "measurements": [], "jobs": 1,
        "timeout_seconds": max(opts.test_timeout, 60),
    }, Evaluation, strict=True)


class _Controls:
    """The readiness controls on one staged task folder, through the same path as ``check``."""

    def __init__(self, stage: Path, task_id: str, opts: MineOptions, hidden: tuple[Path, ...], scratch: Path) -> None:
        self.task_id, self.runs = task_id, 0
        ev = _evaluation(stage, task_id, opts)
        run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
        from ..harnesses import make_harness
        from ..rundir import RunDir

        self.engine = Engine(
            run_dir=RunDir(run_dir), run_id="mine", evaluation=ev,
            environment=backend_of(ev).make(ev, "mine"),
            harness=make_harness("nop"), task_sources={},
            outbox=Outbox(None),  # type: ignore[arg-type]  # no Supervisor: controls record no events
            hidden=(cache_root(), stage.resolve(), *hidden),
        )
        freeze_task(stage / task_id, self.engine.run_dir.frozen_task(task_id), task_id)
        self.engine.tasks[task_id] = load_task(self.engine.run_dir.frozen_task(task_id), task_id)
        record_contract(self.engine, task_id)

    async def prepare(self) -> None:
        if backend_of(self.engine.evaluation).uses_images:
            await check_capacity(self.engine)
            await prepare_task_images(self.engine, self.task_id)

    async def run(self, control: str) -> tuple[bool, float | None, str | None, dict[str, str] | None]:
        """One control: ok, reward, reason and the per-test outcomes the verifier wrote (None: none)."""
        self.runs += 1
        got = await run_control(self.engine, self.task_id, control)
        results = (self.engine.run_dir.evidence / "readiness" / self.task_id / control / "grading" / "verifier"
                   / "tests.json")
        outcomes: dict[str, str] | None = None
        try:
            raw = json.loads(results.read_text())
            if isinstance(raw, dict):
                outcomes = {str(k): str(v) for k, v in raw.items()}
        except (OSError, ValueError):
            outcomes = None
        return got.ok, got.reward, got.reason, outcomes


async def _both(controls: _Controls) -> dict[str, tuple[bool, float | None, str | None, dict[str, str] | None]]:
    """``nop`` and ``oracle`` at the same time (separate sandboxes and evidence folders)."""
    got: dict[str, tuple[bool, float | None, str | None, dict[str, str] | None]] = {}

    async def one(control: str) -> None:
        got[control] = await controls.run(control)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "nop")
        tg.start_soon(one, "oracle")
    return got


def _write_task(folder: Path, c: Candidate, tests_tree: Path, solution_patch: str, instruction: str,
                task_toml_text: str, runner: str) -> None:
    """The task folder around an already written ``workspace/`` (probe form: no graded tests yet);
    the hidden test files are copied from ``tests_tree``."""
    tests = folder / "tests"
    for ch in c.tests:
        if ch.status != "D":
            target = tests / "files" / ch.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tests_tree / ch.path, target)
    tests.mkdir(parents=True, exist_ok=True)
    (tests / "test.sh").write_text(TEST_SH)
    (tests / "test.sh").chmod(0o755)
    shutil.copyfile(GRADER_SOURCE, tests / "grade.py")
    (tests / "config.json").write_text(grading_config(c, (), (), runner))
    solution = folder / "solution"
    solution.mkdir()
    (solution / "solution.patch").write_text(solution_patch)
    (solution / "solve.sh").write_text(SOLVE_SH)
    (solution / "solve.sh").chmod(0o755)
    (folder / "instruction.md").write_text(instruction)
    (folder / "task.toml").write_text(task_toml_text)


def _stage(mined: MinedRepo, c: Candidate, task_id: str, stage: Path, scratch: Path, opts: MineOptions) -> None:
    """Write a history candidate's task folder into ``stage``."""
    assert c.parent is not None
    folder = stage / task_id
    mined.write_tree(c.parent, folder / "workspace")
    after = Path(tempfile.mkdtemp(prefix="after-", dir=scratch))
    mined.write_tree(c.commit, after / "tree")
    non_tests = [ch.path for ch in c.changes if ch.kind != "test"]
    _write_task(folder, c, after / "tree", mined.diff(c.parent, c.commit, non_tests),
                instruction_text(c, mined.origin_label),
                task_toml(c, task_id, mined.origin_label, opts.image, opts.test_timeout, language=opts.language),
                opts.runner)
    shutil.rmtree(after)


async def _validate(stage: Path, task_id: str, c: Candidate, opts: MineOptions, hidden: tuple[Path, ...],
                    scratch: Path, finish: Callable[[Verdict], None]) -> tuple[Verdict, int]:
    """Run a staged task before and after twice, decide, write the graded sets (``finish``
    writes what depends on them), then readiness of the written task; the verdict and runs."""
    probe = _Controls(stage, task_id, opts, hidden, scratch)
    await probe.prepare()
    before: list[dict[str, str]] = []
    after: list[dict[str, str]] = []
    for _ in range(RUNS):  # before (nop) and after (oracle) side by side, then again
        got = await _both(probe)
        for control, into in (("nop", before), ("oracle", after)):
            _, _, reason, outcomes = got[control]
            if outcomes is None:
                return reject("readiness_failed", f"the {'before' if control == 'nop' else 'after'} run wrote no test "
                              f"results: {reason or 'the verifier failed'}"), probe.runs
            into.append(outcomes)
    verdict = decide(before, after)
    if not verdict.admitted:
        return verdict, probe.runs
    (stage / task_id / "tests" / "config.json").write_text(grading_config(c, verdict.f2p, verdict.p2p, opts.runner))
    finish(verdict)
    final = _Controls(stage, task_id, opts, hidden, scratch)
    await final.prepare()
    got = await _both(final)
    for control in ("oracle", "nop"):
        ok, reward, reason, _ = got[control]
        if not ok:
            return reject("readiness_failed", f"the written task failed readiness: {control} got reward {reward}"
                          + (f" ({reason})" if reason else "")), probe.runs + final.runs
    return verdict, probe.runs + final.runs


async def _examine(mined: MinedRepo, c: Candidate, stage: Path, scratch: Path, opts: MineOptions,
                   hidden: tuple[Path, ...]) -> tuple[Verdict, int]:
    """The verdict on one history candidate that passed screening, and how many sandbox runs it took."""
    task_id = task_id_of(c)
    try:
        _stage(mined, c, task_id, stage, scratch, opts)
    except (GitFailed, PluginBenchError, OSError, UnicodeError) as exc:
        return reject("unusable_tree", f"the commit's files cannot be made a task: {exc}"), 0

    def finish(verdict: Verdict) -> None:
        (stage / task_id / "README.md").write_text(readme_text(c, mined.origin_label, verdict))

    return await _validate(stage, task_id, c, opts, hidden, scratch, finish)


def _head_files(head_tree: Path) -> tuple[dict[str, str], list[str]]:
    """HEAD's source files as text (those that are UTF-8 and end in a newline) and its test paths."""
    sources: dict[str, str] = {}
    tests: list[str] = []
    for path in sorted(p for p in head_tree.rglob("*") if p.is_file()):
        rel = path.relative_to(head_tree).as_posix()
        kind = classify_path(rel)
        if kind == "test":
            tests.append(rel)
        elif kind == "source":
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeError, OSError):
                continue
            if text.endswith("\n"):
                sources[rel] = text
    return sources, tests


async def _examine_mutant(mined: MinedRepo, head: str, head_tree: Path, m: Mutation, tests: list[str], stage: Path,
                          scratch: Path, opts: MineOptions, hidden: tuple[Path, ...]) -> tuple[Candidate, Verdict, int]:
    """Seed ``m`` at HEAD and keep it only when it is red (some test passing at HEAD fails with it)."""
    c = mutant_candidate(head, m, tests)
    task_id = mutant_task_id(head, m)
    folder = stage / task_id
    shutil.copytree(head_tree, folder / "workspace", symlinks=False)
    original = (head_tree / m.path).read_text(encoding="utf-8")
    mutated = apply_mutation(original, m)
    (folder / "workspace" / m.path).write_text(mutated, encoding="utf-8")
    _write_task(folder, c, head_tree, reverse_patch(m.path, mutated, original),
                mutant_instruction(m, mined.origin_label, ()),
                task_toml(c, task_id, mined.origin_label, opts.image, opts.test_timeout, mutation=m.label,
                          language=opts.language),
                opts.runner)

    def finish(verdict: Verdict) -> None:
        (folder / "instruction.md").write_text(mutant_instruction(m, mined.origin_label, verdict.f2p))
        (folder / "README.md").write_text(
            f"# Seeded bug: {m.label}\n\nA mutation-repair task made by `pluginbench tasks mine --mutants` from "
            f"{mined.origin_label} at `{head}`: `workspace/` is HEAD with line {m.line} of `{m.path}` changed from\n\n"
            f"    {m.before.strip()}\n\nto\n\n    {m.after.strip()}\n\n`solution/solution.patch` undoes it; the "
            f"hidden tests are HEAD's test files. Graded: {len(verdict.f2p)} fail-to-pass and {len(verdict.p2p)} "
            "pass-to-pass tests.\n")

    verdict, runs = await _validate(stage, task_id, c, opts, hidden, scratch, finish)
    if verdict.code == "tests_pass_before":
        verdict = reject("not_red", "no test fails with the seeded bug: the tests do not catch it")
    return c, verdict, runs


def _sandbox_failure(opts: MineOptions, exc: EnvironmentFailure) -> ConfigError:
    if opts.image is not None and opts.image in str(exc):
        return ConfigError(f"the docker sandbox cannot run the tests: {exc}", field="--image",
                           fix=f"put the image on this engine first (docker pull {opts.image}, or docker build/load it)")
    return ConfigError(f"the {opts.backend} sandbox cannot run the tests: {exc}", field="--backend",
                       fix="run pluginbench doctor, or choose another --backend/--image")


#: what each runner needs on the sandbox's PATH besides ``python3`` (the grader itself)
RUNNER_TOOLS = {"go": "go", "node": "node", "cargo": "cargo"}
_MISSING = 'for t in "$@"; do command -v "$t" >/dev/null 2>&1 || printf "%s\\n" "$t"; done'


async def check_toolchain(opts: MineOptions, scratch: Path) -> None:
    """Refuse (exit 2) a sandbox that lacks the grader's tools (``python3`` and the runner's:
    ``go``, ``node``, ``cargo``), asked once inside a sandbox like the tests' own."""
    from ..environments import SandboxSpec
    from ..tasks import HarborTask

    need = ["python3", *([RUNNER_TOOLS[opts.runner]] if opts.runner in RUNNER_TOOLS else [])]
    root = scratch / "toolchain"
    (root / "workspace").mkdir(parents=True, exist_ok=True)
    ev = _evaluation(scratch, "toolchain", opts)
    env = backend_of(ev).make(ev, "mine")
    image: str | None = None
    try:
        if opts.backend == "docker":  # the image a mined task runs on: --image, else the base image
            task = HarborTask("toolchain", root, "", "/app", None, 60.0, 60.0, "separate", opts.image, None, None,
                              None, (), {})
            image = await env.prepare_image(root, task)  # type: ignore[attr-defined]  # docker-only: the Environment port does not declare image methods
        spec = SandboxSpec(run_id="mine", attempt_id="toolchain", role="readiness", task="toolchain",
                           workspace=root / "workspace", image=image, hidden=(cache_root(),))
        async with env.sandbox(spec) as sb:
            got = await sb.exec(["/bin/sh", "-c", _MISSING, "pluginbench-toolchain", *need], timeout=120)
    except EnvironmentFailure as exc:
        raise _sandbox_failure(opts, exc) from None
    missing = got.stdout.decode(errors="replace").split()
    if got.exit_code != 0 or missing:
        where = ("the local sandbox (the host's /usr tools)" if image is None
                 else f"the image {opts.image}" if opts.image else "the docker base image")
        raise ConfigError(
            f"{where} has no {', '.join(missing) or 'shell to look for ' + ', '.join(need)}, which the "
            f"{opts.language} grader (runner {opts.runner}) needs", field="--image" if image else "--backend",
            fix="mine with --image <an image that has " + " and ".join(need) + ">"
            + ("" if image else ", or install them on this machine"))


async def mine_history(opts: MineOptions, on_candidate: Callable[[MinedCandidate], None] | None = None) -> MiningReport:
    """Mine ``opts.repo`` into ``opts.out`` (created at the end, atomically); the summary.

    Bad input (the output exists or cannot be written, not a git repository, a ``--since``
    that names no commit, an unusable sandbox) raises :class:`ConfigError` before anything
    is written.
    """
    check_output(opts.out, opts.repo)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pluginbench-mine-") as tmp:
        scratch = Path(tmp)
        mined = open_repo(opts.repo, scratch)
        since = resolve_since(mined, opts.since, opts.repo)
        language, runner = choose_runner(opts, mined.files(mined.head()), mined.read(mined.head(), "package.json"))
        opts = msgspec.structs.replace(opts, language=language, runner=runner)
        if opts.backend == "local":
            from ..environments import bwrap_available

            if not bwrap_available():
                raise ConfigError("bubblewrap cannot make sandboxes here, and mined tests never run unsandboxed",
                                  field="--backend", fix="install bubblewrap, or mine with --backend docker --image <image>")
        head = mined.head()
        steps = list(reversed(mined.first_parent_steps(since, opts.limit)))
        staged = Path(tempfile.mkdtemp(prefix=".pluginbench-mine-", dir=opts.out.absolute().parent))
        hidden = (*(p for p in (Path(opts.repo).resolve(),) if "://" not in opts.repo), staged)
        stage = scratch / "stage"
        stage.mkdir()
        records: list[MinedCandidate] = []

        def record(c: Candidate, task_id: str, verdict: Verdict, runs: int, t0: float, mutation: str | None) -> None:
            if verdict.admitted:
                shutil.copytree(stage / task_id, staged / task_id, symlinks=True)
            row = MinedCandidate(
                commit=c.commit, parent=c.parent, merge=c.merge, subject=c.subject, task=task_id,
                admitted=verdict.admitted, code=verdict.code, reason=verdict.reason, f2p=len(verdict.f2p),
                p2p=len(verdict.p2p), flaky=verdict.flaky, sandbox_runs=runs, seconds=round(time.monotonic() - t0, 3),
                mutation=mutation,
            )
            records.append(row)
            if on_candidate is not None:
                on_candidate(row)

        try:
            limiter = anyio.CapacityLimiter(opts.jobs)
            toolchain = anyio.Lock()
            checked: list[bool] = []

            async def ready() -> None:  # the first candidate that needs the sandbox asks it for the tools
                async with toolchain:
                    if not checked:
                        await check_toolchain(opts, scratch)
                        checked.append(True)

            async def one(commit: str) -> None:
                async with limiter:
                    t0 = time.monotonic()
                    c = mined.candidate(commit)
                    verdict, runs = screen(c), 0
                    if verdict is None:
                        await ready()
                        try:
                            verdict, runs = await _examine(mined, c, stage, scratch, opts, hidden)
                        except EnvironmentFailure as exc:
                            raise _sandbox_failure(opts, exc) from None
                    record(c, task_id_of(c), verdict, runs, t0, None)

            async with anyio.create_task_group() as tg:  # candidates side by side, at most opts.jobs at once
                for commit in steps:
                    tg.start_soon(one, commit)
            order = {commit: i for i, commit in enumerate(steps)}
            records.sort(key=lambda r: order[r.commit])  # history order, whatever finished first
            if opts.mutants:
                head_tree = scratch / "head"
                mined.write_tree(head, head_tree)
                sources, tests = _head_files(head_tree)
                seeded = 0
                for m in mutation_sites(sources)[:opts.mutants * MUTANT_TRIES]:
                    if seeded == opts.mutants:
                        break
                    await ready()
                    t0 = time.monotonic()
                    try:
                        c, verdict, runs = await _examine_mutant(mined, head, head_tree, m, tests, stage, scratch,
                                                                 opts, hidden)
                    except EnvironmentFailure as exc:
                        raise _sandbox_failure(opts, exc) from None
                    seeded += verdict.admitted
                    record(c, mutant_task_id(head, m), verdict, runs, t0, m.label)
            report = MiningReport(
                repo=opts.repo, head=head, since=since, backend=opts.backend, image=opts.image, out=str(opts.out),
                language=language, runner=runner,
                examined=len(records), admitted=sum(r.admitted for r in records),
                seconds=round(time.monotonic() - started, 3), candidates=tuple(records),
            )
            (staged / "mining.json").write_bytes(msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n")
            staged.rename(opts.out)
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
    return report


__all__ = ["MineOptions", "MinedCandidate", "MiningReport", "check_output", "mine_history"]
