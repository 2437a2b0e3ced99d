"""The second bad-input battery (issue 21), added to ``tools/bad_input_battery.py``'s cases.

Items are classes, as the issue counted them: ``21T`` cases once ended in a traceback,
``21H`` in a hang, ``21S`` in a silent acceptance, ``21V`` in a vague refusal (no file,
field or fix), ``21D`` are the product description's deviations. A refusal here must be
clear: exit 2 with ``file:`` or ``field:`` and ``fix:`` lines, and nothing written into
the case's scratch folder (``wrote`` otherwise). Cases that need file permissions to bite
run without ``CAP_DAC_OVERRIDE`` (``setpriv``) when the battery runs as root.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def _tree(folder: Path) -> set[str]:
    """Every path under ``folder`` (what a refusal must leave as it was)."""
    out: set[str] = set()
    stack = [str(folder)]
    while stack:  # not os.walk: it recurses, and one case nests 1,100 folders
        with os.scandir(stack.pop()) as it:
            for e in it:
                out.add(os.path.relpath(e.path, folder))
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return out


def add_cases(b: ModuleType) -> None:  # noqa: C901, PLR0915 - one block per case, in the issue's order
    """Register the issue-21 cases with battery module ``b`` (its ``case``, ``cli``, ``Ctx``)."""
    case, cli, QUICKSTART, GUIDE = b.case, b.cli, b.QUICKSTART, b.GUIDE
    unprivileged = ([] if os.geteuid() != 0 else
                    ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                     "--inh-caps=-dac_override,-dac_read_search"])

    def refused(ctx: Any, d: Path, argv: list[str], env: dict[str, str] | None = None, *,
                prefix: list[str] | None = None, timeout: float = 120, watch: Path | None = None) -> Any:
        """Run ``argv``; ``wrote`` is whether anything appeared under ``watch`` (default ``d``)."""
        where = watch or d
        before = _tree(where)
        done = cli(argv, env or ctx.env, prefix=prefix, timeout=timeout)
        return done, {"wrote": _tree(where) != before, "clear": True}

    def cfg_with(ctx: Any, d: Path, text_edit: Any = None, **over: Any) -> Path:
        cfg = ctx.config(d, **over)
        if text_edit is not None:
            cfg.write_text(text_edit(cfg.read_text()))
        return cfg

    def task_dir(d: Path, name: str = "roman-numerals", src: str = "roman-numerals") -> Path:
        dest = d / "tasks" / name
        shutil.copytree(QUICKSTART / "tasks" / src, dest)
        return dest

    def one_task_cfg(ctx: Any, d: Path, **over: Any) -> Path:
        return ctx.config(d, tasks={"source": str(d / "tasks"), "ids": ["roman-numerals"]}, **over)

    # ------------------------------------------------------------ 21T: tracebacks

    @case("21T", "task id of 300 characters (check)")
    def _long_id(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["check", str(ctx.config(d, tasks={"source": str(QUICKSTART / "tasks"), "ids": ["a" * 300]}))])

    @case("21T", "run --output with a 300-character folder name")
    def _long_out(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["run", str(ctx.config(d)), "--output", str(d / ("b" * 300))])

    @case("21T", "guidance path with a 300-character file name")
    def _long_guide(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["check", str(ctx.config(d, treatments={"g": {"guidance": [str(d / ("c" * 300 + ".md"))]}}))])

    def _unreadable(what: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            task = task_dir(d)
            guide = d / "g.md"
            guide.write_text("Run the tests.\n")
            cfg = one_task_cfg(ctx, d, treatments={"g": {"guidance": [str(guide)]}})
            target = {"guidance": guide, "workspace": task / "workspace", "tests/": task / "tests"}[what]
            target.chmod(0)
            try:
                return refused(ctx, d, ["check", str(cfg), "--no-readiness"], prefix=unprivileged)
            finally:
                target.chmod(0o755)

        return run_case

    for _what in ("guidance", "workspace", "tests/"):
        case("21T", f"unreadable {_what} (check, not root)")(_unreadable(_what))

    def _run_damage(cmd: list[str], damage: str) -> Any:
        def run_case(ctx: Any) -> Any:
            run = ctx.run_copy()
            target = {"events-unreadable": run / "events.jsonl", "results-unreadable": run / "report" / "results.json",
                      "report-readonly": run / "report", "run-readonly": run, "events-dir": run / "events.jsonl"}[damage]
            mode = target.stat().st_mode
            if damage == "events-dir":
                target.unlink()
                target.mkdir()
            else:
                target.chmod(0o555 if target.is_dir() else 0)
            argv = [a.replace("RUN", str(run)) for a in cmd]
            try:
                done = cli(argv, ctx.env, prefix=[] if damage == "events-dir" else unprivileged)
            finally:
                if damage != "events-dir":
                    target.chmod(mode)
            return done, {"wrote": False, "clear": True}

        return run_case

    def _gates(d: Path, text: str | None = None) -> Path:
        g = d / "gates.yaml"
        g.write_text(text if text is not None else (QUICKSTART / "gates.yaml").read_text().replace(
            "splits:\n  string-tasks: [slugify-unicode, csv-quoting, word-wrap]\n", ""))
        return g

    case("21T", "events.jsonl unreadable: status (not root)")(_run_damage(["status", "RUN"], "events-unreadable"))
    case("21T", "events.jsonl unreadable: report (not root)")(_run_damage(["report", "RUN"], "events-unreadable"))
    case("21T", "report/results.json unreadable: compare (not root)")(
        lambda ctx: _run_damage(["compare", "RUN", "--gates", str(_gates(ctx.fresh()))], "results-unreadable")(ctx))
    case("21T", "report/ read-only: report (not root)")(_run_damage(["report", "RUN"], "report-readonly"))
    # report writes only inside report/, so a read-only run folder with a writable report/ may be accepted
    case("21T", "run folder read-only: report (not root)", expected=(0, 2))(_run_damage(["report", "RUN"], "run-readonly"))
    case("21T", "events.jsonl is a folder: status")(_run_damage(["status", "RUN"], "events-dir"))
    case("21T", "events.jsonl is a folder: report")(_run_damage(["report", "RUN"], "events-dir"))

    @case("21T", "gates file is a folder: compare")
    def _gates_dir(ctx: Any) -> Any:
        d = ctx.fresh()
        (d / "gates").mkdir()
        return refused(ctx, d, ["compare", str(ctx.finished()), "--gates", str(d / "gates")])

    @case("21T", "PYTHONIOENCODING=ascii: run --dry-run", expected=0)
    def _ascii_dry(ctx: Any) -> Any:
        d = ctx.fresh()
        return cli(["run", str(ctx.config(d, name="prüfung—ascii")), "--dry-run"], {**ctx.env, "PYTHONIOENCODING": "ascii"})

    @case("21T", "PYTHONIOENCODING=ascii: status", expected=0)
    def _ascii_status(ctx: Any) -> Any:
        return cli(["status", str(ctx.finished())], {**ctx.env, "PYTHONIOENCODING": "ascii"})

    @case("21T", "XDG_CACHE_HOME is a file (check)")
    def _cache_file(ctx: Any) -> Any:
        d = ctx.fresh()
        (d / "cachefile").write_text("x")
        return refused(ctx, d, ["check", str(ctx.config(d)), "--no-readiness"], {**ctx.env, "XDG_CACHE_HOME": str(d / "cachefile")})

    @case("21T", "XDG_CACHE_HOME under /proc (run)")
    def _cache_proc(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["run", str(ctx.config(d)), "--output", str(d / "run"), "--foreground"],
                       {**ctx.env, "XDG_CACHE_HOME": "/proc/pluginbench-battery"})

    @case("21T", "run --output through a symlink loop")
    def _loop(ctx: Any) -> Any:
        d = ctx.fresh()
        os.symlink(d / "loop", d / "loop")
        return refused(ctx, d, ["run", str(ctx.config(d)), "--output", str(d / "loop" / "run")])

    @case("21T", "workspace 1,100 folders deep (check)", expected=(0, 2))
    def _deep(ctx: Any) -> Any:
        d = ctx.fresh()
        task = task_dir(d)
        deep = task / "workspace"
        fd = os.open(deep, os.O_RDONLY)
        for _ in range(1100):  # by descriptor: the whole path would pass PATH_MAX, and os.makedirs recurses
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("x.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
            fh.write("x = 1\n")
        os.close(fd)
        try:
            return refused(ctx, d, ["check", str(one_task_cfg(ctx, d)), "--no-readiness"])
        finally:  # shutil.rmtree recurses: the battery's own clean-up would end in a RecursionError
            subprocess.run(["rm", "-rf", str(deep / "d")], check=False)

    @case("21T", "environment.container_cpus: .nan (docker)")
    def _nan_cpus(ctx: Any) -> Any:
        d = ctx.fresh()
        cfg = ctx.config(d, environment={"backend": "docker"}, runner={"harness": "nop"})
        cfg.write_text(cfg.read_text().replace("backend: docker", "backend: docker\n  container_cpus: .nan"))
        return refused(ctx, d, ["check", str(cfg), "--no-readiness"])

    def _collision(cmd: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            task_dir(d, "x")
            task_dir(d, "x__td", "word-wrap")
            cfg = ctx.config(d, tasks={"source": str(d / "tasks"), "ids": ["x", "x__td"]},
                             treatments={"td__vanilla": {"guidance": [str(GUIDE)]}})
            argv = ["check", str(cfg), "--no-readiness"] if cmd == "check" else ["run", str(cfg), "--output", str(d / "run"), "--foreground"]
            return refused(ctx, d, argv)

        return run_case

    case("21T", "attempt ids collide (x + td__vanilla vs x__td + vanilla): run")(_collision("run"))

    @case("21T", "two runs' workers write one shared cache file at once (.tmp race)", expected=0)
    def _tmp_race(ctx: Any) -> Any:
        d = ctx.fresh()
        target = d / "cache" / "readiness" / "task.json"
        script = ("import sys; from pathlib import Path; from pluginbench.actors._pipeline import write_json\n"
                  "for i in range(400): write_json(Path(sys.argv[1]), {'ok': True, 'i': i})\n")
        procs = [subprocess.Popen([sys.executable, "-c", script, str(target)], env=ctx.env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(2)]
        outs = [p.communicate(timeout=120)[0] for p in procs]
        codes = [p.returncode for p in procs]
        left = sorted(p.name for p in target.parent.iterdir() if p.name != "task.json")
        code = 0 if codes == [0, 0] and not left and json.loads(target.read_text())["ok"] else 1
        return subprocess.CompletedProcess([], code, f"writers exited {codes}; temp files left: {left}", "\n".join(outs))

    # ------------------------------------------------------------ 21H: hang

    def _fifo(cmd: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            os.mkfifo(d / "evaluation.yaml")
            argv = [cmd, str(d / "evaluation.yaml")] + (["--dry-run"] if cmd == "run" else [])
            return refused(ctx, d, argv, timeout=20)

        return run_case

    case("21H", "config is a FIFO: check")(_fifo("check"))
    case("21H", "config is a FIFO: run --dry-run")(_fifo("run"))

    # ------------------------------------------------------------ 21S: silent acceptances

    def _skill(d: Path, extra: dict[str, str], front: bool = True) -> Path:
        skill = d / "pkg" / "tdd"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(("---\nname: tdd\ndescription: Test first.\n---\n" if front else "") + "Write tests.\n")
        for name, text in extra.items():
            (skill / name).write_text(text)
        return skill

    @case("21S", "simulated: a skill's .env holding a token")
    def _dotenv(ctx: Any) -> Any:
        d = ctx.fresh()
        skill = _skill(d, {".env": "ANTHROPIC_API_KEY=sk-ant-battery-not-a-token\n"})
        return refused(ctx, d, ["check", str(ctx.config(d, treatments={"s": {"skills": [str(skill)]}})), "--no-readiness"])

    @case("21S", "simulated: a skill without frontmatter")
    def _nofront(ctx: Any) -> Any:
        d = ctx.fresh()
        skill = _skill(d, {}, front=False)
        return refused(ctx, d, ["check", str(ctx.config(d, treatments={"s": {"skills": [str(skill)]}})), "--no-readiness"])

    def _candidates(text: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            task = task_dir(d)
            (task / "simulated" / "candidates.toml").write_text(text)
            return refused(ctx, d, ["check", str(one_task_cfg(ctx, d)), "--no-readiness"])

        return run_case

    case("21S", "simulated/candidates.toml is not TOML (check)")(_candidates("[[candidates]\nname = \n"))
    case("21S", "simulated/candidates.toml names a missing patch (check)")(
        _candidates('keywords = ["test"]\n[[candidates]]\nname = "x"\npatch = "missing.patch"\nweight = 1\n'))
    case("21S", "simulated/candidates.toml weight = -1 (check)")(
        _candidates('keywords = ["test"]\n[[candidates]]\nname = "x"\npatch = ""\nweight = -1\n'))

    def _inside(where: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            task = task_dir(d)
            skill = _skill(d, {})
            cfg = one_task_cfg(ctx, d, treatments={"s": {"skills": [str(skill)]}})
            out = {"workspace": task / "workspace" / "run", "task": task / "run", "skill": skill / "run"}[where]
            return refused(ctx, d, ["run", str(cfg), "--output", str(out), "--foreground"])

        return run_case

    case("21S", "run --output inside a task's workspace")(_inside("workspace"))
    case("21S", "run --output inside a task folder")(_inside("task"))
    case("21S", "run --output inside a delivered skill")(_inside("skill"))
    case("21S", "attempt ids collide (x + td__vanilla vs x__td + vanilla): check")(_collision("check"))

    def _no_escape(argv_of: Any) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            done = cli(argv_of(ctx, d), ctx.env)
            leaked = "\x1b" in done.stdout + done.stderr
            code = 1 if leaked else done.returncode
            return subprocess.CompletedProcess([], code, ("ESC reached the terminal: " if leaked else "") + done.stdout,
                                               done.stderr), {"wrote": False, "clear": not leaked and code != 0}

        return run_case

    case("21S", "ANSI escape in the evaluation name (run --dry-run)", expected=(0, 2))(
        _no_escape(lambda ctx, d: ["run", str(ctx.config(d, name="\x1b[31mred\x1b[0m")), "--dry-run"]))
    case("21S", "ANSI escape in a task id (check)")(
        _no_escape(lambda ctx, d: ["check", str(ctx.config(d, tasks={"source": str(QUICKSTART / "tasks"), "ids": ["\x1b[2Jx"]}))]))

    def _config_case(name: str, edit: Any = None, **over: Any) -> None:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            return refused(ctx, d, ["check", str(cfg_with(ctx, d, edit, **over)), "--no-readiness"])

        case("21S", name)(run_case)

    docker = {"backend": "docker"}
    _config_case("container_cpus: -1 (docker)", runner={"harness": "nop"}, environment={**docker, "container_cpus": -1.0})
    _config_case("container_cpus: .inf (docker)", lambda t: t.replace("backend: docker", "backend: docker\n  container_cpus: .inf"),
                 runner={"harness": "nop"}, environment=docker)
    _config_case("container_memory_mb: -5 (docker)", runner={"harness": "nop"}, environment={**docker, "container_memory_mb": -5})
    _config_case("cost_ceiling: .nan", lambda t: t + "cost_ceiling: .nan\n")
    _config_case("seed: -1", seed=-1)
    _config_case("capabilities.max_threads: -1", capabilities={"max_threads": -1})
    _config_case("container_cpus on the local backend", environment={"backend": "local", "container_cpus": 2.0})
    _config_case("container_memory_mb on the local backend", environment={"backend": "local", "container_memory_mb": 512})
    _config_case("measurement_settings.require_ready: \"yes\"", measurement_settings={"require_ready": "yes"})
    _config_case("measurement_settings.require_ready: 1", measurement_settings={"require_ready": 1})
    _config_case("measurements: [tokens, tokens]", measurements=["tokens", "tokens"])

    @case("21S", "prices.json with a duplicate key (check)")
    def _prices(ctx: Any) -> Any:
        d = ctx.fresh()
        (d / "prices.json").write_text('{"as_of": "2026-01-01", "as_of": "2026-02-01", "models": {}}\n')
        return refused(ctx, d, ["check", str(ctx.config(d, prices=str(d / "prices.json"))), "--no-readiness"])

    @case("21S", "gates YAML with a duplicate key (compare)")
    def _gates_dup(ctx: Any) -> Any:
        d = ctx.fresh()
        text = _gates(d).read_text()
        return refused(ctx, d, ["compare", str(ctx.finished()), "--gates",
                                str(_gates(d, "count_overlap_passes: false\n" + text))])

    @case("21S", "run RUN --json (resume; --json needs --dry-run)")
    def _resume_json(ctx: Any) -> Any:
        run = ctx.run_copy()
        return refused(ctx, run.parent, ["run", str(run), "--json"])

    def _judge(same: bool, binary: bool) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            run = str(ctx.finished())
            crit = d / "criteria.md"
            crit.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0" if binary else b"Prefer tested code.\n")
            sides = [f"{run}=vanilla", f"{run}=vanilla" if same else f"{run}=td"]
            return refused(ctx, d, ["judge", "prepare", *sides, "--criteria", str(crit), "--seed", "1", "--output", str(d / "j")])

        return run_case

    case("21S", "judge prepare of an arm against itself")(_judge(same=True, binary=False))
    case("21S", "judge prepare with binary criteria")(_judge(same=False, binary=True))

    def _guidance(text: bytes, label: str) -> None:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            (d / "g.md").write_bytes(text)
            return refused(ctx, d, ["check", str(ctx.config(d, treatments={"g": {"guidance": [str(d / "g.md")]}})), "--no-readiness"])

        case("21S", f"{label} guidance file")(run_case)

    _guidance(b"", "empty")
    _guidance(b"  \n\n\t\n", "whitespace-only")

    # ------------------------------------------------------------ 21V: vague

    def _toml_edit(name: str, old: str, new: str) -> None:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            toml = task_dir(d) / "task.toml"
            toml.write_text(toml.read_text().replace(old, new))
            return refused(ctx, d, ["check", str(one_task_cfg(ctx, d)), "--no-readiness"])

        case("21V", name)(run_case)

    _toml_edit("workdir = 5: names task.toml and the field", 'workdir = "/app"', "workdir = 5")
    _toml_edit('workdir = "../../etc": names task.toml and the field', 'workdir = "/app"', 'workdir = "../../etc"')
    _toml_edit("[agent] timeout_sec = 1e-9", "[agent]\ntimeout_sec = 120", "[agent]\ntimeout_sec = 1e-9")

    def _codec(where: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            if where == "config":
                cfg = ctx.config(d)
                cfg.write_bytes(cfg.read_bytes().replace(b"name: battery", b"name: batt\xffery"))
            else:
                task = task_dir(d)
                rel = {"task.toml": "task.toml", "candidates.toml": "simulated/candidates.toml"}[where]
                f = task / rel
                lines = f.read_bytes().split(b"\n")
                lines[2] = lines[2] + b" # \xff"
                f.write_bytes(b"\n".join(lines))
                cfg = one_task_cfg(ctx, d)
            done, flags = refused(ctx, d, ["check", str(cfg), "--no-readiness"])
            if not re.search(r"line \d+", done.stderr):
                flags["clear"] = False
            return done, flags

        return run_case

    for _where in ("config", "task.toml", "candidates.toml"):
        case("21V", f"{_where} not UTF-8: the refusal names the line")(_codec(_where))

    # ------------------------------------------------------------ 21D: description deviations

    @case("21D", "pluginbench --version", expected=0)
    def _version(ctx: Any) -> Any:
        done = cli(["--version"], ctx.env)
        ok = done.returncode == 0 and done.stdout.strip().startswith("pluginbench ")
        return subprocess.CompletedProcess([], 0 if ok else 1, done.stdout or done.stderr, done.stderr)

    for _scope in ("source_scope", "test_scope"):
        _config_case_d = {"measurements": ["tokens", "lines", "cyclomatic", "dead_code"],
                          "measurement_settings": {_scope: ["src/"]}}

        def _scope_case(ctx: Any, over: dict[str, Any] = _config_case_d) -> Any:
            d = ctx.fresh()
            return refused(ctx, d, ["check", str(ctx.config(d, **over)), "--no-readiness"])

        case("21D", f"measurement_settings.{_scope} with lines/cyclomatic/dead_code only")(_scope_case)

    @case("21D", "a misspelt task in gates splits (compare)")
    def _split(ctx: Any) -> Any:
        d = ctx.fresh()
        text = _gates(d).read_text()
        return refused(ctx, d, ["compare", str(ctx.finished()), "--gates",
                                str(_gates(d, "splits:\n  mine: [roman-numeralz]\n" + text))])

    @case("21D", "run --dry-run exits 1 like check when a selected measure stops the run", expected=1)
    def _dry_ready(ctx: Any) -> Any:
        d = ctx.fresh()
        cfg = ctx.config(d, tasks={"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals"]},
                         measurements=["tokens", "coverage"], measurement_settings={"require_ready": True})
        dry = cli(["run", str(cfg), "--dry-run"], ctx.env)  # check exits 1 here: coverage is ready on no task
        said = "stops the run" in dry.stdout + dry.stderr
        return subprocess.CompletedProcess([], dry.returncode if said else 0, f"run --dry-run exit {dry.returncode}: "
                                           f"{(dry.stdout + dry.stderr).strip().splitlines()[-1:]}", "")

    @case("21D", "isolation: auto (as in the demo) is reported resolved, not none", expected=0)
    def _auto_isolation(ctx: Any) -> Any:
        if shutil.which("bwrap") is None:
            return None
        run = ctx.finished()  # its config leaves environment.isolation at auto, as the demo's does
        got = json.loads((run / "report" / "results.json").read_text()).get("run", {}).get("isolation")
        html = (run / "report" / "report.html").read_text()
        status = cli(["status", str(run)], ctx.env)
        ok = got == "bubblewrap" and "<dd>bubblewrap</dd>" in html and "(bubblewrap)" in status.stdout
        return subprocess.CompletedProcess([], 0 if ok else 1, f"results.json isolation {got!r}", status.stderr)
