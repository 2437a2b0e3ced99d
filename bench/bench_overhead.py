"""What a user waits for, as paired ratios against an anchor measured in the same run (issue 27).

    .venv/bin/python bench/bench_overhead.py [--rounds 3] [--harness claude codex] [--parts ...]

Every row runs PluginBench and its anchor interleaved, round by round, so machine noise
hits both alike, and prints the medians, the ratio of the medians, every round's own
ratio (the paired ratios), the CPU seconds of each side's whole process tree (median, and
paired ratios; the bench is a child subreaper, so bubblewrap's reparented sandbox init and
the CLI under it are adopted, reaped and counted) and the one-minute load average before
and after the row:

* ``attempts`` (per harness): a 12-attempt probe run (2 tasks x 6 repeats, vanilla,
  bubblewrap when available), jobs 1 and jobs 2; per attempt = coding.started to the last
  attempt.completed, over 12. Anchor: the bare CLI on the same probe scenario, 12 sessions
  run ``jobs`` at a time, wall over 12.
* ``one`` (per harness): a whole one-attempt run, ``pluginbench run --foreground --yes``
  as a process (imports, run creation, preparation with warm readiness, the attempt,
  grading, report). Anchor: one bare CLI session. Each side's runs are also split at the
  attempt (``attempt.started``/``attempt.completed`` against the process's start and
  exit): the run's fixed cost (interpreter, imports, run creation, preparation before the
  attempt; report and exit after it) apart from the attempt itself, with the fixed cost's
  paired ratios against the first side (``--before``'s); and phase by phase at the events
  between (:data:`PHASES`: run.created, attempt.started, agent.launched, agent.exited,
  attempt.completed), each side's medians beside the bare session's.
* ``background`` (per harness): the same one-attempt run as ``one``, started the way users
  start runs, ``pluginbench run --yes`` without ``--foreground``: wall from the command's
  start to the end of the background worker it leaves (the bench adopts and reaps it as
  a subreaper), and separately until ``run`` returned; split at its attempt and phase by
  phase as ``one`` is (the fixed cost ends at the worker's exit). Anchor: one bare CLI
  session.
* ``docker``: a whole 6-attempt ``oracle`` run on the docker backend with warm images and
  readiness. Anchor: six bare ``docker run --rm <base image> true``, one after another.
* ``cold``: the preparation of a cold docker run (two tasks, each with a Dockerfile built
  anew, no cached readiness), jobs 1 and jobs 2. Anchor: ``docker build`` of the same two
  Dockerfiles one after the other. The images built are removed again.
* ``null``: the ``nop`` harness against OpenBench's ``null`` control, only when ``obench``
  is installed (it is not part of PluginBench; the row says so when it is missing).

Each side's unmeasured warm-up run also fills that side's discovery store (Claude Code's
and Codex's, in its own cache root), so a tree with the store measures a repeat run of the
same setup (one CLI start per attempt); ``PLUGINBENCH_DISCOVERY_STORE=off`` in the bench's
environment measures every run as a first one (Claude Code two starts, Codex three).

The vanilla cache is off (``PLUGINBENCH_VANILLA_CACHE=off``): every run codes. The
PluginBench side is only ever driven through its CLI and read back from ``events.jsonl``,
so the same script measures an older checkout beside this one: ``--before <checkout>``
(e.g. ``git archive 72cab6e | tar -x -C /tmp/before`` plus a ``.tools`` link) runs it
first on ``PYTHONPATH`` in the same rounds, against the same anchor: the before/after
columns of issue 27's table, each with its own paired ratios.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_realcli import MODELS, bare  # noqa: E402  (the same bare CLI launch as the attempt bench)

from pluginbench.probe import SCENARIOS_DIR, ProbeServer, find_cli, load_scenario  # noqa: E402

REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
           "OPENAI_API_KEY")
SCENARIO = SCENARIOS_DIR / "edit-file.yaml"


def _load() -> float:
    return os.getloadavg()[0]


def _subreaper() -> bool:
    """Adopt orphaned descendants: bubblewrap's sandbox init outlives ``bwrap`` and is
    reparented, so without this the CLI it runs (the bulk of an attempt's CPU) never
    reaches RUSAGE_CHILDREN; adopted, it does once :func:`_reap` has waited for it."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap(limit: float = 5.0) -> None:
    """Wait for every child left, adopted orphans included (only between measured calls,
    when nothing of the bench itself is running); at most ``limit`` seconds."""
    end = time.monotonic() + limit
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:  # no child left, running or not
            return
        if time.monotonic() >= end:
            return
        time.sleep(0.005)


def _children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far: a run's whole
    process tree (the CLI it launched inside bubblewrap included, see :func:`_subreaper`),
    or the bare CLI's."""
    _reap()
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _probe_tasks(root: Path, n: int) -> Path:
    """Tasks the edit-file scenario solves: the verifier wants probe_output.txt."""
    source = root / "tasks"
    for i in range(n):
        t = source / f"p{i}"
        for sub in ("workspace", "tests", "solution"):
            (t / sub).mkdir(parents=True)
        (t / "workspace" / "README.md").write_text("# bench\n")
        (t / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n')
        (t / "instruction.md").write_text("Please do the task.\n")
        test = t / "tests" / "test.sh"
        test.write_text('#!/bin/sh\nmkdir -p "$LOGS_DIR/verifier"\n'
                        'if [ -f "$APP_DIR/probe_output.txt" ]; then echo 1; else echo 0; fi > "$LOGS_DIR/verifier/reward.txt"\n')
        test.chmod(0o755)
        solve = t / "solution" / "solve.sh"
        solve.write_text('#!/bin/sh\necho "written by the pluginbench probe" > "$APP_DIR/probe_output.txt"\n')
        solve.chmod(0o755)
    return source


def _env(cache: Path, checkout: str | None = None) -> dict[str, str]:
    """The environment of a PluginBench run: no credentials, its own cache, the vanilla
    cache off, and ``checkout`` (an older tree) first on the import path when given."""
    # PYTHONDONTWRITEBYTECODE off: an installed package has its bytecode cached; a checkout
    # without a cache would compile every module in every run (~1.1 s of CPU more).
    env = {k: v for k, v in os.environ.items() if k not in (*REFUSED, "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env.update(XDG_CACHE_HOME=str(cache), PLUGINBENCH_VANILLA_CACHE="off")
    if checkout:
        env["PYTHONPATH"] = checkout
    return env


def _run(root: Path, name: str, cfg: dict[str, object], env: dict[str, str],
         split: list[tuple[float, float, float]] | None = None,
         phases: list[dict[str, float]] | None = None) -> tuple[float, list[dict[str, object]]]:
    """A whole run through the CLI: (process wall seconds, its events). ``split`` and
    ``phases``, when given, get the run's :func:`_split` and :func:`_phases` appended."""
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = root / name
    started = time.time()
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(out),
                           "--foreground", "--yes"], capture_output=True, text=True, env=env, timeout=1800,
                          cwd=root)  # not the checkout: ``-m`` puts the working folder first on sys.path
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"run {name} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    if split is not None:
        split.append(_split(started, wall, events))
    if phases is not None:
        phases.append(_phases(started, wall, events))
    return wall, events


def _run_background(root: Path, name: str, cfg: dict[str, object], env: dict[str, str],
                    returned: list[float], phases: list[dict[str, float]] | None = None,
                    splits: list[tuple[float, float, float]] | None = None) -> float:
    """A whole run started in the background (``run`` without ``--foreground``): wall
    seconds until its worker ended; the seconds until ``run`` returned go to ``returned``,
    its :func:`_phases` (to the worker's end) to ``phases`` and its :func:`_split` to
    ``splits`` when given."""
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = root / name
    started = time.time()
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(out), "--yes"],
                          capture_output=True, text=True, env=env, timeout=1800, cwd=root)
    returned.append(time.perf_counter() - t)
    if done.returncode != 0:
        raise SystemExit(f"run {name} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    pid = int(done.stdout.split("(pid ")[1].split(")")[0])
    try:
        os.waitpid(pid, 0)  # adopted: the bench is a subreaper and the worker's parent has exited
    except ChildProcessError:  # not adopted (no subreaper): wait for it to go
        while os.path.exists(f"/proc/{pid}"):
            time.sleep(0.002)
    wall = time.perf_counter() - t
    text = (out / "events.jsonl").read_text()
    if '"attempt.completed"' not in text:
        raise SystemExit(f"run {name} completed no attempt")
    events = [json.loads(line) for line in text.splitlines()]
    if phases is not None:
        phases.append(_phases(started, wall, events))
    if splits is not None:
        splits.append(_split(started, wall, events))
    return wall


def _ts(e: dict[str, object]) -> float:
    return dt.datetime.fromisoformat(str(e["at"]).replace("Z", "+00:00")).timestamp()


def _split(started: float, wall: float, events: list[dict[str, object]]) -> tuple[float, float, float]:
    """A one-attempt run's wall split at its attempt: (process start to attempt.started, the
    attempt itself: attempt.started to attempt.completed, attempt.completed to the process's
    exit). The first and last are the run's fixed cost (interpreter, imports, run creation,
    preparation, report, exit), the middle one what every further attempt costs again."""
    first = next(_ts(e) for e in events if e["type"] == "attempt.started")
    last = max(_ts(e) for e in events if e["type"] == "attempt.completed")
    return first - started, last - first, started + wall - last


#: A one-attempt run's phases, each from the event (or the process's start) to the next.
PHASES = (
    ("process start", "run.created", "interpreter, imports, config checks, run folder"),
    ("run.created", "attempt.started", "worker and Supervisor start, preparation"),
    ("attempt.started", "agent.launched", "delivery, sandbox, the CLI's start-up and control phase"),
    ("agent.launched", "agent.exited", "the session: task to result, the CLI's exit"),
    ("agent.exited", "attempt.completed", "transcripts, export, patch, grading"),
    ("attempt.completed", "process exit", "report, verdicts, interpreter exit (background: the worker's)"),
)


def _phases(started: float, wall: float, events: list[dict[str, object]]) -> dict[str, float]:
    """A one-attempt run's wall cut at the events of :data:`PHASES` (seconds per phase,
    keyed ``"<from> -> <to>"``); a phase whose event is missing is left out."""
    at = {"process start": started, "process exit": started + wall}
    for e in events:
        at.setdefault(str(e["type"]), _ts(e))
    return {f"{a} -> {b}": at[b] - at[a] for a, b, _ in PHASES if a in at and b in at}


def _print_phases(harness: str, phases: dict[str, list[dict[str, float]]], anchor: float) -> dict[str, object]:
    """Print each side's median seconds per phase (and the whole run's overhead over the
    bare session's median ``anchor``); return them for the JSON row."""
    out: dict[str, object] = {}
    print(f"[{harness} one-attempt run, phase by phase (median seconds)]", flush=True)
    for (a, b, what) in PHASES:
        key = f"{a} -> {b}"
        cells = {side: statistics.median(r[key] for r in rows) for side, rows in phases.items()
                 if rows and all(key in r for r in rows)}
        for side, v in cells.items():
            out.setdefault(side, {})[key] = round(v, 3)  # type: ignore[index]
        print(f"  {key:40} " + "  ".join(f"{side} {v:6.3f}" for side, v in cells.items()) + f"   ({what})",
              flush=True)
    print(f"  {'the bare session (anchor)':40} {anchor:6.3f}", flush=True)
    return out


def _coding_seconds(events: list[dict[str, object]]) -> tuple[float, int]:
    """coding.started to the last attempt.completed, and how many attempts completed."""
    start = next(_ts(e) for e in events if e["type"] == "coding.started")
    done = [_ts(e) for e in events if e["type"] == "attempt.completed"]
    return max(done) - start, len(done)


def _row(label: str, rounds: int, sides: dict[str, Callable[[], float]], anchor: Callable[[], float],
         anchor_name: str) -> dict[str, object]:
    """Interleave every side and the anchor for ``rounds`` rounds (the order rotates each
    round, so a trend in the load hits all alike); print and return the paired ratios."""
    load_before = _load()
    calls: list[tuple[str, Callable[[], float]]] = [("anchor", anchor), *sides.items()]
    times: dict[str, list[float]] = {name: [] for name, _ in calls}
    cpu: dict[str, list[float]] = {name: [] for name, _ in calls}
    for i in range(rounds):
        for name, fn in calls[i % len(calls):] + calls[:i % len(calls)]:
            before = _children_cpu()
            times[name].append(fn())
            cpu[name].append(_children_cpu() - before)
    load_after = _load()
    a = statistics.median(times["anchor"])
    a_cpu = statistics.median(cpu["anchor"])
    row: dict[str, object] = {"row": label, "anchor": anchor_name, "anchor_s": round(a, 3),
                              "anchor_cpu_s": round(a_cpu, 3),
                              "load_1min": [round(load_before, 1), round(load_after, 1)]}
    text = [f"{anchor_name} {a:.3f} s (CPU {a_cpu:.2f} s)"]
    for name in sides:
        o = statistics.median(times[name])
        o_cpu = statistics.median(cpu[name])
        paired = [x / y for x, y in zip(times[name], times["anchor"], strict=True)]
        paired_cpu = [x / y for x, y in zip(cpu[name], cpu["anchor"], strict=True) if y > 0]
        row[name] = {"seconds": round(o, 3), "ratio": round(o / a, 2), "paired_ratios": [round(r, 2) for r in paired],
                     "median_paired_ratio": round(statistics.median(paired), 2),
                     "cpu_s": round(o_cpu, 3), "cpu_paired_ratios": [round(r, 2) for r in paired_cpu]}
        text.append(f"{name} {o:.3f} s, ratio {o / a:.2f} (paired {', '.join(f'{r:.2f}' for r in paired)}; "
                    f"median {statistics.median(paired):.2f}); CPU {o_cpu:.2f} s (paired "
                    f"{', '.join(f'{r:.2f}' for r in paired_cpu)})")
    print(f"[{label}] " + " | ".join(text) + f" | load {load_before:.1f} -> {load_after:.1f}", flush=True)
    print("  " + json.dumps(row), flush=True)
    return row


def _bare_batch(harness: str, cli: Path, base_url: str, n: int, jobs: int) -> float:
    """Wall seconds of ``n`` bare CLI sessions, ``jobs`` at a time."""
    with tempfile.TemporaryDirectory(prefix="pb-bench-bare-") as tmp:
        def one(i: int) -> float:
            return bare(harness, cli, base_url, Path(tmp) / str(i))

        t = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, range(n)))
        return time.perf_counter() - t


Sides = dict[str, "str | None"]  # side name -> checkout first on PYTHONPATH (None: this tree)


def harness_rows(harness: str, rounds: int, parts: set[str], isolation: str, sides: Sides) -> list[dict[str, object]]:
    cli = find_cli(harness)
    if cli is None:
        print(f"[{harness}] CLI not installed: run tools/install-clis.sh")
        return []
    rows = []
    with tempfile.TemporaryDirectory(prefix="pb-bench-overhead-") as tmp, \
            ProbeServer(load_scenario(SCENARIO)) as probe:
        root = Path(tmp)
        envs = {side: _env(root / f"cache-{side}", checkout) for side, checkout in sides.items()}
        source = _probe_tasks(root, 2)
        runner = {"harness": harness, "model": MODELS[harness], "reasoning": "low", "probe": str(SCENARIO)}
        base = {"treatments": {}, "runner": runner, "seed": 1, "timeout_seconds": 120,
                "environment": {"isolation": isolation}}
        counter = iter(range(10_000))
        for side, env in envs.items():  # warm each side's readiness cache for both tasks, unmeasured
            _run(root, f"warm-{side}", {**base, "tasks": {"source": str(source), "ids": ["p0", "p1"]},
                                         "repeats": 1, "jobs": 2}, env)
        if "attempts" in parts:
            for jobs in (1, 2):
                cfg = {**base, "tasks": {"source": str(source), "ids": ["p0", "p1"]}, "repeats": 6, "jobs": jobs}

                def per_attempt(env: dict[str, str], cfg: dict[str, object] = cfg) -> float:
                    _, events = _run(root, f"r{next(counter)}", cfg, env)
                    seconds, n = _coding_seconds(events)
                    assert n == 12, n
                    return seconds / n

                rows.append(_row(
                    f"{harness} per attempt, 12 attempts, jobs {jobs}", rounds,
                    {side: (lambda env=env: per_attempt(env)) for side, env in envs.items()},  # type: ignore[misc]
                    lambda jobs=jobs: _bare_batch(harness, cli, probe.base_url, 12, jobs) / 12,  # type: ignore[misc]
                    f"bare {harness} x12, {jobs} at a time"))
        if "one" in parts:
            cfg1 = {**base, "tasks": {"source": str(source), "ids": ["p0"]}, "repeats": 1, "jobs": 1}
            splits: dict[str, list[tuple[float, float, float]]] = {side: [] for side in envs}
            phases: dict[str, list[dict[str, float]]] = {side: [] for side in envs}
            row = _row(
                f"{harness} whole one-attempt run", rounds,
                {side: (lambda env=env, side=side: _run(root, f"r{next(counter)}", cfg1, env,  # type: ignore[misc]
                                                        splits[side], phases[side])[0])
                 for side, env in envs.items()},
                lambda: _bare_batch(harness, cli, probe.base_url, 1, 1), f"one bare {harness} session")
            row["fixed"] = _print_split(harness, splits)
            row["phases"] = _print_phases(harness, phases, float(row["anchor_s"]))  # type: ignore[arg-type]
            rows.append(row)
        if "background" in parts:
            cfg1 = {**base, "tasks": {"source": str(source), "ids": ["p0"]}, "repeats": 1, "jobs": 1}
            returned: dict[str, list[float]] = {side: [] for side in envs}
            bg_phases: dict[str, list[dict[str, float]]] = {side: [] for side in envs}
            bg_splits: dict[str, list[tuple[float, float, float]]] = {side: [] for side in envs}
            row = _row(
                f"{harness} whole one-attempt run in the background", rounds,
                {side: (lambda env=env, side=side: _run_background(  # type: ignore[misc]
                    root, f"r{next(counter)}", cfg1, env, returned[side], bg_phases[side], bg_splits[side]))
                 for side, env in envs.items()},
                lambda: _bare_batch(harness, cli, probe.base_url, 1, 1), f"one bare {harness} session")
            row["fixed"] = _print_split(f"{harness} background", bg_splits)
            row["phases"] = _print_phases(f"{harness} background", bg_phases, float(row["anchor_s"]))  # type: ignore[arg-type]
            row["run_returned_s"] = {side: round(statistics.median(r), 3) for side, r in returned.items()}
            print(f"  [{harness}] `run` returned after (median): "
                  + ", ".join(f"{side} {statistics.median(r):.3f} s" for side, r in returned.items()), flush=True)
            rows.append(row)
    return rows


def _print_split(harness: str, splits: dict[str, list[tuple[float, float, float]]]) -> dict[str, object]:
    """Print and return each side's medians of :func:`_split` (the fixed cost is before +
    after; its paired ratio is against the first side, round by round)."""
    out: dict[str, object] = {}
    first = next(iter(splits))
    text = []
    for side, rows in splits.items():
        fixed = [b + a for b, _, a in rows]
        med = {"before_attempt_s": round(statistics.median(b for b, _, _ in rows), 3),
               "attempt_s": round(statistics.median(m for _, m, _ in rows), 3),
               "after_attempt_s": round(statistics.median(a for _, _, a in rows), 3),
               "fixed_s": round(statistics.median(fixed), 3)}
        if side != first:
            paired = [x / y for x, y in zip(fixed, [b + a for b, _, a in splits[first]], strict=True)]
            med["fixed_paired_vs_" + first] = [round(r, 2) for r in paired]
            med["fixed_median_paired_vs_" + first] = round(statistics.median(paired), 2)
        out[side] = med
        text.append(f"{side}: fixed {med['fixed_s']:.3f} s (before the attempt {med['before_attempt_s']:.3f} + "
                    f"after it {med['after_attempt_s']:.3f}), the attempt {med['attempt_s']:.3f} s"
                    + (f", fixed/{first} paired median {med['fixed_median_paired_vs_' + first]:.2f}"
                       if side != first else ""))
    print(f"[{harness} one-attempt run, split at its attempt] " + " | ".join(text), flush=True)
    return out


def docker_row(rounds: int, sides: Sides) -> list[dict[str, object]]:
    if shutil.which("docker") is None:
        print("[docker] no docker CLI: skipped")
        return []
    image = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", "pluginbench/base:bookworm"],
                           capture_output=True, text=True)
    if image.returncode != 0:
        print("[docker] no pluginbench/base:bookworm image (tools/build-base-image.sh): skipped")
        return []
    image_id = image.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="pb-bench-docker-") as tmp:
        root = Path(tmp)
        envs = {side: _env(root / f"cache-{side}", checkout) for side, checkout in sides.items()}
        source = _probe_tasks(root, 1)
        cfg = {"tasks": {"source": str(source), "ids": ["p0"]}, "treatments": {}, "runner": {"harness": "oracle"},
               "repeats": 6, "jobs": 1, "environment": {"backend": "docker"}}
        counter = iter(range(10_000))
        for side, env in envs.items():
            _run(root, f"warm-{side}", cfg, env)  # images and readiness warm, unmeasured

        def six_bare() -> float:
            t = time.perf_counter()
            for _ in range(6):
                subprocess.run(["docker", "run", "--rm", image_id, "true"], check=True, capture_output=True)
            return time.perf_counter() - t

        return [_row("docker, 6 oracle attempts warm (whole run)", rounds,
                     {side: (lambda env=env: _run(root, f"r{next(counter)}", cfg, env)[0])  # type: ignore[misc]
                      for side, env in envs.items()},
                     six_bare, "six bare docker run --rm")]


def _docker_tasks(root: Path, nonce: str, n: int) -> Path:
    """``n`` probe tasks whose environment/Dockerfile takes a few seconds to build and is
    new for every ``nonce`` (a cold build every time)."""
    source = _probe_tasks(root / nonce, n)
    for i in range(n):
        env_dir = source / f"p{i}" / "environment"
        env_dir.mkdir()
        (env_dir / "Dockerfile").write_text(
            f"FROM pluginbench/base:bookworm\nRUN sleep 3 && echo {nonce}-{i} > /pb-bench-nonce\n")
    return source


def _remove_images(ids: set[str]) -> None:
    for image in sorted(i for i in ids if i):
        subprocess.run(["docker", "image", "rm", "-f", image], capture_output=True)


def cold_docker_row(rounds: int, sides: Sides) -> list[dict[str, object]]:
    """Preparation of a cold docker run: two tasks, each with its own Dockerfile to build
    and no cached readiness, jobs 1 and jobs 2. PluginBench's preparation time is
    preparation.started to coding.started; the anchor is ``docker build`` of the same two
    Dockerfiles, one after the other. Every image built here is removed again."""
    if shutil.which("docker") is None:
        print("[cold] no docker CLI: skipped")
        return []
    rows = []
    with tempfile.TemporaryDirectory(prefix="pb-bench-cold-") as tmp:
        root = Path(tmp)
        counter = iter(range(10_000))

        def prep(env_side: str, jobs: int) -> float:
            nonce = f"n{next(counter)}-{os.getpid()}"
            source = _docker_tasks(root, nonce, 2)
            cfg = {"tasks": {"source": str(source), "ids": ["p0", "p1"]}, "treatments": {},
                   "runner": {"harness": "oracle"}, "repeats": 1, "jobs": jobs, "environment": {"backend": "docker"}}
            _, events = _run(root, f"cold-{nonce}", cfg, _env(root / f"cache-{nonce}", sides[env_side]))
            _remove_images({str(e.get(k) or "") for e in events if e["type"] == "task.prepared"
                            for k in ("image", "verifier_image")})

            return (_ts(next(e for e in events if e["type"] == "coding.started"))
                    - _ts(next(e for e in events if e["type"] == "preparation.started")))

        def bare_builds() -> float:
            nonce = f"n{next(counter)}-{os.getpid()}"
            source = _docker_tasks(root, nonce, 2)
            tags = [f"pb-bench-anchor-{nonce}-{i}:latest" for i in range(2)]
            t = time.perf_counter()
            for i, tag in enumerate(tags):
                subprocess.run(["docker", "build", "-q", "-t", tag, str(source / f"p{i}" / "environment")],
                               check=True, capture_output=True)
            elapsed = time.perf_counter() - t
            _remove_images(set(tags))
            return elapsed

        for jobs in (1, 2):
            rows.append(_row(f"docker cold preparation, 2 tasks with a Dockerfile, jobs {jobs}", rounds,
                             {side: (lambda side=side, jobs=jobs: prep(side, jobs)) for side in sides},  # type: ignore[misc]
                             bare_builds, "two bare docker build, one after the other"))
    return rows


def null_row() -> list[dict[str, object]]:
    if shutil.which("obench") is None:
        print("[null] OpenBench (obench) is not installed: the nop-vs-null row has no anchor here; skipped")
    else:
        print("[null] obench is installed but its null control is not driven by this script yet; skipped")
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--harness", nargs="*", default=["claude", "codex"])
    parser.add_argument("--parts", nargs="+", default=["attempts", "one", "background", "docker", "cold", "null"],
                        choices=["attempts", "one", "background", "docker", "cold", "null"])
    parser.add_argument("--isolation", default="auto", choices=["auto", "none", "bubblewrap"])
    parser.add_argument("--json", type=Path, help="also write every row to this file")
    parser.add_argument("--before", type=Path, help="an older checkout (with its .tools link) measured in the "
                        "same rounds as this tree: the before/after columns")
    parser.add_argument("--after", type=Path, help="measure this checkout as the after side instead of this tree "
                        "(a snapshot, so edits made while the bench runs do not leak in)")
    args = parser.parse_args()
    sides: Sides = {"after": str(args.after.resolve()) if args.after else None}
    if args.before:
        sides = {"before": str(args.before.resolve()), **sides}
    for side, checkout in sides.items():
        used = subprocess.run([sys.executable, "-c", "import pluginbench; print(pluginbench.__file__)"],
                              capture_output=True, text=True, env=_env(Path(tempfile.gettempdir()), checkout),
                              cwd=tempfile.gettempdir())
        print(f"{side}: runs use pluginbench from {Path(used.stdout.strip()).parent}", flush=True)
    adopted = _subreaper()
    print(f"cores {os.cpu_count()}; load {_load():.1f}; CPU includes orphaned sandbox processes: "
          f"{'yes' if adopted else 'no (prctl PR_SET_CHILD_SUBREAPER failed): the CLI inside bubblewrap is missed'}",
          flush=True)
    parts = set(args.parts)
    rows: list[dict[str, object]] = []
    for harness in args.harness:
        if parts & {"attempts", "one", "background"}:
            rows += harness_rows(harness, args.rounds, parts, args.isolation, sides)
    if "docker" in parts:
        rows += docker_row(args.rounds, sides)
    if "cold" in parts:
        rows += cold_docker_row(args.rounds, sides)
    if "null" in parts:
        rows += null_row()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
