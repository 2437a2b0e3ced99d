"""Attempt wall time through PluginBench against the bare CLI (issues 3, 13). Prints numbers.

    .venv/bin/python bench/bench_realcli.py [--rounds 5] [--harness claude codex qwen opencode gemini] [--fresh-harness]

Both sides run the same loopback probe scenario (edit-file) with the same model flags:
the bare side is the CLI alone in a temp folder (Qwen Code: its headless stream-json launch
with a fresh HOME; opencode: ``opencode run --format json`` with a fresh HOME and XDG
folders holding the same provider config; Gemini CLI: its stream-json launch with API-key
auth selected and no relaunch); the PluginBench side is one coding
attempt through the attempt pipeline on the local backend (bubblewrap when available):
fresh sandbox with a base commit, private delivery, no-model discovery, the pinned
launch, trace parsing and usage validation, stop, export and the canonical patch. It
prints how many PluginBench attempts ended with exact usage equal to what the probe served
and with a passing discovery receipt.
Rounds alternate between the two sides so machine noise hits both alike.

One harness serves every round of a harness, as one run's harness serves all its
attempts (Codex reuses a passing discovery receipt for an identical setup digest, so
rounds after the first are what repeats and other tasks of a run pay); round 1 is also
printed on its own. ``--fresh-harness`` builds a new harness every round instead, so
every Codex attempt pays the full discovery (the cold cost).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pluginbench.actors._pipeline import code_attempt  # noqa: E402
from pluginbench.environments import LocalEnvironment  # noqa: E402
from pluginbench.harnesses import FrozenTreatment, make_harness  # noqa: E402
from pluginbench.probe import (  # noqa: E402
    SCENARIOS_DIR,
    ProbeServer,
    cli_version,
    find_cli,
    launch_env,
    load_scenario,
)
from pluginbench.tasks import load_task  # noqa: E402

MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5", "qwen": "qwen3-coder-plus", "opencode": "gpt-4.1",
          "gemini": "gemini-2.5-pro"}


def _task(root: Path) -> Path:
    task = root / "task"
    (task / "workspace").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "workspace" / "README.md").write_text("# bench\n")
    (task / "task.toml").write_text('schema_version = "1.4"\n')
    (task / "instruction.md").write_text("Please do the task.\n")
    (task / "tests" / "test.sh").write_text("#!/bin/sh\necho 0 > \"$LOGS_DIR/verifier/reward.txt\"\n")
    return task


def bare(harness: str, cli: Path, base_url: str, root: Path) -> float:
    work, home, tmp = root / "work", root / "home", root / "tmp"
    for p in (work, home, tmp):
        p.mkdir(parents=True)
    le = launch_env({"claude": "anthropic", "qwen": "chat", "opencode": "chat", "gemini": "gemini"}.get(harness, "responses"),
                    base_url)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), **le.env}
    if harness == "claude":
        env.update(CLAUDE_CONFIG_DIR=str(home / ".claude"), CLAUDE_CODE_TMPDIR=str(tmp),
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", IS_SANDBOX="1")
        argv = [str(cli), "-p", "Please do the task.", "--output-format", "stream-json", "--verbose",
                "--model", MODELS[harness], "--permission-mode", "bypassPermissions", "--strict-mcp-config",
                "--setting-sources", "user"]
    elif harness == "qwen":
        env.update(TMPDIR=str(tmp), QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
        argv = [str(cli), "--auth-type", "openai", "--model", MODELS[harness], "--output-format", "stream-json",
                "--approval-mode", "yolo", "Please do the task."]
    elif harness == "gemini":
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        env.update(TMPDIR=str(tmp), GEMINI_CLI_NO_RELAUNCH="true")
        argv = [str(cli), "--model", MODELS[harness], "--output-format", "stream-json", "--approval-mode", "yolo",
                "--skip-trust", "-p", "Please do the task."]
    else:
        codex_home = home / ".codex"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(le.config_toml or "")
        env.update(CODEX_HOME=str(codex_home), TMPDIR=str(tmp))
        argv = [str(cli), "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access",
                "-m", MODELS[harness], "-C", str(work), "Please do the task."]
    stdin: bytes | None = None
    if harness == "opencode":
        from pluginbench.config import Capabilities
        from pluginbench.harnesses._opencode import seed_plugin_manifest
        from pluginbench.harnesses._opencode_config import config_json, exec_argv
        from pluginbench.harnesses._opencode_config import launch_env as opencode_env

        folder = home / ".config" / "opencode"
        folder.mkdir(parents=True)
        (folder / "opencode.json").write_text(config_json(base_url=le.env["OPENAI_BASE_URL"], model=MODELS[harness],
                                                          capabilities=Capabilities()))
        seed_plugin_manifest(folder)
        env = opencode_env(home=str(home), tmp=str(tmp), key=le.env["OPENAI_API_KEY"])
        argv, stdin = exec_argv(str(cli), model=MODELS[harness]), b"Please do the task."
    t = time.perf_counter()
    subprocess.run(argv, cwd=work, env=env, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                   capture_output=True, timeout=300, check=True)
    return time.perf_counter() - t


def _harness(harness_name: str, cli: Path, base_url: str) -> object:
    return make_harness(harness_name, cli_path=cli, cli_version=cli_version(cli), probe_base_url=base_url,
                        **({"environ": {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_OAUTH_TOKEN"}}
                           if harness_name == "claude" else {}))


async def through_pluginbench(harness_name: str, harness: object, root: Path,
                              served: Callable[[], tuple[int, int]]) -> tuple[float, bool, bool]:
    task_dir = _task(root)
    task = load_task(task_dir, "bench")

    async def launched(argv: object) -> None:
        return None

    t = time.perf_counter()
    result = await code_attempt(
        environment=LocalEnvironment(isolation="auto"), harness=harness, run_id="bench", attempt_id="a",
        task=task, starting_source=task.workspace_dir, treatment=FrozenTreatment("vanilla", None, (), (), (), "0"),
        attempt_dir=root / "attempt", model=MODELS[harness_name], reasoning="low", seed=0, timeout=300,
        hidden=(), launched=launched,
    )
    elapsed = time.perf_counter() - t
    assert result.patch is not None, result
    u = result.run.usage
    want = served()
    exact = u.status == "exact" and (u.input_tokens, u.output_tokens) == want
    receipt = json.loads((root / "attempt" / "native-treatment.json").read_text())
    return elapsed, bool(receipt.get("ok", receipt.get("passed"))), exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--harness", nargs="+", default=["claude", "codex"])
    parser.add_argument("--fresh-harness", action="store_true", help="a new harness every round (cold cost)")
    args = parser.parse_args()
    for name in args.harness:
        cli = find_cli(name)  # type: ignore[arg-type]
        if cli is None:
            print(f"[{name}] CLI not installed: run tools/install-clis.sh")
            continue
        bare_t: list[float] = []
        pb_t: list[float] = []
        receipts = exacts = 0
        load = os.getloadavg()[0]
        with ProbeServer(load_scenario(SCENARIOS_DIR / "edit-file.yaml")) as probe:
            harness = _harness(name, cli, probe.base_url)
            for _ in range(args.rounds):
                with tempfile.TemporaryDirectory(prefix="pb-bench-") as tmp:
                    bare_t.append(bare(name, cli, probe.base_url, Path(tmp)))
                if args.fresh_harness:
                    harness = _harness(name, cli, probe.base_url)
                probe.wait_idle(timeout=30)
                before = len(probe.requests)

                def served(before: int = before, name: str = name) -> tuple[int, int]:
                    """(input, output) the probe served, in PluginBench's usage terms (docs/metrics.md):
                    Claude Code's input counts cache reads and writes, Gemini CLI's output its thoughts."""
                    probe.wait_idle(timeout=30)
                    done = [r.usage for r in probe.requests[before:] if r.kind == "coding" and r.status == 200 and r.usage]
                    extra_in = (lambda u: u.cache_read_input_tokens + u.cache_creation_input_tokens) \
                        if name == "claude" else (lambda u: 0)
                    extra_out = (lambda u: u.reasoning_tokens) if name == "gemini" else (lambda u: 0)
                    return (sum(u.input_tokens + extra_in(u) for u in done),
                            sum(u.output_tokens + extra_out(u) for u in done))

                with tempfile.TemporaryDirectory(prefix="pb-bench-") as tmp:
                    took, ok, exact = anyio.run(through_pluginbench, name, harness, Path(tmp), served,
                                                backend="asyncio")
                pb_t.append(took)
                receipts += ok
                exacts += exact
        b, p = statistics.median(bare_t), statistics.median(pb_t)
        paired = [x / y for x, y in zip(pb_t, bare_t, strict=True)]
        mode = "a fresh harness per round" if args.fresh_harness else "one harness for all rounds"
        print(f"[{name}] rounds {args.rounds} ({mode}): bare CLI median {b:.2f} s, through PluginBench median "
              f"{p:.2f} s, ratio {p / b:.2f} (target <= 1.3), added {p - b:.2f} s per attempt; "
              f"round 1 alone: bare {bare_t[0]:.2f} s, PluginBench {pb_t[0]:.2f} s; paired ratios "
              f"{', '.join(f'{r:.2f}' for r in paired)} (median {statistics.median(paired):.2f}); "
              f"load {load:.1f} -> {os.getloadavg()[0]:.1f}; receipts passing "
              f"{receipts}/{args.rounds}, usage exact and equal to what the probe served {exacts}/{args.rounds}")


if __name__ == "__main__":
    main()
