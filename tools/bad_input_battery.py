"""The bad-input battery of issue 14: every case through the real ``pluginbench`` command
in its own process, printed as a table (item, case, exit code, first line of output).

    .venv/bin/python tools/bad_input_battery.py [--markdown] [--only ITEM...] [--jobs N]

The second battery (issue 21: items ``21T`` tracebacks, ``21H`` hangs, ``21S`` silent
acceptances, ``21V`` vague refusals, ``21D`` deviations from the product description) is
in ``tools/bad_input_battery_21.py``; the totals are printed per item.

Each case builds its inputs in a scratch folder, runs one command, and is classified:
``traceback`` (a Python traceback reached the user), ``hang`` (no answer within its
timeout), ``loss`` (data was destroyed or a log recreated), ``wrote`` (a refusal left files
behind), ``silent`` (exit 0 for input that must be refused), ``vague`` (a refusal without
``file:``/``field:`` and ``fix:`` lines, issue-21 cases), or ``ok``. The goal
is 0 tracebacks, 0 losses, 0 silent acceptances. Cases that need root (tmpfs mounts) or
a Docker engine are marked ``skipped`` when those are missing. Asserts nothing; the
tests in ``tests/cli/test_bad_input*.py`` are the checks, and
``tests/cli/test_bad_input_battery.py`` runs this battery in CI and requires every case ok.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import yaml

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"
GUIDE = QUICKSTART / "guidance" / "testing-discipline.md"
sys.path.insert(0, str(REPO))


class Outcome(NamedTuple):
    item: str
    case: str
    code: int | None
    expected: int | tuple[int, ...]
    first_line: str
    verdict: str
    seconds: float = 0.0


class Ctx:
    """A scratch folder per case, plus a finished run shared by the log cases."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self._finished: Path | None = None
        self.n = 0
        self._lock = threading.RLock()

    def fresh(self) -> Path:
        with self._lock:
            self.n += 1
            d = self.root / f"case{self.n:03d}"
        d.mkdir()
        return d

    def config(self, d: Path, **over: Any) -> Path:
        cfg: dict[str, Any] = {
            "name": "battery",
            "tasks": {"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals", "word-wrap"]},
            "treatments": {"td": {"guidance": [str(GUIDE)]}},
            "runner": {"harness": "simulated", "model": "simulated-1"},
            "repeats": 1, "jobs": 2, "seed": 3, "timeout_seconds": 60,
        }
        cfg.update(over)
        path = d / "evaluation.yaml"
        path.write_text(yaml.safe_dump(cfg))
        return path

    def task_copy(self, d: Path, change: Callable[[Path], None]) -> Path:
        src = d / "tasks"
        shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", src / "roman-numerals")
        change(src / "roman-numerals")
        return self.config(d, tasks={"source": str(src), "ids": ["roman-numerals"]})

    def finished(self) -> Path:
        with self._lock:
            return self._finish()

    def _finish(self) -> Path:
        if self._finished is None:
            self.n += 1
            d = self.root / f"case{self.n:03d}"
            d.mkdir()
            cfg = self.config(d, tasks={"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals"]})
            run = d / "run"
            done = cli(["run", str(cfg), "--output", str(run), "--foreground"], self.env)
            if done.returncode != 0:
                raise SystemExit(f"could not make the finished run: {done.stdout}{done.stderr}")
            self._finished = run
        return self._finished

    def run_copy(self) -> Path:
        dest = self.fresh() / "run"
        shutil.copytree(self.finished(), dest)
        (dest / "run.lock").unlink(missing_ok=True)
        return dest


class Hung(subprocess.CompletedProcess[str]):
    """A command that did not end within its timeout (killed)."""


def cli(argv: list[str], env: dict[str, str], stdin: str | None = None, timeout: float = 120,
        prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """``pluginbench argv`` in its own process (``prefix``: e.g. setpriv dropping capabilities)."""
    cmd = [*(prefix or []), sys.executable, "-m", "pluginbench", *argv]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                              input=stdin if stdin is not None else "", check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Hung(cmd, -9, f"(no answer within {timeout:g} s) {out}", "")


CASES: list[tuple[str, str, int | tuple[int, ...], Callable[[Ctx], Any]]] = []


def case(item: str, name: str, expected: int | tuple[int, ...] = 2) -> Callable[[Callable[[Ctx], Any]], Callable[[Ctx], Any]]:
    def register(fn: Callable[[Ctx], Any]) -> Callable[[Ctx], Any]:
        CASES.append((item, name, expected, fn))
        return fn

    return register


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------- 1: data loss

for _damage in ("empty", "missing"):
    for _cmd in ("report", "events", "status", "run"):
        def _loss(ctx: Ctx, damage: str = _damage, cmd: str = _cmd) -> Any:
            run = ctx.run_copy()
            before = _digest(run / "report")
            if damage == "empty":
                (run / "events.jsonl").write_bytes(b"")
            else:
                (run / "events.jsonl").unlink()
            done = cli([cmd, str(run)] + (["--foreground"] if cmd == "run" else []), ctx.env)
            lost = _digest(run / "report") != before or (damage == "missing" and (run / "events.jsonl").exists())
            return done, lost

        case("1", f"{_cmd} on events.jsonl {'emptied' if _damage == 'empty' else 'deleted'}")(_loss)


# ---------------------------------------------------------------- 2-4: status

def _damaged_log(kind: str) -> Callable[[Ctx], Any]:
    def run_case(ctx: Ctx) -> Any:
        run = ctx.run_copy()
        lines = (run / "events.jsonl").read_text().splitlines()
        mid = len(lines) // 2
        if kind == "garbage":
            lines[mid] = "garbage"
        elif kind == "seq gap":
            del lines[mid]
        elif kind == "unknown type":
            ev = json.loads(lines[mid])
            ev["type"] = "bogus.event"
            lines[mid] = json.dumps(ev)
        else:
            lines.insert(mid, "")
        (run / "events.jsonl").write_text("\n".join(lines) + "\n")
        return cli(["status", str(run), "--json"], ctx.env)

    return run_case


for _kind in ("garbage", "seq gap", "unknown type", "blank line"):
    case("2", f"status --json, {_kind} mid-log, ledger current")(_damaged_log(_kind))


@case("3", "status --json during a live write: states and last_event one moment", expected=0)
def _one_moment(ctx: Ctx) -> Any:
    from pluginbench.events import EventLog, decode
    from pluginbench.projections._ledger import Ledger
    from pluginbench.projections._state import fold
    from pluginbench.projections._view import attempt_rows
    from pluginbench.status import status_snapshot

    recorded = [decode(line) for line in (ctx.finished() / "events.jsonl").read_bytes().splitlines()]
    live = ctx.fresh()
    for name in ("evaluation.json", "evaluation-binding.json"):
        shutil.copy(ctx.finished() / name, live / name)
    started, done = threading.Event(), threading.Event()

    def writer() -> None:
        with EventLog(live / "events.jsonl") as log:
            ledger = Ledger(live / "evidence" / "ledger.sqlite")
            state = fold([])
            for event in recorded:
                stamped = log.append(event)
                state.apply(stamped)
                ledger.update(state, stamped)
                started.set()
                time.sleep(0.003)
            ledger.close()
        done.set()

    threading.Thread(target=writer, daemon=True).start()
    started.wait()
    reads = mixed = 0
    while not done.is_set():
        snap = status_snapshot(live)
        seq = snap["last_event"]["seq"]
        prefix = [decode(x) for x in (live / "events.jsonl").read_bytes().splitlines()[:seq]]
        rows = attempt_rows(fold(prefix))
        mixed += snap["states"] != {s: sum(1 for r in rows if r["state"] == s) for s in snap["states"]}
        reads += 1
    line = f"{mixed} mixed reads of {reads}"
    return subprocess.CompletedProcess([], 0 if mixed == 0 else 1, line, ""), False


@case("4", "status --json with a torn last line", expected=0)
def _torn(ctx: Ctx) -> Any:
    run = ctx.run_copy()
    last = json.loads((run / "events.jsonl").read_text().splitlines()[-1])
    with (run / "events.jsonl").open("ab") as fh:
        fh.write(b'{"type":"run.stopping","rea')
    done = cli(["status", str(run), "--json"], ctx.env)
    snap = json.loads(done.stdout)
    ok = snap["last_event"] == last and snap["torn_tail_bytes"] == 27
    line = f"last_event seq {snap['last_event']['seq']} (the last complete), torn_tail_bytes {snap['torn_tail_bytes']}"
    return subprocess.CompletedProcess([], 0 if ok else 1, line, ""), False


# ---------------------------------------------------------------- 5-9: tracebacks

def _toml(text: str, whole: bool = False) -> Callable[[Ctx], Any]:
    def run_case(ctx: Ctx) -> Any:
        def change(task: Path) -> None:
            toml = task / "task.toml"
            toml.write_text(('schema_version = "1.4"\n' if whole else toml.read_text().replace("[verifier]\ntimeout_sec = 60\n", "").replace('[environment]\nworkdir = "/app"\n', "")) + "\n" + text + "\n")

        return cli(["check", str(ctx.task_copy(ctx.fresh(), change)), "--no-readiness"], ctx.env)

    return run_case


case("5", "task.toml environment = [1,2]")(_toml("environment = [1, 2]", whole=True))
case("5", "task.toml verifier = 3")(_toml("verifier = 3", whole=True))
case("5", "[[verifier.collect]] timeout_sec = \"abc\"")(_toml('[[verifier.collect]]\ncommand = "true"\ntimeout_sec = "abc"'))


@case("5", "instruction.md not UTF-8")
def _instr(ctx: Ctx) -> Any:
    return cli(["check", str(ctx.task_copy(ctx.fresh(), lambda t: (t / "instruction.md").write_bytes(b"\xff\xfe fix\n"))),
                "--no-readiness"], ctx.env)


@case("5", "workspace file name not UTF-8")
def _name(ctx: Ctx) -> Any:
    def change(t: Path) -> None:
        with open(os.path.join(os.fsencode(t / "workspace"), b"bad\xff.py"), "wb") as fh:
            fh.write(b"x = 1\n")

    return cli(["check", str(ctx.task_copy(ctx.fresh(), change)), "--no-readiness"], ctx.env)


@case("6", "task without solution/: check")
def _nosol_check(ctx: Ctx) -> Any:
    return cli(["check", str(ctx.task_copy(ctx.fresh(), lambda t: shutil.rmtree(t / "solution")))], ctx.env)


@case("6", "task without solution/: run (no run directory)")
def _nosol_run(ctx: Ctx) -> Any:
    d = ctx.fresh()
    cfg = ctx.task_copy(d, lambda t: shutil.rmtree(t / "solution"))
    done = cli(["run", str(cfg), "--output", str(d / "run")], ctx.env)
    return done, (d / "run").exists()


for _where in ("/proc/battery/run", "/sys/battery"):
    def _out(ctx: Ctx, where: str = _where) -> Any:
        return cli(["run", str(ctx.config(ctx.fresh())), "--output", where], ctx.env)

    case("7", f"run --output {_where}")(_out)


def _ro_mount(d: Path) -> Path | None:
    target = d / "ro"
    target.mkdir()
    ok = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", str(target)],
                                              capture_output=True, check=False).returncode == 0
    return target if ok else None


def _with_ro(argv: Callable[[Ctx, Path, Path], list[str]]) -> Callable[[Ctx], Any]:
    def run_case(ctx: Ctx) -> Any:
        d = ctx.fresh()
        ro = _ro_mount(d)
        if ro is None:
            return None
        try:
            return cli(argv(ctx, d, ro), ctx.env)
        finally:
            subprocess.run(["umount", "-l", str(ro)], check=False)

    return run_case


case("7", "run --output on a read-only mount")(_with_ro(lambda c, d, ro: ["run", str(c.config(d)), "--output", str(ro / "run")]))
case("7", "init into a read-only folder")(_with_ro(lambda c, d, ro: ["init", str(ro / "evaluation.yaml")]))
case("7", "demo --output on a read-only mount")(_with_ro(lambda c, d, ro: ["demo", "--output", str(ro / "demo")]))


@case("7", "init into a folder whose parent is missing")
def _init_parent(ctx: Ctx) -> Any:
    return cli(["init", str(ctx.fresh() / "nope" / "evaluation.yaml")], ctx.env)


@case("8", "full disk during a run (4 MiB tmpfs)", expected=1)
def _full(ctx: Ctx) -> Any:
    d = ctx.fresh()
    disk = d / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)],
                                           capture_output=True, check=False).returncode != 0:
        return None
    try:
        cfg = ctx.config(d, tasks={"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals"]})
        created = cli(["run", str(cfg), "--output", str(disk / "run"), "--dry-run"], ctx.env)
        assert created.returncode == 0, created.stderr
        from pluginbench.actors import create_run
        from pluginbench.config import load

        os.environ["XDG_CACHE_HOME"] = ctx.env["XDG_CACHE_HOME"]
        rd = create_run(load(cfg), disk / "run")
        filler = disk / "filler"
        with open(filler, "wb") as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        os.truncate(filler, filler.stat().st_size - 8192)
        done = cli(["run", str(rd.root), "--foreground"], ctx.env)
        from pluginbench.events import read_run_log

        intact = read_run_log(rd.events).events
        filler.unlink()
        resumed = cli(["run", str(rd.root), "--foreground"], ctx.env)
        lost = type(intact[-1]).__name__ != "RunFailed" or resumed.returncode != 0
        return done, lost
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _scenario() -> str:
    return str(sorted((REPO / "pluginbench" / "probe" / "scenarios").glob("*.yaml"))[0])


case("9", "probe serve --port 70000")(lambda ctx: cli(["probe", "serve", "--scenario", _scenario(), "--port", "70000"], ctx.env))


@case("9", "probe serve on a port in use")
def _busy(ctx: Ctx) -> Any:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        return cli(["probe", "serve", "--scenario", _scenario(), "--port", str(s.getsockname()[1])], ctx.env)


case("9", "probe serve --log in a missing folder")(
    lambda ctx: cli(["probe", "serve", "--scenario", _scenario(), "--log", str(ctx.fresh() / "no" / "log.jsonl")], ctx.env))


# ---------------------------------------------------------------- 10-19: silently accepted

case("10", "repeats: 1000000000 (check)")(lambda ctx: cli(["check", str(ctx.config(ctx.fresh(), repeats=1_000_000_000))], ctx.env))
case("10", "repeats: 100000 (run --dry-run)")(lambda ctx: cli(["run", str(ctx.config(ctx.fresh(), repeats=100_000)), "--dry-run"], ctx.env))


@case("11", "YAML: a second treatment td:")
def _dup_td(ctx: Ctx) -> Any:
    d = ctx.fresh()
    cfg = ctx.config(d, treatments={})
    cfg.write_text(cfg.read_text().replace("treatments: {}\n", "") + f"treatments:\n  td:\n    guidance: [{GUIDE}]\n  td:\n    guidance: [{GUIDE}]\n")
    return cli(["check", str(cfg)], ctx.env)


@case("11", "YAML: repeats twice")
def _dup_repeats(ctx: Ctx) -> Any:
    cfg = ctx.config(ctx.fresh())
    cfg.write_text(cfg.read_text() + "repeats: 2\n")
    return cli(["check", str(cfg)], ctx.env)


for _model in ("claude-sonnet-4-5 ", "claude-"):
    case("12", f"claude model {_model!r}")(
        lambda ctx, m=_model: cli(["check", str(ctx.config(ctx.fresh(), runner={"harness": "claude", "model": m, "reasoning": "low"})),
                                   "--no-readiness"], ctx.env))

for _tid in (".", ".."):
    def _tid_case(ctx: Ctx, tid: str = _tid) -> Any:
        d = ctx.fresh()
        done = cli(["run", str(ctx.config(d, tasks={"source": str(QUICKSTART / "tasks"), "ids": [tid]})), "--output", str(d / "run")], ctx.env)
        return done, (d / "run").exists()

    case("13", f"task id {_tid!r}")(_tid_case)

case("14", "verifier.collect = \"notalist\"")(_toml('[verifier]\ncollect = "notalist"'))
case("14", "[verifier] timeout_sec = -5")(_toml("[verifier]\ntimeout_sec = -5"))


@case("15", "binary guidance")
def _binary(ctx: Ctx) -> Any:
    d = ctx.fresh()
    (d / "g.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    return cli(["check", str(ctx.config(d, treatments={"g": {"guidance": [str(d / "g.md")]}}))], ctx.env)


@case("15", "empty plugin folder (simulated)")
def _empty_plugin(ctx: Ctx) -> Any:
    d = ctx.fresh()
    (d / "plugin").mkdir()
    return cli(["check", str(ctx.config(d, treatments={"p": {"plugins": [str(d / "plugin")]}}))], ctx.env)


@case("15", "ANTHROPIC_API_KEY= (empty), claude")
def _empty_key(ctx: Ctx) -> Any:
    env = {**ctx.env, "ANTHROPIC_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": "battery-not-a-token"}
    cfg = ctx.config(ctx.fresh(), runner={"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"},
                     environment={"allow_unisolated": True})
    return cli(["check", str(cfg), "--no-readiness"], env)


case("16", "init foo.txt")(lambda ctx: cli(["init", str(ctx.fresh() / "foo.txt")], ctx.env))


@case("16", "init onto a dangling symlink")
def _dangling(ctx: Ctx) -> Any:
    d = ctx.fresh()
    os.symlink(d / "target.yaml", d / "evaluation.yaml")
    done = cli(["init", str(d / "evaluation.yaml")], ctx.env)
    return done, (d / "target.yaml").exists()


@case("17", "two task folders with one [task] name")
def _same_name(ctx: Ctx) -> Any:
    d = ctx.fresh()
    for name in ("roman-numerals", "roman-copy"):
        shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", d / "tasks" / name)
    return cli(["check", str(ctx.config(d, tasks={"source": str(d / "tasks"), "ids": ["roman-numerals", "roman-copy"]})),
                "--no-readiness"], ctx.env)


@case("18", "evaluation.json edited and re-bound, run --dry-run")
def _rebound(ctx: Ctx) -> Any:
    run = ctx.run_copy()
    saved = json.loads((run / "evaluation.json").read_text())
    saved["repeats"] = 3
    data = (json.dumps(saved, indent=2, sort_keys=True) + "\n").encode()
    (run / "evaluation.json").write_bytes(data)
    (run / "evaluation-binding.json").write_text(json.dumps({"evaluation_sha256": hashlib.sha256(data).hexdigest(), "file": "evaluation.json"}))
    return cli(["run", str(run), "--dry-run"], ctx.env)


@case("19", "rich markup in name (printed literally)", expected=0)
def _markup(ctx: Ctx) -> Any:
    name = "[red]x[/red]"
    done = cli(["run", str(ctx.config(ctx.fresh(), name=name)), "--dry-run"], ctx.env)
    ok = name in done.stdout
    return subprocess.CompletedProcess([], done.returncode if ok else 1, done.stdout, done.stderr), False


# ---------------------------------------------------------------- 20-21: vague

@case("20", "run on a run another process owns")
def _owned(ctx: Ctx) -> Any:
    run = ctx.run_copy()
    holder = subprocess.Popen([sys.executable, "-c", "import sys,time; from pathlib import Path; from pluginbench.events import RunLock; "
                               "RunLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(60)", str(run)],
                              stdout=subprocess.PIPE, text=True, env=ctx.env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        return cli(["run", str(run)], ctx.env)
    finally:
        holder.kill()
        holder.wait()


case("21", "workdir = 5")(_toml("[environment]\nworkdir = 5"))
case("21", "workdir = \"../../etc\"")(_toml('[environment]\nworkdir = "../../etc"'))


@case("21", "timeout_seconds: 1e9")
def _1e9(ctx: Ctx) -> Any:
    cfg = ctx.config(ctx.fresh())
    cfg.write_text(cfg.read_text().replace("timeout_seconds: 60", "timeout_seconds: 1e9"))
    return cli(["check", str(cfg)], ctx.env)


@case("21", "duplicate JSON treatment")
def _dup_json(ctx: Ctx) -> Any:
    d = ctx.fresh()
    data = yaml.safe_load(ctx.config(d).read_text())
    body = json.dumps({k: v for k, v in data.items() if k != "treatments"})[:-1]
    body += f', "treatments": {{"td": {{"guidance": ["{GUIDE}"]}}, "td": {{"guidance": ["{GUIDE}"]}}}}}}'
    (d / "evaluation.json").write_text(body)
    return cli(["check", str(d / "evaluation.json")], ctx.env)


@case("21", "tests -> /etc")
def _tests_link(ctx: Ctx) -> Any:
    def change(t: Path) -> None:
        shutil.rmtree(t / "tests")
        os.symlink("/etc", t / "tests")

    return cli(["check", str(ctx.task_copy(ctx.fresh(), change)), "--no-readiness"], ctx.env)


@case("21", "CRLF tests/test.sh")
def _crlf(ctx: Ctx) -> Any:
    def change(t: Path) -> None:
        sh = t / "tests" / "test.sh"
        sh.write_bytes(sh.read_bytes().replace(b"\n", b"\r\n"))

    return cli(["check", str(ctx.task_copy(ctx.fresh(), change)), "--no-readiness"], ctx.env)


@case("21", "run claude.yaml without the CLI installed (before the paid-run question)")
def _no_cli(ctx: Ctx) -> Any:
    d = ctx.fresh()
    cfg = ctx.config(d, runner={"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"},
                     environment={"allow_unisolated": True})
    (d / "bin").mkdir()
    os.symlink(sys.executable, d / "bin" / "python")
    env = {**ctx.env, "PATH": str(d / "bin")}
    # The project-local CLIs are hidden by running a copy of the package without .tools.
    shadow = d / "src"
    shutil.copytree(REPO / "pluginbench", shadow / "pluginbench")
    env["PYTHONPATH"] = str(shadow)
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(cfg), "--output", str(d / "run")],
                          capture_output=True, text=True, env=env, cwd=shadow, check=False, input="")
    return done, (d / "run").exists()


def _docker_up() -> bool:
    try:
        import anyio

        from pluginbench.environments import make_environment

        anyio.run(make_environment("docker").check, backend="asyncio")
    except Exception:  # noqa: BLE001 - any failure: no engine
        return False
    return True


def _docker_cfg(ctx: Ctx, extra: str, **env: Any) -> Path:
    d = ctx.fresh()

    def change(t: Path) -> None:
        if extra:
            toml = t / "task.toml"
            toml.write_text(toml.read_text().replace("[environment]\n", "[environment]\n" + extra + "\n"))

    cfg = ctx.task_copy(d, change)
    data = yaml.safe_load(cfg.read_text())
    data["runner"] = {"harness": "nop"}
    data["environment"] = {"backend": "docker", **env}
    cfg.write_text(yaml.safe_dump(data))
    return cfg


case("21", "docker_image the engine lacks (check --no-readiness)")(
    lambda ctx: cli(["check", str(_docker_cfg(ctx, 'docker_image = "pluginbench-battery/none:0"')), "--no-readiness"], ctx.env)
    if _docker_up() else None)
case("21", "container_cpus too many for the engine")(
    lambda ctx: cli(["check", str(_docker_cfg(ctx, "", container_cpus=4096.0)), "--no-readiness"], ctx.env)
    if _docker_up() else None)


# ---------------------------------------------------------------- runner

def classify(expected: int | tuple[int, ...], done: subprocess.CompletedProcess[str], lost: bool | dict[str, bool]) -> str:
    """The verdict of one case. ``lost`` is a flag, or for issue-21 cases ``{"wrote", "clear"}``:
    whether the refusal left files behind, and whether it must name file/field and fix."""
    allowed = expected if isinstance(expected, tuple) else (expected,)
    text = done.stdout + done.stderr
    if isinstance(done, Hung):
        return "hang"
    if "Traceback" in text or "ExceptionGroup" in text:
        return "traceback"
    flags = lost if isinstance(lost, dict) else {"loss": lost}
    if flags.get("loss"):
        return "loss"
    if done.returncode == 0 and 0 not in allowed:
        return "silent"
    if done.returncode not in allowed:
        return f"exit {done.returncode}, expected {'/'.join(map(str, allowed))}"
    if done.returncode == 2 and flags.get("wrote"):
        return "wrote"
    if done.returncode == 2 and "clear" in flags and not (
            flags["clear"] and ("file:" in text or "field:" in text) and "fix:" in text):
        return "vague"
    return "ok"


BAD = ("traceback", "hang", "loss", "wrote", "silent", "vague")


def run_case(ctx: Ctx, item: str, name: str, expected: int | tuple[int, ...], fn: Callable[[Ctx], Any]) -> Outcome:
    """One case, classified (an exception in the case's own set-up is reported, not raised)."""
    start = time.monotonic()
    try:
        result = fn(ctx)
    except Exception as exc:  # noqa: BLE001 - the battery reports a broken case and goes on
        return Outcome(item, name, None, expected, f"the case itself failed: {type(exc).__name__}: {exc}", "broken case")
    if result is None:
        return Outcome(item, name, None, expected, "(skipped: needs root mounts, bubblewrap or a Docker engine)", "skipped")
    done, lost = result if isinstance(result, tuple) else (result, False)
    text = (done.stderr.strip() or done.stdout.strip()) if done.returncode else (done.stdout.strip() or done.stderr.strip())
    first = (text.splitlines()[0] if text else "").replace(str(ctx.root), "$TMP")
    return Outcome(item, name, done.returncode, expected, first[:160], classify(expected, done, lost),
                   time.monotonic() - start)


def run_battery(only: list[str] | None = None, jobs: int = 1, ci: bool = False) -> list[Outcome]:
    """Every case (or those whose item is in ``only``; ``ci``: those CI runs), ``jobs`` at a
    time, in the table's order."""
    chosen = [c for c in CASES if (not only or c[0] in only) and (not ci or in_ci(c[0], c[1]))]
    with tempfile.TemporaryDirectory(prefix="pluginbench-battery-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache"), "CI": "", "PYTHONPATH": str(REPO)}
        env.pop("CLAUDE_CODE_OAUTH_TOKEN", None)
        env.pop("PYTHONIOENCODING", None)
        ctx = Ctx(root, env)
        saved = dict(os.environ)  # a case may point this process at the battery's cache
        try:
            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                return list(pool.map(lambda c: run_case(ctx, *c), chosen))
        finally:
            os.environ.clear()
            os.environ.update(saved)


def totals(rows: list[Outcome]) -> dict[str, dict[str, int]]:
    """Per item: how many cases, and how many of each verdict."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        per = out.setdefault(r.item, {"cases": 0})
        per["cases"] += 1
        per[r.verdict] = per.get(r.verdict, 0) + 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--only", nargs="*", help="run only the cases of these items (e.g. 21T 21S)")
    ap.add_argument("--jobs", type=int, default=1, help="cases at a time (each is its own process)")
    args = ap.parse_args()
    rows = run_battery(args.only, args.jobs)
    if args.markdown:
        print("| item | case | exit | first line | verdict |")
        print("| --- | --- | --- | --- | --- |")
        for r in rows:
            print(f"| {r.item} | {r.case} | {r.code if r.code is not None else '-'} | `{r.first_line.replace('|', '/')}` | {r.verdict} |")
    else:
        for r in rows:
            print(f"{r.item:>3}  {r.case[:58]:<58}  {r.code if r.code is not None else '-':>4}  {r.verdict:<9}  {r.seconds:5.1f}s  {r.first_line}")
    counts = {k: sum(1 for r in rows if r.verdict == k) for k in (*BAD, "skipped")}
    other = sum(1 for r in rows if r.verdict not in ("ok", *BAD, "skipped"))
    print(f"\n{len(rows)} cases: {counts['traceback']} tracebacks, {counts['hang']} hangs, {counts['loss']} losses, "
          f"{counts['wrote']} wrote files, {counts['silent']} silent acceptances, {counts['vague']} vague, "
          f"{other} other exit codes or broken cases, {counts['skipped']} skipped")
    for item, per in totals(rows).items():
        if item[-1].isalpha():  # the issue-21 classes; the issue-14 items are one case or a few each
            rest = ", ".join(f"{v} {k}" for k, v in sorted(per.items()) if k != "cases")
            print(f"  item {item}: {per['cases']} cases: {rest}")


sys.path.insert(0, str(Path(__file__).resolve().parent))
import bad_input_battery_21  # noqa: E402 - registers the issue-21 cases after the issue-14 ones

bad_input_battery_21.add_cases(sys.modules[__name__])
import bad_input_battery_21x  # noqa: E402 - the attacker's cases beyond it (items 21X*)

bad_input_battery_21x.add_cases(sys.modules[__name__])


def in_ci(item: str, name: str) -> bool:
    """Whether CI runs this case: every case of issues 14 and 21, and the ``21X*`` subset."""
    return not item.startswith("21X") or name in bad_input_battery_21x.CI_CASES

if __name__ == "__main__":
    main()
