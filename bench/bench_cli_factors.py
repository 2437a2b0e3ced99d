"""Where the Claude Code CLI of an attempt spends CPU beyond the bare CLI (issue 27). Prints numbers.

    .venv/bin/python bench/bench_cli_factors.py [--rounds 12]

One probe session (edit-file scenario) of the pinned CLI, launched five ways that add
PluginBench's differences one at a time; each step's CPU seconds (user + system of the
whole process tree, RUSAGE_CHILDREN with the bench as child subreaper, as bench_overhead
counts them) minus the previous step's, paired per round:

1. ``bare``: bench_realcli's bare launch (prompt argument, ``--setting-sources user``, an
   API key, a plain folder holding the task's README.md).
2. ``+git``: the same folder as the single commit of a fresh repo, made as the local
   sandbox makes it (the CLI then runs its git status commands at start).
3. ``+control``: ``--input-format stream-json``; the coding process's control requests
   (:data:`~pluginbench.harnesses._claude_discovery.REQUESTS`, no model call) answered
   before the task goes in as the first user message; ``end_session`` after the result.
4. ``+launch``: the pinned session argv (:func:`~pluginbench.harnesses._claude_launch.session_argv`)
   and environment (:func:`~pluginbench.harnesses._claude_launch.pinned_env`), the
   credentials file and the pinned settings.json instead of the key.
5. ``+sandbox``: step 4 inside a local sandbox as a coding attempt gets one (bubblewrap,
   seccomp, the cgroup, the egress forwarder to the probe).

Rounds rotate the order, so a trend in the load hits every step alike; round 0 warms up
and is not counted. Prints the one-minute load before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_overhead import SCENARIO, _subreaper  # noqa: E402
from bench_realcli import MODELS  # noqa: E402

from pluginbench.environments import LineChannel, LocalEnvironment  # noqa: E402
from pluginbench.environments._egress import Egress  # noqa: E402
from pluginbench.environments._gitbase import init_base_repo  # noqa: E402
from pluginbench.environments._port import SandboxSpec  # noqa: E402
from pluginbench.harnesses._claude_discovery import (  # noqa: E402
    REQUESTS,
    control_request,
    end_session,
    user_message,
)
from pluginbench.harnesses._claude_launch import (  # noqa: E402
    CONFIG_DIR_NAME,
    PINNED_SETTINGS,
    TMP_DIR_NAME,
    credentials_json,
    pinned_env,
    session_argv,
)
from pluginbench.harnesses._port import tool_roots  # noqa: E402
from pluginbench.probe import PROBE_ANTHROPIC_KEY, ProbeServer, find_cli, launch_env, load_scenario  # noqa: E402

STEPS = ("bare", "+git", "+control", "+launch", "+sandbox")
TASK = "Please do the task."
PATH = "/usr/local/bin:/usr/bin:/bin"


def _children_cpu() -> float:
    """CPU seconds of every finished child so far, adopted orphans (bubblewrap's sandbox
    init) reaped first; unlike bench_overhead's it never waits for a child still running
    (a sandbox keeps its mount-namespace holder alive)."""
    for _ in range(3):
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            break
        time.sleep(0.05)
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _is_result(line: bytes) -> bool:
    if b'"result"' not in line:
        return False
    try:
        return bool(json.loads(line).get("type") == "result")
    except (ValueError, AttributeError):
        return False


def _controls() -> bytes:
    return b"".join(control_request(i, sub, params) for i, (sub, params) in enumerate(REQUESTS, 1))


def _argv(step: int, cli: str) -> list[str]:
    if step >= 3:
        return session_argv(cli, MODELS["claude"], "low", str(uuid.uuid4()))
    head = [cli, "-p", "--input-format", "stream-json"] if step == 2 else [cli, "-p", TASK]
    return [*head, "--output-format", "stream-json", "--verbose", "--model", MODELS["claude"],
            "--permission-mode", "bypassPermissions", "--strict-mcp-config", "--setting-sources", "user"]


def _env(step: int, home: str, base_url: str) -> dict[str, str]:
    if step >= 3:
        probe = {k: v for k, v in launch_env("anthropic", base_url).env.items() if k != "ANTHROPIC_API_KEY"}
        return pinned_env(home, path=PATH, model=MODELS["claude"], probe_env=probe)
    return {"PATH": PATH, "HOME": home, **launch_env("anthropic", base_url).env,
            "CLAUDE_CONFIG_DIR": f"{home}/{CONFIG_DIR_NAME}", "CLAUDE_CODE_TMPDIR": f"{home}/{TMP_DIR_NAME}",
            "IS_SANDBOX": "1"}


def _config(home: Path, step: int) -> None:
    cfg = home / CONFIG_DIR_NAME
    cfg.mkdir(parents=True)
    (home / TMP_DIR_NAME).mkdir()
    if step >= 3:
        (cfg / "settings.json").write_text(json.dumps(PINNED_SETTINGS, indent=1) + "\n")
        (cfg / ".credentials.json").write_bytes(credentials_json(PROBE_ANTHROPIC_KEY))


async def _host(step: int, cli: str, base_url: str) -> tuple[float, bool]:
    """One host session of steps 1-4: (CPU seconds of its process tree, a result came)."""
    with tempfile.TemporaryDirectory(prefix="pb-bench-factors-") as tmp:
        work, home = Path(tmp) / "work", Path(tmp) / "home"
        work.mkdir()
        (work / "README.md").write_text("# bench\n")
        _config(home, step)
        if step >= 1:
            await init_base_repo(work, home, ("PluginBench Agent", "agent@pluginbench.invalid"))
        env, argv = _env(step, str(home), base_url), _argv(step, cli)
        before = _children_cpu()
        if step == 0 or step == 1:
            done = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
            ok = any(_is_result(line) for line in done.stdout.splitlines())
        else:
            proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(_controls())
            proc.stdin.flush()
            waiting = len(REQUESTS)
            while waiting and (line := proc.stdout.readline()):
                waiting -= b'"control_response"' in line
            proc.stdin.write(user_message(TASK))
            proc.stdin.flush()
            ok = False
            for line in proc.stdout:
                if _is_result(line) and not ok:
                    ok = True
                    proc.stdin.write(end_session(len(REQUESTS) + 1))
                    proc.stdin.flush()
            proc.wait(timeout=300)
        return _children_cpu() - before, ok


async def _sandboxed(cli: str, base_url: str, port: int) -> tuple[float, bool]:
    """Step 5: the step-4 session as a coding attempt's sandbox runs it."""
    with tempfile.TemporaryDirectory(prefix="pb-bench-factors-") as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        ws.mkdir()
        (ws / "README.md").write_text("# bench\n")
        _config(home, 3)
        spec = SandboxSpec(run_id="bench", attempt_id="factors", role="coding", task="p0", workspace=ws, home=home,
                           readonly=tuple(tool_roots(cli)), egress=Egress("probe", port=port))
        async with LocalEnvironment(isolation="auto").sandbox(spec) as box:
            seen: list[bool] = []

            async def dialogue(channel: LineChannel) -> None:
                await channel.send(_controls())
                waiting = len(REQUESTS)
                while waiting and (line := await channel.receive_line()) is not None:
                    waiting -= b'"control_response"' in line
                await channel.send(user_message(TASK))
                while (line := await channel.receive_line()) is not None:
                    if _is_result(line) and not seen:
                        seen.append(True)
                        await channel.send(end_session(len(REQUESTS) + 1))

            env = _env(3, box.paths.home, base_url)
            before = _children_cpu()
            await box.exec(_argv(3, cli), cwd=box.paths.app, env=env, timeout=300, dialogue=dialogue)
            return _children_cpu() - before, bool(seen)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    cli = find_cli("claude")
    if cli is None:
        print("[claude] CLI not installed: run tools/install-clis.sh")
        return
    if not _subreaper():
        print("warning: not a child subreaper: the sandboxed step's CPU is undercounted")
    cpu: dict[int, list[float]] = {i: [] for i in range(len(STEPS))}
    failed = 0
    load = os.getloadavg()[0]
    with ProbeServer(load_scenario(SCENARIO)) as probe:
        port = int(probe.base_url.rstrip("/").rsplit(":", 1)[1])
        for r in range(args.rounds + 1):
            order = list(range(len(STEPS)))
            for step in order[r % len(order):] + order[:r % len(order)]:
                if step == 4:
                    seconds, ok = await _sandboxed(str(cli), probe.base_url, port)
                else:
                    seconds, ok = await _host(step, str(cli), probe.base_url)
                failed += not ok
                if r:
                    cpu[step].append(seconds)
            time.sleep(0.2)
    print(f"Claude Code CPU per session (whole process tree), {args.rounds} rounds; load "
          f"{load:.1f} -> {os.getloadavg()[0]:.1f}; sessions without a result: {failed}")
    for step, name in enumerate(STEPS):
        med = statistics.median(cpu[step])
        line = f"  {name:9s} CPU {med:.3f} s (median), ratio to bare {med / statistics.median(cpu[0]):.2f}"
        if step:
            d = [a - b for a, b in zip(cpu[step], cpu[step - 1], strict=True)]
            se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
            line += f"; vs {STEPS[step - 1]}: {statistics.mean(d):+.3f} s ± {se:.3f} (paired mean ± SE)"
        print(line, flush=True)


if __name__ == "__main__":
    anyio.run(main)
