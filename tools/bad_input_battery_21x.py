"""The attacker's cases beyond the second battery (issue 21, items ``21X*``), added to
``tools/bad_input_battery.py``'s cases after ``bad_input_battery_21``'s.

Items are classes: ``21XO`` OS errors (non-regular files, name length, loops, encodings,
permissions), ``21XS`` silent acceptances (numbers, types, keys, names, outputs inside
inputs), ``21XL`` log and run-folder damage, ``21XC`` every command and flag with bad
arguments. A refusal must be clear (exit 2, ``file:`` or ``field:`` and ``fix:``) and write
nothing into the case's scratch folder. Most cases are one ``check --no-readiness`` or one
command on a copy of the shared finished run: no case starts a run of its own, so the class
adds little to the battery's time.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path
from types import ModuleType
from typing import Any

from bad_input_battery_21 import _tree

#: The ``21X*`` cases CI runs (``tests/cli/test_bad_input_battery.py``): every case that once
#: ended wrong (a hang, a silent acceptance, a vague refusal, files left behind), so the
#: battery's CI time stays small (each case is a process start); ``--only 21XO ...`` runs all.
CI_CASES = frozenset({
    "config is unreadable (check)", "config is YAML nested 5,000 deep (check)", "task has instruction.md as a FIFO (check)",
    "seed: 2**70", "the same guidance file twice", "runner.cli_version: \"latest\"", "run --output inside the cache root",
    "run --output inside an existing run folder", "events.jsonl is a FIFO: status", "events.jsonl is a FIFO: report",
    "events.jsonl is a FIFO: events", "ledger.sqlite is garbage: status", "ledger.sqlite is garbage: report",
    "ledger.sqlite is a folder: report", "evaluation.json with repeats NaN: report", "compare with no runs",
    "calibrate --seeds 0", "doctor --harness bogus", "doctor --ray-docker-host without =",
})


def add_cases(b: ModuleType) -> None:  # noqa: C901, PLR0915 - one block per case
    """Register the ``21X*`` cases with battery module ``b`` (its ``case``, ``cli``, ``Ctx``)."""
    case, cli, QUICKSTART, GUIDE = b.case, b.cli, b.QUICKSTART, b.GUIDE
    unprivileged = ([] if os.geteuid() != 0 else
                    ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                     "--inh-caps=-dac_override,-dac_read_search"])

    def refused(ctx: Any, d: Path, argv: list[str], env: dict[str, str] | None = None, *,
                prefix: list[str] | None = None, timeout: float = 60, stdin: str | None = None) -> Any:
        before = _tree(d)
        done = cli(argv, env or ctx.env, prefix=prefix, timeout=timeout, stdin=stdin)
        return done, {"wrote": _tree(d) != before, "clear": True}

    def check(ctx: Any, d: Path, cfg: Path, **kw: Any) -> Any:
        return refused(ctx, d, ["check", str(cfg), "--no-readiness"], **kw)

    def text_cfg(ctx: Any, d: Path, edit: Any) -> Path:
        cfg = ctx.config(d)
        cfg.write_text(edit(cfg.read_text()))
        return cfg

    def task_cfg(ctx: Any, d: Path, change: Any) -> Path:
        return ctx.task_copy(d, change)

    # ------------------------------------------------------------ 21XO: OS errors

    def _config_is(kind: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            path = d / "evaluation.yaml"
            if kind == "folder":
                path.mkdir()
            elif kind == "symlink loop":
                path.symlink_to(path)
            elif kind == "/dev/zero":
                path.symlink_to("/dev/zero")
            elif kind == "socket":
                s = socket.socket(socket.AF_UNIX)
                s.bind(str(path))
                s.close()
            elif kind == "300-character name":
                path = d / ("e" * 300 + ".yaml")
            elif kind == "unreadable":
                ctx.config(d).chmod(0)
            elif kind == "UTF-16":
                path.write_bytes(ctx.config(d).read_text().encode("utf-16"))
            elif kind == "NUL byte":
                path.write_bytes(ctx.config(d).read_bytes().replace(b"name: battery", b"name: bat\0tery"))
            elif kind == "empty":
                path.write_text("")
            elif kind == "a list":
                path.write_text("- name: x\n")
            elif kind == "a YAML alias bomb":
                lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
                lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
                path.write_text("\n".join(lines) + "\nname: *a9\n")
            elif kind == "YAML nested 5,000 deep":
                path.write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
            elif kind == "a python tag":
                path.write_text(ctx.config(d).read_text() + "x: !!python/object/apply:os.system ['true']\n")
            try:
                return check(ctx, d, path, prefix=unprivileged if kind == "unreadable" else None)
            finally:
                if kind == "unreadable":
                    path.chmod(0o644)

        return run_case

    for _kind in ("folder", "symlink loop", "/dev/zero", "socket", "300-character name", "unreadable", "UTF-16",
                  "NUL byte", "empty", "a list", "a YAML alias bomb", "YAML nested 5,000 deep", "a python tag"):
        case("21XO", f"config is {_kind} (check)")(_config_is(_kind))

    def _guidance_is(kind: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            g = d / "g.md"
            if kind == "a folder":
                g.mkdir()
            elif kind == "a FIFO":
                os.mkfifo(g)
            elif kind == "/dev/zero":
                g.symlink_to("/dev/zero")
            elif kind == "a symlink loop":
                g.symlink_to(g)
            elif kind == "a path with a NUL byte":
                g = Path(str(d / "g") + "\0.md")
            elif kind == "Latin-1 text":
                g.write_bytes("R\xe9sum\xe9 the tests first.\n".encode("latin-1"))
            return check(ctx, d, ctx.config(d, treatments={"g": {"guidance": [str(g)]}}), timeout=30)

        return run_case

    for _kind in ("a folder", "a FIFO", "/dev/zero", "a symlink loop", "a path with a NUL byte", "Latin-1 text"):
        case("21XO", f"guidance is {_kind} (check)")(_guidance_is(_kind))

    def _skill_holds(kind: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            skill = d / "pkg" / "tdd"
            if kind == "a file, not a folder":
                skill.parent.mkdir(parents=True)
                skill.write_text("not a folder\n")
            else:
                skill.mkdir(parents=True)
                (skill / "SKILL.md").write_text("---\nname: tdd\ndescription: Test first.\n---\nWrite tests.\n")
                if kind == "a FIFO":
                    os.mkfifo(skill / "pipe")
                elif kind == "a symlink to /etc/passwd":
                    (skill / "passwd").symlink_to("/etc/passwd")
                elif kind == "a symlink loop":
                    (skill / "loop").symlink_to(skill / "loop")
                elif kind == "SKILL.md as a folder":
                    (skill / "SKILL.md").unlink()
                    (skill / "SKILL.md").mkdir()
            return check(ctx, d, ctx.config(d, treatments={"s": {"skills": [str(skill)]}}), timeout=30)

        return run_case

    for _kind in ("a file, not a folder", "a FIFO", "a symlink to /etc/passwd", "a symlink loop", "SKILL.md as a folder"):
        case("21XO", f"skill holds {_kind} (check)")(_skill_holds(_kind))

    def _task_holds(kind: str) -> Any:
        def change(task: Path) -> None:
            ws = task / "workspace"
            if kind == "a FIFO in the workspace":
                os.mkfifo(ws / "pipe")
            elif kind == "a symlink to /etc/passwd in the workspace":
                (ws / "passwd").symlink_to("/etc/passwd")
            elif kind == "task.toml as a folder":
                (task / "task.toml").unlink()
                (task / "task.toml").mkdir()
            elif kind == "instruction.md as a FIFO":
                (task / "instruction.md").unlink()
                os.mkfifo(task / "instruction.md")
            elif kind == "instruction.md empty":
                (task / "instruction.md").write_text("")
            elif kind == "a duplicate key in task.toml":
                (task / "task.toml").write_text((task / "task.toml").read_text() + "\n[agent]\ntimeout_sec = 5\n")
            elif kind == "an unknown section in task.toml":
                (task / "task.toml").write_text((task / "task.toml").read_text() + "\n[agnet]\ntimeout_sec = 5\n")
            elif kind == "timeout_sec = nan":
                t = (task / "task.toml").read_text()
                (task / "task.toml").write_text(t.replace("[agent]\ntimeout_sec = 120", "[agent]\ntimeout_sec = nan"))
            elif kind == "timeout_sec = inf":
                t = (task / "task.toml").read_text()
                (task / "task.toml").write_text(t.replace("[agent]\ntimeout_sec = 120", "[agent]\ntimeout_sec = inf"))

        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            return check(ctx, d, task_cfg(ctx, d, change), timeout=30)

        return run_case

    for _kind in ("a FIFO in the workspace", "a symlink to /etc/passwd in the workspace", "task.toml as a folder",
                  "instruction.md as a FIFO", "instruction.md empty", "a duplicate key in task.toml",
                  "timeout_sec = nan", "timeout_sec = inf"):
        case("21XO", f"task has {_kind} (check)")(_task_holds(_kind))
    # Harbor's task.toml tolerates sections it does not know (newer Harbor schemas): accepted
    case("21XO", "task has an unknown section in task.toml (check)", expected=(0, 2))(
        _task_holds("an unknown section in task.toml"))

    @case("21XO", "tasks.source is a file (check)")
    def _source_file(ctx: Any) -> Any:
        d = ctx.fresh()
        (d / "tasks").write_text("x\n")
        return check(ctx, d, ctx.config(d, tasks={"source": str(d / "tasks"), "ids": ["roman-numerals"]}))

    def _ascii(argv_of: Any, expected_name: str) -> Any:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            env = {**ctx.env, "PYTHONIOENCODING": "ascii", "LANG": "C", "LC_ALL": "C"}
            return refused(ctx, d, argv_of(ctx, d), env=env)

        return run_case

    case("21XO", "PYTHONIOENCODING=ascii: check of a non-ASCII name and a missing task")(
        _ascii(lambda ctx, d: ["check", str(ctx.config(d, name="évaluation ✓", tasks={
            "source": str(QUICKSTART / "tasks"), "ids": ["tâche"]})), "--no-readiness"], ""))
    case("21XO", "PYTHONIOENCODING=ascii: init into a non-ASCII missing folder")(
        _ascii(lambda ctx, d: ["init", str(d / "dossier-é" / "sous" / "e.yaml")], ""))

    @case("21XO", "PYTHONIOENCODING=ascii: report of a run named with non-ASCII", expected=0)
    def _ascii_report(ctx: Any) -> Any:
        run = ctx.run_copy()
        env = {**ctx.env, "PYTHONIOENCODING": "ascii", "LANG": "C", "LC_ALL": "C"}
        return cli(["report", str(run)], env)

    @case("21XO", "TMPDIR that does not exist (run --dry-run)", expected=(0, 2))
    def _tmpdir(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["run", str(ctx.config(d)), "--dry-run"], env={**ctx.env, "TMPDIR": str(d / "nope")})

    @case("21XO", "XDG_CACHE_HOME relative (check)", expected=(0, 2))
    def _xdg_rel(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["check", str(ctx.config(d)), "--no-readiness"], env={**ctx.env, "XDG_CACHE_HOME": "rel/cache"})

    # ------------------------------------------------------------ 21XS: silent acceptances

    def _cfg_case(label: str, edit: Any = None, expected: int | tuple[int, ...] = 2, **over: Any) -> None:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            cfg = ctx.config(d, **over)
            if edit is not None:
                cfg.write_text(edit(cfg.read_text()))
            return check(ctx, d, cfg)

        case("21XS", label, expected=expected)(run_case)

    def _append(extra: str) -> Any:
        return lambda t: t + extra

    def _sub(old: str, new: str) -> Any:
        def edit(t: str) -> str:
            assert old in t, old
            return t.replace(old, new)
        return edit

    _cfg_case("timeout_seconds: .nan", _sub("timeout_seconds: 60", "timeout_seconds: .nan"))
    _cfg_case("timeout_seconds: .inf", _sub("timeout_seconds: 60", "timeout_seconds: .inf"))
    _cfg_case("timeout_seconds: -60", timeout_seconds=-60)
    _cfg_case("timeout_seconds: 0", timeout_seconds=0)
    _cfg_case("timeout_seconds: 1e-9", timeout_seconds=1e-9)
    _cfg_case("timeout_seconds: \"60\" (a string)", timeout_seconds="60")
    _cfg_case("repeats: 0", repeats=0)
    _cfg_case("repeats: -3", repeats=-3)
    _cfg_case("repeats: 2.5", repeats=2.5)
    _cfg_case("repeats: true (a boolean)", repeats=True)
    _cfg_case("repeats: 1e400 (overflows to inf)", _sub("repeats: 1", "repeats: 1e400"))
    _cfg_case("jobs: 0", jobs=0)
    _cfg_case("jobs: 99", jobs=99)
    _cfg_case("jobs: \"2\" (a string)", jobs="2")
    _cfg_case("seed: 2**70", seed=2 ** 70)
    _cfg_case("seed: 1.5", seed=1.5)
    _cfg_case("seed: .nan", _sub("seed: 3", "seed: .nan"))
    _cfg_case("cost_ceiling: -1", _append("cost_ceiling: -1\n"))
    _cfg_case("cost_ceiling: .inf", _append("cost_ceiling: .inf\n"))
    _cfg_case("cost_ceiling: \"10\" (a string)", _append("cost_ceiling: \"10\"\n"))
    _cfg_case("an unknown top-level key (repeat:)", _append("repeat: 2\n"))
    _cfg_case("an unknown runner key (modle:)", runner={"harness": "simulated", "model": "simulated-1", "modle": "x"})
    _cfg_case("an unknown environment key", environment={"backend": "local", "isolaton": "none"})
    _cfg_case("an unknown treatment key (guidence:)", treatments={"td": {"guidence": [str(GUIDE)]}})
    _cfg_case("a duplicate top-level YAML key (seed twice)", _append("seed: 4\n"))
    _cfg_case("name: null (the default name)", expected=(0, 2), name=None)
    _cfg_case("name: 42 (a number)", name=42)
    _cfg_case("name of 10,000 characters (printed escaped, never a path)", expected=(0, 2), name="n" * 10_000)
    _cfg_case("treatments: a list", treatments=[{"guidance": [str(GUIDE)]}])
    _cfg_case("treatment named vanilla", treatments={"vanilla": {"guidance": [str(GUIDE)]}})
    _cfg_case("treatment named ../evil", treatments={"../evil": {"guidance": [str(GUIDE)]}})
    _cfg_case("treatment named with a slash", treatments={"a/b": {"guidance": [str(GUIDE)]}})
    _cfg_case("treatment named with a newline", treatments={"a\nb": {"guidance": [str(GUIDE)]}})
    _cfg_case("treatment named with an ANSI escape", treatments={"\x1b[31mred": {"guidance": [str(GUIDE)]}})
    _cfg_case("treatment named empty", treatments={"": {"guidance": [str(GUIDE)]}})
    _cfg_case("treatment with nothing in it", treatments={"td": {}})
    _cfg_case("guidance: a string, not a list", treatments={"td": {"guidance": str(GUIDE)}})
    _cfg_case("the same guidance file twice", treatments={"td": {"guidance": [str(GUIDE), str(GUIDE)]}})
    _cfg_case("tasks.ids: []", tasks={"source": str(QUICKSTART / "tasks"), "ids": []})
    _cfg_case("tasks.ids: the same task twice", tasks={"source": str(QUICKSTART / "tasks"), "ids": ["word-wrap", "word-wrap"]})
    _cfg_case("tasks.ids: ../roman-numerals", tasks={"source": str(QUICKSTART / "tasks"), "ids": ["../tasks/roman-numerals"]})
    _cfg_case("tasks.ids: a number", tasks={"source": str(QUICKSTART / "tasks"), "ids": [5]})
    _cfg_case("tasks with both source and urls",
              tasks={"source": str(QUICKSTART / "tasks"), "ids": ["word-wrap"], "urls": ["https://github.com/a/b/tree/main/t"]})
    _cfg_case("runner.harness: unknown", runner={"harness": "gpt-pilot", "model": "x"})
    _cfg_case("runner.reasoning: extreme", runner={"harness": "simulated", "model": "simulated-1", "reasoning": "extreme"})
    _cfg_case("runner.cli_version: \"latest\"", runner={"harness": "simulated", "model": "simulated-1", "cli_version": "latest"})
    _cfg_case("environment.backend: kubernetes", environment={"backend": "kubernetes"})
    _cfg_case("environment.isolation: yes", environment={"backend": "local", "isolation": "yes"})
    _cfg_case("measurements: [tokens, Tokens]", measurements=["tokens", "Tokens"])
    _cfg_case("measurements: [] (correctness only)", expected=(0, 2), measurements=[])
    _cfg_case("measurements: [bogus]", measurements=["bogus"])
    _cfg_case("capabilities.subagents: \"no\" (a string)", capabilities={"subagents": "no"})
    _cfg_case("prices: a folder", prices=str(QUICKSTART))

    def _prices_case(name: str, text: str) -> None:
        def run_case(ctx: Any) -> Any:
            d = ctx.fresh()
            (d / "prices.json").write_text(text)
            return check(ctx, d, ctx.config(d, prices=str(d / "prices.json")))

        case("21XS", name)(run_case)

    _prices_case("prices.json with NaN", '{"as_of": "2026-01-01", "models": {"simulated-1": {"input": NaN, "output": 1}}}')
    _prices_case("prices.json with a negative price", '{"as_of": "2026-01-01", "models": {"simulated-1": {"input": -1, "output": 1}}}')
    _prices_case("prices.json with a string price", '{"as_of": "2026-01-01", "models": {"simulated-1": {"input": "1", "output": 1}}}')
    _prices_case("prices.json a list", "[1, 2]")

    @case("21XS", "run --output is the tasks source root")
    def _out_source(ctx: Any) -> Any:
        d = ctx.fresh()
        shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", d / "tasks" / "roman-numerals")
        cfg = ctx.config(d, tasks={"source": str(d / "tasks"), "ids": ["roman-numerals"]})
        return refused(ctx, d, ["run", str(cfg), "--output", str(d / "tasks"), "--foreground"])

    @case("21XS", "run --output is the guidance file's folder holding the config")
    def _out_cfgdir(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["run", str(ctx.config(d)), "--output", str(d), "--foreground"])

    @case("21XS", "run --output is an existing file")
    def _out_file(ctx: Any) -> Any:
        d = ctx.fresh()
        (d / "out").write_text("keep me\n")
        return refused(ctx, d, ["run", str(ctx.config(d)), "--output", str(d / "out"), "--foreground"])

    @case("21XS", "run --output inside the cache root")
    def _out_cache(ctx: Any) -> Any:
        d = ctx.fresh()
        cache = d / "cache"
        env = {**ctx.env, "XDG_CACHE_HOME": str(cache)}
        return refused(ctx, d, ["run", str(ctx.config(d)), "--output", str(cache / "pluginbench" / "run"), "--foreground"],
                       env=env)

    @case("21XS", "run --output inside an existing run folder")
    def _out_run(ctx: Any) -> Any:
        run = ctx.run_copy()
        d = run.parent
        return refused(ctx, d, ["run", str(ctx.config(d)), "--output", str(run / "evidence" / "again"), "--foreground"])

    # ------------------------------------------------------------ 21XL: log and run-folder damage

    def _log(name: str, damage: Any, cmds: tuple[str, ...] = ("status", "report", "run"),
             expected: int | tuple[int, ...] = 2) -> None:
        for cmd in cmds:
            def run_case(ctx: Any, cmd: str = cmd) -> Any:
                run = ctx.run_copy()
                damage(run)
                before = _tree(run), (run / "events.jsonl").read_bytes() if (run / "events.jsonl").is_file() else b""
                argv = [cmd, str(run)] + (["--foreground"] if cmd == "run" else []) + (["--json"] if cmd == "status" else [])
                done = cli(argv, ctx.env, timeout=60)
                after = _tree(run), (run / "events.jsonl").read_bytes() if (run / "events.jsonl").is_file() else b""
                return done, {"wrote": before != after, "clear": True}

            case("21XL", f"{name}: {cmd}", expected=expected)(run_case)

    def _lines(run: Path) -> list[str]:
        return (run / "events.jsonl").read_text().splitlines()

    def _write(run: Path, lines: list[str]) -> None:
        (run / "events.jsonl").write_text("".join(line + "\n" for line in lines))

    def _swap(run: Path) -> None:
        lines = _lines(run)
        m = len(lines) // 2
        lines[m], lines[m + 1] = lines[m + 1], lines[m]
        _write(run, lines)

    def _torn_mid(run: Path) -> None:
        lines = _lines(run)
        m = len(lines) // 2
        lines[m] = lines[m][: len(lines[m]) // 2]
        _write(run, lines)

    def _dup_seq(run: Path) -> None:
        lines = _lines(run)
        m = len(lines) // 2
        lines.insert(m + 1, lines[m])
        _write(run, lines)

    def _field(key: str, value: Any) -> Any:
        def damage(run: Path) -> None:
            lines = _lines(run)
            m = len(lines) // 2
            ev = json.loads(lines[m])
            ev[key] = value
            lines[m] = json.dumps(ev)
            _write(run, lines)
        return damage

    def _mixed_v0(run: Path) -> None:
        _field("v", 0)(run)

    def _nul(run: Path) -> None:
        (run / "events.jsonl").write_bytes((run / "events.jsonl").read_bytes().replace(b"\n", b"\n\0", 1))

    def _crlf(run: Path) -> None:
        (run / "events.jsonl").write_bytes((run / "events.jsonl").read_bytes().replace(b"\n", b"\r\n"))

    def _bom(run: Path) -> None:
        (run / "events.jsonl").write_bytes(b"\xef\xbb\xbf" + (run / "events.jsonl").read_bytes())

    def _fifo_log(run: Path) -> None:
        (run / "events.jsonl").unlink()
        os.mkfifo(run / "events.jsonl")

    def _ledger_garbage(run: Path) -> None:
        (run / "evidence" / "ledger.sqlite").write_bytes(b"not a database at all\n" * 100)

    def _ledger_dir(run: Path) -> None:
        (run / "evidence" / "ledger.sqlite").unlink()
        (run / "evidence" / "ledger.sqlite").mkdir()

    def _lock_dir(run: Path) -> None:
        (run / "run.lock").mkdir()

    def _lock_garbage(run: Path) -> None:
        (run / "run.lock").write_text("{not json")

    def _eval_nan(run: Path) -> None:
        p = run / "evaluation.json"
        p.write_text(p.read_text().replace('"repeats": 1', '"repeats": NaN'))

    def _report_file(run: Path) -> None:
        shutil.rmtree(run / "report")
        (run / "report").write_text("not a folder\n")

    _log("two middle events swapped (seq out of order)", _swap)
    _log("a torn line mid-log", _torn_mid)
    _log("a duplicated line (seq repeated)", _dup_seq)
    _log("an event with seq as a string", _field("seq", "7"), ("status", "report"))
    _log("an event with v: 0", _mixed_v0, ("status", "report"))
    # a field no version defines is ignored (msgspec), as a newer optional field would be: no value changes
    _log("an event with an unknown field", _field("injected", True), ("status", "report"), (0, 2))
    _log("a NUL byte after the first line", _nul, ("status", "report"))
    _log("CRLF line ends (the same JSON)", _crlf, ("status", "report"), (0, 2))
    _log("a UTF-8 BOM", _bom, ("status", "report"))
    _log("events.jsonl is a FIFO", _fifo_log, ("status", "report", "events"))
    _log("ledger.sqlite is garbage", _ledger_garbage, ("status", "report", "run"))
    _log("ledger.sqlite is a folder", _ledger_dir, ("status", "report", "run"))
    _log("run.lock is a folder", _lock_dir, ("run",))
    _log("run.lock is a folder (no owner)", _lock_dir, ("status", "stop"), (0, 2))
    _log("run.lock is not JSON (no owner proven, nothing signalled)", _lock_garbage, ("status", "stop"), (0, 2))
    _log("evaluation.json with repeats NaN", _eval_nan, ("run", "report"))
    _log("report is a file", _report_file, ("report",))

    # ------------------------------------------------------------ 21XC: commands and flags

    def _cmd(name: str, argv_of: Any, expected: int | tuple[int, ...] = 2, *, on_run: bool = False) -> None:
        def run_case(ctx: Any) -> Any:
            if on_run:
                run = ctx.run_copy()
                d = run.parent
                argv = argv_of(ctx, d, run)
            else:
                d = ctx.fresh()
                argv = argv_of(ctx, d, None)
            return refused(ctx, d, argv, timeout=60)

        case("21XC", name, expected=expected)(run_case)

    _cmd("status of a folder that is no run", lambda c, d, r: ["status", str(d)])
    _cmd("status of a file", lambda c, d, r: ["status", str(c.config(d))])
    _cmd("report of a missing folder", lambda c, d, r: ["report", str(d / "nope")])
    _cmd("events of a folder that is no run", lambda c, d, r: ["events", str(d)])
    _cmd("stop of a folder that is no run", lambda c, d, r: ["stop", str(d)])
    _cmd("stop of a finished run (nothing owns it)", lambda c, d, r: ["stop", str(r)], (0, 2), on_run=True)
    _cmd("run of a folder that is no run", lambda c, d, r: ["run", str(d), "--foreground"])
    _cmd("run --output for a run folder (resume)", lambda c, d, r: ["run", str(r), "--output", str(d / "x")], on_run=True)
    _cmd("run --dry-run --json of a missing config", lambda c, d, r: ["run", str(d / "missing.yaml"), "--dry-run", "--json"])
    _cmd("check of a missing config", lambda c, d, r: ["check", str(d / "missing.yaml")])
    _cmd("init onto an existing folder", lambda c, d, r: ["init", str(d)])
    _cmd("init with a 300-character name", lambda c, d, r: ["init", str(d / ("i" * 300 + ".yaml"))])
    _cmd("compare with no runs", lambda c, d, r: ["compare", "--gates", str(QUICKSTART / "gates.yaml")])
    _cmd("compare a folder that is no run", lambda c, d, r: ["compare", str(d), "--gates", str(QUICKSTART / "gates.yaml")])

    def _gates_text(text: str) -> Any:
        def argv(c: Any, d: Path, r: Path | None) -> list[str]:
            (d / "g.yaml").write_text(text)
            return ["compare", str(c.finished()), "--gates", str(d / "g.yaml")]
        return argv

    _cmd("compare with an empty gates file", _gates_text(""))
    _cmd("compare with gates as a list", _gates_text("- a\n- b\n"))
    _cmd("compare with a gate margin .nan", _gates_text("gates:\n  - {name: x, metric: pass_rate, margin: .nan}\n"))
    _cmd("compare with an unknown gates key", _gates_text("gatez: []\n"))
    _cmd("compare --candidate unknown arm",
         lambda c, d, r: ["compare", str(c.finished()), "--gates", str(QUICKSTART / "gates.yaml"), "--candidate", "nope"])
    _cmd("calibrate --seeds 0", lambda c, d, r: ["calibrate", str(c.finished()), "--gates", str(QUICKSTART / "gates.yaml"),
                                                "--seeds", "0"])
    _cmd("calibrate a folder that is no run",
         lambda c, d, r: ["calibrate", str(d), "--gates", str(QUICKSTART / "gates.yaml")])
    _cmd("measure --revision ../x", lambda c, d, r: ["measure", str(r), "--measurements", "cyclomatic",
                                                      "--revision", "../x", "--yes"], on_run=True)
    _cmd("measure --measurements ''", lambda c, d, r: ["measure", str(r), "--measurements", "", "--revision", "x",
                                                        "--yes"], on_run=True)
    _cmd("measure --coverage-profiles a folder", lambda c, d, r: ["measure", str(r), "--measurements", "coverage",
                                                                  "--revision", "x", "--coverage-profiles", str(d), "--yes"],
         on_run=True)
    _cmd("review --revision with a slash", lambda c, d, r: ["review", str(r), "--revision", "a/b", "--yes"], on_run=True)
    _cmd("review --reviewer-harness bogus", lambda c, d, r: ["review", str(r), "--revision", "x", "--reviewer-harness",
                                                             "bogus", "--yes"], on_run=True)
    _cmd("judge prepare with a missing criteria file",
         lambda c, d, r: ["judge", "prepare", f"{c.finished()}=vanilla", f"{c.finished()}=td", "--criteria",
                          str(d / "nope.md"), "--seed", "1", "--output", str(d / "j")])
    _cmd("judge prepare with an unknown arm",
         lambda c, d, r: ["judge", "prepare", f"{c.finished()}=vanilla", f"{c.finished()}=zz", "--criteria",
                          str(GUIDE), "--seed", "1", "--output", str(d / "j")])
    _cmd("judge prepare with no = in a side",
         lambda c, d, r: ["judge", "prepare", str(c.finished()), f"{c.finished()}=td", "--criteria",
                          str(GUIDE), "--seed", "1", "--output", str(d / "j")])
    _cmd("dashboard --port 70000", lambda c, d, r: ["dashboard", str(d), "--port", "70000"])
    _cmd("dashboard --port -1", lambda c, d, r: ["dashboard", str(d), "--port", "-1"])
    _cmd("dashboard of a missing folder", lambda c, d, r: ["dashboard", str(d / "nope"), "--port", "0"])
    _cmd("tasks pick of a local path", lambda c, d, r: ["tasks", "pick", str(d)])
    _cmd("tasks pick of a non-git URL", lambda c, d, r: ["tasks", "pick", "ftp://example.invalid/x"])
    _cmd("doctor --harness bogus", lambda c, d, r: ["doctor", "--harness", "bogus"])
    _cmd("doctor --ray-docker-host without =", lambda c, d, r: ["doctor", "--ray", "127.0.0.1:1", "--ray-docker-host", "x"])
    _cmd("events --follow of a finished run ends", lambda c, d, r: ["events", str(r), "--follow"], 0, on_run=True)

    @case("21XC", "status --watch of a finished run ends", expected=0)
    def _watch(ctx: Any) -> Any:
        run = ctx.run_copy()
        return cli(["status", str(run), "--watch"], ctx.env, timeout=30)

    @case("21XC", "run of a config read from stdin (-)")
    def _stdin(ctx: Any) -> Any:
        d = ctx.fresh()
        return refused(ctx, d, ["check", "-"], stdin=ctx.config(d).read_text())

