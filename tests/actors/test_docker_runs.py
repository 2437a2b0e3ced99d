"""Whole evaluations on the docker backend: controls, the simulated agent, the real Claude
Code CLI in a derived coding image, kill -9 with left-running containers, and refusals."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pluginbench.harnesses._codex_native import image_native
from pluginbench.probe import SCENARIOS_DIR, find_cli
from pluginbench.rundir import RunDir
from tests._prereq import require
from tests.runs_helpers import QUICKSTART, events_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]
PROBE_TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"


def _engine_up() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0


@pytest.fixture(autouse=True)
def _docker() -> None:
    require(_engine_up(), "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")


def cli(*args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True,
                          timeout=900, env=env)
    if check and done.returncode != 0:
        raise AssertionError(f"pluginbench {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def config(tmp: Path, **fields: Any) -> Path:
    base: dict[str, Any] = {
        "name": "docker",
        "tasks": {"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals", "word-wrap"]},
        "treatments": {"testing-discipline": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1,
        "jobs": 2,
        "seed": 3,
        "timeout_seconds": 120,
        "environment": {"backend": "docker"},
    }
    base.update(fields)
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(base))
    return path


def our_containers(run: Path) -> list[str]:
    """IDs of every container (any state) labelled as the run's (its run id, not its folder name)."""
    out = subprocess.run(["docker", "ps", "-a", "-q", "--filter", f"label=pluginbench.run={RunDir(run).run_id}"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def task(root: Path, name: str, *, solve: str, dockerfile: str | None = None) -> Path:
    t = root / name
    (t / "workspace").mkdir(parents=True)
    (t / "tests").mkdir()
    (t / "solution").mkdir()
    (t / "workspace" / "a.txt").write_text("a\n")
    (t / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n')
    (t / "instruction.md").write_text("Create b.txt.\n")
    test = t / "tests" / "test.sh"
    test.write_text('#!/bin/sh\nmkdir -p "$LOGS_DIR/verifier"\n'
                    'if [ -f "$APP_DIR/b.txt" ]; then echo 1; else echo 0; fi > "$LOGS_DIR/verifier/reward.txt"\n')
    test.chmod(0o755)
    s = t / "solution" / "solve.sh"
    s.write_text("#!/bin/sh\n" + solve)
    s.chmod(0o755)
    if dockerfile is not None:
        (t / "environment").mkdir()
        (t / "environment" / "Dockerfile").write_text(dockerfile)
    return t


@pytest.mark.parametrize("harness, outcomes", [("nop", {"empty"}), ("oracle", {"pass"}), ("simulated", None)])
def test_whole_evaluation_on_docker(tmp_path: Path, harness: str, outcomes: set[str] | None) -> None:
    """Controls and the simulated agent run to a report on docker, with frozen image IDs and no leftover containers."""
    run = tmp_path / "run"
    cli("run", str(config(tmp_path, runner={"harness": harness, "model": "simulated-1" if harness == "simulated" else None})),
        "--output", str(run), "--foreground")
    status = json.loads(cli("status", str(run), "--json").stdout)
    assert status["phase"] == "complete" and status["isolation"] == "docker"
    got = {a["outcome"] for a in status["attempts"]}
    if outcomes is not None:
        assert got == outcomes
    else:
        assert got <= {"pass", "fail", "empty"} and got
    prepared = [e for e in events_of(run) if e["type"] == "task.prepared"]
    assert prepared and all(e["image"].startswith("sha256:") and e["verifier_image"] for e in prepared)
    assert our_containers(run) == []
    assert status["left_running"] == {"checked": True, "error": None, "containers": [], "folders": [], "stop_command": None}


def test_real_claude_code_in_the_coding_image(tmp_path: Path) -> None:
    """The pinned Claude Code CLI runs inside a derived coding image against the probe; the guidance changes the grade."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    guidance = tmp_path / "core.md"
    guidance.write_text("# Guidance\nPLUGINBENCH-GUIDANCE-MARKER: write guided answers.\n")
    path = config(
        tmp_path, tasks={"source": str(PROBE_TASKS), "ids": ["add-numbers"]},
        treatments={"guided": {"guidance": [str(guidance)]}},
        runner={"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low",
                "probe": str(SCENARIOS_DIR / "guided.yaml")},
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_API_KEY")}
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run), "--foreground", env=env)
    results = json.loads((run / "report" / "results.json").read_text())
    per = results["per_task"]["add-numbers"]
    assert (per["vanilla"]["pass_rate"], per["guided"]["pass_rate"]) == (0.0, 1.0)
    assert all(a["tokens"]["status"] == "exact" for a in results["attempts"])
    prepared = next(e for e in events_of(run) if e["type"] == "task.prepared")
    assert prepared["image"] != prepared["verifier_image"]  # the coding image carries the CLI
    invocation = json.loads((run / "evidence" / "attempts" / "add-numbers__vanilla__r1" / "invocation.json").read_text())
    assert invocation["argv"][0] == "/opt/pluginbench/clis/node_modules/.bin/claude"


@pytest.mark.realcli
@pytest.mark.parametrize("harness, model", [("opencode", "gpt-4.1"), ("qwen", "qwen3-coder-plus"),
                                            ("gemini", "gemini-2.5-pro")])
def test_real_openai_compatible_clis_in_the_coding_image(tmp_path: Path, harness: str, model: str) -> None:
    """opencode (a native binary), Qwen Code and Gemini CLI (node 20+, carried privately) run inside a derived
    coding image against the probe; the guidance changes the grade and usage is exact."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    guidance = tmp_path / "core.md"
    guidance.write_text("# Guidance\nPLUGINBENCH-GUIDANCE-MARKER: write guided answers.\n")
    path = config(
        tmp_path, tasks={"source": str(PROBE_TASKS), "ids": ["add-numbers"]},
        treatments={"guided": {"guidance": [str(guidance)]}}, timeout_seconds=600,
        runner={"harness": harness, "model": model, "probe": str(SCENARIOS_DIR / "guided.yaml")},
    )
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run), "--foreground", "--yes")
    results = json.loads((run / "report" / "results.json").read_text())
    per = results["per_task"]["add-numbers"]
    assert (per["vanilla"]["pass_rate"], per["guided"]["pass_rate"]) == (0.0, 1.0)
    assert all(a["tokens"]["status"] == "exact" for a in results["attempts"]), [a["tokens"] for a in results["attempts"]]
    prepared = next(e for e in events_of(run) if e["type"] == "task.prepared")
    assert prepared["image"] != prepared["verifier_image"]  # the coding image carries the CLI
    invocation = json.loads((run / "evidence" / "attempts" / "add-numbers__vanilla__r1" / "invocation.json").read_text())
    assert invocation["argv"][0] == f"/opt/pluginbench/clis/node_modules/.bin/{harness}"
    assert our_containers(run) == []


def test_real_codex_starts_its_native_binary_in_the_coding_image(tmp_path: Path) -> None:
    """Codex runs in a derived coding image against the probe, launched as the native binary the image carries (not
    the npm node wrapper); the guidance changes the grade and usage is exact."""
    require(find_cli("codex") is not None, "codex CLI (tools/install-clis.sh)")
    guidance = tmp_path / "core.md"
    guidance.write_text("# Guidance\nPLUGINBENCH-GUIDANCE-MARKER: write guided answers.\n")
    path = config(
        tmp_path, tasks={"source": str(PROBE_TASKS), "ids": ["add-numbers"]},
        treatments={"guided": {"guidance": [str(guidance)]}}, timeout_seconds=600,
        runner={"harness": "codex", "model": "gpt-5.5", "probe": str(SCENARIOS_DIR / "guided.yaml")},
    )
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run), "--foreground", "--yes")
    results = json.loads((run / "report" / "results.json").read_text())
    per = results["per_task"]["add-numbers"]
    assert (per["vanilla"]["pass_rate"], per["guided"]["pass_rate"]) == (0.0, 1.0)
    assert all(a["tokens"]["status"] == "exact" for a in results["attempts"]), [a["tokens"] for a in results["attempts"]]
    invocation = json.loads((run / "evidence" / "attempts" / "add-numbers__vanilla__r1" / "invocation.json").read_text())
    native = image_native("/opt/pluginbench/clis/node_modules/.bin/codex").exe
    assert invocation["argv"][0] == native and "/vendor/" in native
    assert our_containers(run) == []


def test_kill_9_mid_attempt_then_resume_stops_the_left_container(tmp_path: Path) -> None:
    """After kill -9 mid-attempt, status lists the running coding container and the grading container made beside
    it; resume stops (never removes) and names both, and codes the slot again."""
    source = tmp_path / "tasks"
    task(source, "slow", solve='sleep 8; echo b > "$APP_DIR/b.txt"\n')
    path = config(tmp_path, tasks={"source": str(source), "ids": ["slow"]}, treatments={},
                  runner={"harness": "oracle"}, jobs=1)
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run))
    deadline = time.monotonic() + 240
    while not any(e["type"] == "agent.launched" for e in events_of(run)):
        assert time.monotonic() < deadline, "the attempt never launched"
        time.sleep(0.2)
    while len(running := _running_of(run)) < 2:  # the grading container is made while the agent codes
        assert time.monotonic() < deadline, f"not both containers ran: {running}"
        time.sleep(0.2)
    owner = json.loads((run / "run.lock").read_text())
    os.kill(owner["pid"], signal.SIGKILL)
    time.sleep(0.5)
    status = json.loads(cli("status", str(run), "--json").stdout)
    assert status["phase"] == "interrupted" and not status["active"]
    left = status["left_running"]
    assert left["checked"] and {c["attempt"] for c in left["containers"]} == {"slow__vanilla__r1"}
    assert sorted(c["name"].split("-")[-2] for c in left["containers"]) == ["coding", "verifier"]
    cids = [c["id"] for c in left["containers"]]
    assert left["stop_command"] == f"docker stop {' '.join(cids)}"
    resumed = cli("run", str(run), "--foreground")
    assert resumed.stdout.count("left running by an attempt that a kill interrupted") == 2, resumed.stdout
    status = json.loads(cli("status", str(run), "--json").stdout)
    assert status["phase"] == "complete"
    assert [d["id"] for d in status["discarded"]] == ["slow__vanilla__r1"]
    assert status["attempts"][0]["id"] == "slow__vanilla__r1~2" and status["attempts"][0]["outcome"] == "pass"
    inspect = json.loads(subprocess.run(["docker", "inspect", *cids], capture_output=True, text=True, check=True).stdout)
    assert [i["State"]["Running"] for i in inspect] == [False, False]  # stopped, never removed
    subprocess.run(["docker", "rm", "-f", *cids], capture_output=True)


def _running_of(run: Path) -> list[str]:
    """Names of the run's running containers."""
    return subprocess.run(["docker", "ps", "--format", "{{.Names}}", "--filter",
                           f"label=pluginbench.run={RunDir(run).run_id}"],
                          capture_output=True, text=True, check=True).stdout.split()


def test_missing_engine_is_refused_before_anything(tmp_path: Path) -> None:
    """With no engine at DOCKER_HOST, run exits 2 naming the socket and writes no run directory."""
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no.sock"}
    done = cli("run", str(config(tmp_path)), "--output", str(tmp_path / "run"), env=env, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no.sock" in done.stderr and "tools/start-docker.sh" in done.stderr
    assert not (tmp_path / "run").exists()


def test_memory_budget_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    """Container limits beyond 80% of Docker's memory are refused, never lowered."""
    path = config(tmp_path, environment={"backend": "docker", "container_memory_mb": 10_000_000})
    done = cli("check", str(path), "--no-readiness", check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "container_memory_mb" in done.stderr and "memory" in done.stderr


def test_image_that_fails_to_build_stops_before_any_coding(tmp_path: Path) -> None:
    """A Dockerfile that does not build fails preparation with its output; no attempt starts."""
    source = tmp_path / "tasks"
    task(source, "broken", solve='echo b > "$APP_DIR/b.txt"\n',
         dockerfile="FROM pluginbench/base:bookworm\nRUN echo building-broken-image && false\n")
    path = config(tmp_path, tasks={"source": str(source), "ids": ["broken"]}, treatments={}, runner={"harness": "oracle"})
    run = tmp_path / "run"
    done = cli("run", str(path), "--output", str(run), "--foreground", check=False)
    assert done.returncode == 1
    events = events_of(run)
    assert not [e for e in events if e["type"] == "attempt.started"]
    failed = events[-1]
    assert failed["type"] == "run.failed" and "did not build" in failed["error"]


@pytest.mark.parametrize("backend", ["local", "docker"])
def test_an_agent_cannot_set_its_own_reward(tmp_path: Path, backend: str) -> None:
    """An agent that writes reward.txt and plants a passing test.sh is still graded by the hidden verifier: fail."""
    source = tmp_path / "tasks"
    task(source, "cheat", solve=(
        'mkdir -p "$LOGS_DIR/verifier" && echo 1 > "$LOGS_DIR/verifier/reward.txt"\n'
        'mkdir -p "$APP_DIR/tests" && printf "#!/bin/sh\\necho 1 > \\"$LOGS_DIR/verifier/reward.txt\\"\\n" > "$APP_DIR/tests/test.sh"\n'
    ))
    path = config(tmp_path, tasks={"source": str(source), "ids": ["cheat"]}, treatments={},
                  runner={"harness": "oracle"}, environment={"backend": backend})
    done = cli("check", str(path), "--json", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {r["control"]: r for r in json.loads(done.stdout)["readiness"]}
    assert rows["oracle"]["ok"] is False and rows["oracle"]["reward"] == 0.0


def test_separate_verifier_image_from_tests_dockerfile(tmp_path: Path) -> None:
    """A task's tests/Dockerfile builds the verifier's own image; the coding image never has its contents."""
    source = tmp_path / "tasks"
    t = task(source, "sep", solve='test -e /verifier-only && exit 1; echo b > "$APP_DIR/b.txt"\n')
    (t / "tests" / "Dockerfile").write_text("FROM pluginbench/base:bookworm\nRUN touch /verifier-only\n")
    (t / "tests" / "test.sh").write_text(
        '#!/bin/sh\nmkdir -p "$LOGS_DIR/verifier"\n'
        'if [ -e /verifier-only ] && [ -f "$APP_DIR/b.txt" ]; then echo 1; else echo 0; fi > "$LOGS_DIR/verifier/reward.txt"\n')
    path = config(tmp_path, tasks={"source": str(source), "ids": ["sep"]}, treatments={}, runner={"harness": "oracle"})
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run), "--foreground")
    prepared = next(e for e in events_of(run) if e["type"] == "task.prepared")
    assert prepared["verifier_image"] != prepared["image"]
    status = json.loads(cli("status", str(run), "--json").stdout)
    assert [a["outcome"] for a in status["attempts"]] == ["pass"]


def test_prepared_images_are_recorded_and_reused_from_the_cache_root(tmp_path: Path) -> None:
    """Prepared image IDs go to the cache root; a second run of the same frozen task reuses them."""
    source = tmp_path / "tasks"
    task(source, "built", solve='echo b > "$APP_DIR/b.txt"\n',
         dockerfile="FROM pluginbench/base:bookworm\nRUN echo prepared > /prepared.txt\n")
    path = config(tmp_path, tasks={"source": str(source), "ids": ["built"]}, treatments={}, runner={"harness": "nop"})
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "pluginbench" / "prepared"
    before = set(cache.glob("*.json")) if cache.is_dir() else set()
    first, second = tmp_path / "r1", tmp_path / "r2"
    cli("run", str(path), "--output", str(first), "--foreground")
    records = set(cache.glob("*.json")) - before
    assert len(records) == 1
    record = json.loads(next(iter(records)).read_text())
    prepared = next(e for e in events_of(first) if e["type"] == "task.prepared")
    assert (record["coding"], record["verifier"]) == (prepared["image"], prepared["verifier_image"])
    cli("run", str(path), "--output", str(second), "--foreground")
    again = next(e for e in events_of(second) if e["type"] == "task.prepared")
    assert (again["image"], again["verifier_image"]) == (prepared["image"], prepared["verifier_image"])
    assert set(cache.glob("*.json")) - before == records
