"""The simulated harness: delivery layout, candidate choice, the agent script and its trace.

Pure parts are tested directly; the agent script is run as a real subprocess in a temp
git repo; the harness itself runs through a real local sandbox (unisolated, and under
bubblewrap where it is available).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec, bwrap_available
from pluginbench.errors import TaskError, TreatmentError
from pluginbench.events import Usage
from pluginbench.harnesses import (
    AttemptContext,
    FrozenTreatment,
    SimulatedHarness,
    deliver_claude_layout,
    load_plan,
    make_harness,
    usage_from_stream,
)
from pluginbench.harnesses import _simulated_agent as agent
from pluginbench.harnesses._simulated import AGENT_SCRIPT, sim_seed
from pluginbench.tasks import load_task
from tests._prereq import require

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
GUIDANCE = QUICKSTART / "guidance" / "testing-discipline.md"
SAMPLES = ROOT / "tests" / "data" / "samples" / "claude-code-2.1.328"
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t.invalid",
}

VANILLA = FrozenTreatment("vanilla", None, (), (), (), "none")


def _treatment(**kw) -> FrozenTreatment:
    fields = {
        "arm": "t",
        "root": None,
        "guidance": (),
        "skills": (),
        "plugins": (),
        "fingerprint": "fp",
    }
    fields.update(kw)
    return FrozenTreatment(**fields)


def _skill(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} skill\n---\n{body}\n")
    return path


def _plugin(folder: Path, name: str, skill_body: str) -> Path:
    path = folder / f"{name}-src"
    (path / ".claude-plugin").mkdir(parents=True)
    (path / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "0.1.0"})
    )
    _skill(path / "skills", "inner", skill_body)
    return path


# ------------------------------------------------------------------ delivery


def test_vanilla_delivery_writes_no_guidance(tmp_path):
    """Vanilla gets an empty config dir: no CLAUDE.md, no skills, no plugins."""
    receipt = deliver_claude_layout(VANILLA, tmp_path)
    assert receipt == {"config_dir": ".claude", "memory_file": None, "skills": [], "plugins": []}
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_delivery_puts_everything_where_claude_code_looks(tmp_path):
    """Guidance files are joined into .claude/CLAUDE.md; skills and plugins are copied under .claude."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\nfirst")
    (src / "b.md").write_text("# B\nsecond\n")
    skill = _skill(src / "skills", "careful-review", "Review carefully.")
    plugin = _plugin(src / "plugins", "lab-plugin", "Plugin skill body.")
    home = tmp_path / "home"
    receipt = deliver_claude_layout(
        _treatment(guidance=(src / "a.md", src / "b.md"), skills=(skill,), plugins=(plugin,)), home
    )
    assert receipt == {
        "config_dir": ".claude",
        "memory_file": ".claude/CLAUDE.md",
        "skills": ["careful-review"],
        "plugins": ["lab-plugin"],
    }
    assert (home / ".claude" / "CLAUDE.md").read_bytes() == b"# A\nfirst\n\n# B\nsecond\n"
    assert (home / ".claude/skills/careful-review/SKILL.md").read_text() == (
        skill / "SKILL.md"
    ).read_text()
    copied = home / ".claude/plugins/local/lab-plugin"
    assert (copied / ".claude-plugin/plugin.json").is_file()
    assert (copied / "skills/inner/SKILL.md").is_file()


def test_delivery_refuses_two_skills_with_one_name(tmp_path):
    """Two skill folders with the same name cannot both be delivered."""
    one = _skill(tmp_path / "x", "same", "one")
    two = _skill(tmp_path / "y", "same", "two")
    with pytest.raises(TreatmentError):
        deliver_claude_layout(_treatment(skills=(one, two)), tmp_path / "home")


def test_agent_discovers_exactly_what_was_delivered(tmp_path):
    """The agent script finds the delivered memory file, skills and plugin skills, and nothing for vanilla."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "g.md").write_text("always add a regression test")
    skill = _skill(src / "skills", "tidy", "Keep it tidy.")
    plugin = _plugin(src / "plugins", "lab-plugin", "Check every edge case.")
    home, cwd = tmp_path / "home", tmp_path / "work"
    cwd.mkdir()
    deliver_claude_layout(
        _treatment(guidance=(src / "g.md",), skills=(skill,), plugins=(plugin,)), home
    )
    found = agent.discover(str(home / ".claude"), str(cwd))
    assert found["memory"] == [str(home / ".claude" / "CLAUDE.md")]
    assert found["skills"] == ["tidy", "lab-plugin:inner"]
    assert [p["name"] for p in found["plugins"]] == ["lab-plugin"]
    assert "regression test" in found["text"] and "edge case" in found["text"]
    empty_home = tmp_path / "empty"
    deliver_claude_layout(VANILLA, empty_home)
    nothing = agent.discover(str(empty_home / ".claude"), str(cwd))
    assert (nothing["memory"], nothing["skills"], nothing["plugins"], nothing["text"]) == (
        [],
        [],
        [],
        "",
    )


def test_agent_reads_project_agents_md_only_without_claude_md(tmp_path):
    """In the workspace, AGENTS.md counts only when there is no CLAUDE.md, as in Claude Code."""
    (tmp_path / "AGENTS.md").write_text("agents text")
    assert agent.discover("", str(tmp_path))["text"] == "agents text"
    (tmp_path / "CLAUDE.md").write_text("claude text")
    assert agent.discover("", str(tmp_path))["text"] == "claude text"


# ------------------------------------------------------------------ candidates


def test_guidance_detection_ignores_case_and_needs_a_keyword():
    """Guided means some keyword occurs in the guidance, ignoring case."""
    assert agent.is_guided("Handle every EDGE CASE.", ["edge case"])
    assert not agent.is_guided("Write clean code.", ["edge case", "regression test"])
    assert not agent.is_guided("anything", [])


def test_choice_is_deterministic_per_seed():
    """The same seed always picks the same candidate; different seeds do not all agree."""
    cands = [
        {"weight": 1, "guided_weight": 1},
        {"weight": 1, "guided_weight": 1},
        {"weight": 1, "guided_weight": 1},
    ]
    picks = [agent.choose(cands, False, seed) for seed in range(50)]
    assert picks == [agent.choose(cands, False, seed) for seed in range(50)]
    assert len(set(picks)) == 3


def test_choice_follows_weights_or_guided_weights():
    """Unguided draws follow `weight`, guided ones `guided_weight`; zero-weight candidates never win."""
    cands = [
        {"name": "a", "weight": 3, "guided_weight": 0},
        {"name": "b", "weight": 1, "guided_weight": 1},
        {"name": "c", "weight": 0, "guided_weight": 3},
    ]
    plain = Counter(agent.choose(cands, False, s) for s in range(4000))
    guided = Counter(agent.choose(cands, True, s) for s in range(4000))
    assert plain[2] == 0 and guided[0] == 0
    assert 0.70 < plain[0] / 4000 < 0.80
    assert 0.70 < guided[2] / 4000 < 0.80


def test_choice_refuses_all_zero_weights():
    """With no positive weight there is nothing to choose."""
    with pytest.raises(ValueError):
        agent.choose([{"weight": 0, "guided_weight": 1}], False, 1)


def test_seed_depends_on_run_seed_and_attempt():
    """The agent seed is a stable function of (run seed, attempt id)."""
    assert sim_seed(7, "a1") == sim_seed(7, "a1")
    assert len({sim_seed(7, "a1"), sim_seed(7, "a2"), sim_seed(8, "a1")}) == 3
    assert 0 <= sim_seed(7, "a1") < 2**63


def _plan_folder(tmp_path: Path, body: str, files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "simulated"
    folder.mkdir()
    (folder / "candidates.toml").write_text(body)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize(
    "body",
    [
        '[[candidates]]\nname = "x"\npatch = "missing.patch"\nweight = 1\n',
        '[[candidates]]\nname = "x"\nweight = -1\n',
        '[[candidates]]\nname = "x"\nweight = 1\nguided_weight = 0\n',
        '[[candidates]]\nname = "x"\npatch = "../up.patch"\nweight = 1\n',
        'keywords = "edge"\n[[candidates]]\nname = "x"\nweight = 1\n',
        "keywords = []\n",
    ],
)
def test_bad_candidate_files_are_refused(tmp_path, body):
    """A plan with a missing or escaping patch, bad weights or bad keywords is a TaskError."""
    with pytest.raises(TaskError):
        load_plan(_plan_folder(tmp_path, body))


def test_guided_weight_defaults_to_weight(tmp_path):
    """A candidate without guided_weight keeps its weight when guided."""
    plan = load_plan(
        _plan_folder(tmp_path, 'keywords = ["k"]\n[[candidates]]\nname = "x"\nweight = 2\n')
    )
    assert plan.keywords == ("k",)
    assert (
        plan.candidates[0].weight,
        plan.candidates[0].guided_weight,
        plan.candidates[0].patch,
    ) == (2.0, 2.0, "")


# ------------------------------------------------------------------ trace parsing


def _result(usage: object) -> str:
    return json.dumps({"type": "result", "subtype": "success", "is_error": False, "usage": usage})


def test_usage_from_the_real_claude_sample():
    """The real Claude Code 2.1.328 sample stream parses to its exact result usage."""
    sample = SAMPLES / "02_tools_bash_write.stream.jsonl"
    usage = usage_from_stream(sample.read_text())
    assert usage == Usage(
        status="exact",
        input_tokens=4800,
        cached_input_tokens=0,
        uncached_input_tokens=4800,
        output_tokens=107,
        reasoning_output_tokens=0,
        total_tokens=4907,
    )


def test_usage_sums_cache_reads_and_writes_into_input():
    """Input is uncached + cache read + cache creation; cached is the cache read; total adds output."""
    usage = usage_from_stream(
        '{"type":"system","subtype":"init"}\n'
        + _result(
            {
                "input_tokens": 10,
                "cache_read_input_tokens": 300,
                "cache_creation_input_tokens": 40,
                "output_tokens": 7,
            }
        )
    )
    assert (usage.status, usage.input_tokens, usage.cached_input_tokens) == ("exact", 350, 300)
    assert (usage.uncached_input_tokens, usage.output_tokens, usage.total_tokens) == (50, 7, 357)
    assert usage.reasoning_output_tokens is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        '{"type":"system","subtype":"init"}\n{"type":"assistant"',
        "not json at all\n",
        _result(None),
        _result({"input_tokens": 1, "cache_read_input_tokens": 0, "output_tokens": 2}),
        _result(
            {
                "input_tokens": -1,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
                "output_tokens": 2,
            }
        ),
        _result(
            {
                "input_tokens": "5",
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
                "output_tokens": 2,
            }
        ),
    ],
)
def test_missing_or_garbled_usage_is_unknown_never_zero(text):
    """Without a well-formed result usage the usage is unknown with a reason and no counts."""
    usage = usage_from_stream(text)
    assert usage.status == "unknown" and usage.reason
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (None, None, None)


# ------------------------------------------------------------------ the agent script


def test_agent_script_is_python38_stdlib_only():
    """The script parses as Python 3.8 and imports only standard-library modules."""
    source = AGENT_SCRIPT.read_text()
    tree = ast.parse(source, feature_version=(3, 8))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module.split(".")[0])
    assert modules and modules <= set(sys.stdlib_module_names), modules - set(
        sys.stdlib_module_names
    )


def _git(app: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=app, env={**os.environ, **GIT_ENV}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _workspace(tmp_path: Path, task: str = "csv-quoting") -> Path:
    app = tmp_path / "app"
    shutil.copytree(QUICKSTART / "tasks" / task / "workspace", app)
    _git(app, "init", "-q")
    _git(app, "add", "-A")
    _git(app, "commit", "-qm", "base")
    return app


def _run_agent(tmp_path: Path, app: Path, sim: Path, seed: int, config: Path | None = None):
    env = {
        **os.environ,
        **GIT_ENV,
        "PLUGINBENCH_SIM_SEED": str(seed),
        "PLUGINBENCH_SIM_TASK": str(sim),
        "CLAUDE_CONFIG_DIR": str(config or tmp_path / "no-config"),
    }
    done = subprocess.run(
        [sys.executable, str(AGENT_SCRIPT)],
        cwd=app,
        env=env,
        input=b"Fix the bug.",
        capture_output=True,
        timeout=60,
    )
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    return done.returncode, lines


def _scripted(tmp_path: Path, weights: dict[str, tuple[int, int]]) -> Path:
    """A simulated/ folder for csv-quoting whose candidates carry ``weights`` (weight, guided)."""
    folder = tmp_path / "sim"
    shutil.copytree(QUICKSTART / "tasks" / "csv-quoting" / "simulated", folder)
    plan = load_plan(folder)
    scripted = plan._replace(
        candidates=tuple(
            c._replace(
                weight=weights.get(c.name, (0, 0))[0], guided_weight=weights.get(c.name, (0, 0))[1]
            )
            for c in plan.candidates
        )
    )
    (folder / "candidates.json").write_bytes(scripted.to_json())
    return folder


def test_agent_trace_has_claude_code_shape(tmp_path):
    """The trace starts with system/init, runs tests with Bash, edits with Edit/Write, ends with a result."""
    app = _workspace(tmp_path)
    sim = _scripted(tmp_path, {"correct-tested": (1, 1)})
    code, lines = _run_agent(tmp_path, app, sim, seed=3)
    assert code == 0
    assert (lines[0]["type"], lines[0]["subtype"], lines[0]["model"]) == (
        "system",
        "init",
        "simulated-1",
    )
    tools = [
        block["name"]
        for line in lines
        if line["type"] == "assistant"
        for block in line["message"]["content"]
        if block["type"] == "tool_use"
    ]
    assert tools[0] == "Bash" and "Edit" in tools and "Write" in tools
    results = [line for line in lines if line["type"] == "user"]
    assert all(r["message"]["content"][0]["type"] == "tool_result" for r in results)
    last = lines[-1]
    assert last["type"] == "result" and last["is_error"] is False
    assert set(last["usage"]) >= {
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    }
    assert last["modelUsage"]["simulated-1"]["outputTokens"] == last["usage"]["output_tokens"]
    assert usage_from_stream("\n".join(json.dumps(line) for line in lines)).status == "exact"
    assert "tests/test_quoting.py" in _git(app, "status", "--porcelain")


def test_agent_is_deterministic_for_a_seed(tmp_path):
    """Two runs with one seed choose the same candidate, make the same diff and report the same tokens."""
    outcomes = []
    for run in ("one", "two"):
        folder = tmp_path / run
        folder.mkdir()
        app = _workspace(folder)
        code, lines = _run_agent(
            folder, app, QUICKSTART / "tasks" / "csv-quoting" / "simulated", seed=12345
        )
        _git(app, "add", "-A")
        outcomes.append(
            (
                code,
                lines[-1]["usage"],
                lines[-1]["pluginbench_simulated"]["candidate"],
                _git(app, "diff", "--cached"),
            )
        )
    assert outcomes[0] == outcomes[1]


def test_delivered_guidance_switches_to_guided_weights(tmp_path):
    """With a keyword in the delivered CLAUDE.md the agent uses guided weights; without, plain weights."""
    sim = _scripted(tmp_path, {"empty": (1, 0), "correct": (0, 1)})
    plain_app = _workspace(tmp_path / "plain")
    code, lines = _run_agent(tmp_path, plain_app, sim, seed=1)
    assert code == 0 and lines[-1]["pluginbench_simulated"]["guided"] is False
    assert _git(plain_app, "status", "--porcelain") == ""
    home = tmp_path / "home"
    deliver_claude_layout(_treatment(guidance=(GUIDANCE,)), home)
    guided_app = _workspace(tmp_path / "guided")
    code, lines = _run_agent(tmp_path, guided_app, sim, seed=1, config=home / ".claude")
    assert code == 0 and lines[-1]["pluginbench_simulated"]["guided"] is True
    assert _git(guided_app, "status", "--porcelain").strip() == "M csvlite/writer.py"


def test_guidance_and_patch_size_raise_token_counts(tmp_path):
    """For one seed, guidance adds cached input and a patch adds output tokens."""
    prompt, seed = "Fix it.", 99
    base = agent.token_usage(prompt, "", "", seed, 4)
    more_guidance = agent.token_usage(prompt, "x" * 4000, "", seed, 4)
    bigger_patch = agent.token_usage(prompt, "", "y" * 4000, seed, 4)
    assert base == agent.token_usage(prompt, "", "", seed, 4)
    assert more_guidance["cache_read_input_tokens"] > base["cache_read_input_tokens"]
    assert more_guidance["cache_creation_input_tokens"] > base["cache_creation_input_tokens"]
    assert bigger_patch["output_tokens"] > base["output_tokens"]


def test_patch_that_does_not_apply_is_an_error_with_usage(tmp_path):
    """A candidate patch that fails to apply exits 1 with an error result that still has usage."""
    app = _workspace(tmp_path)
    (app / "csvlite" / "writer.py").write_text("changed\n")
    _git(app, "commit", "-qam", "drift")
    sim = _scripted(tmp_path, {"correct": (1, 1)})
    code, lines = _run_agent(tmp_path, app, sim, seed=5)
    assert code == 1
    assert lines[-1]["is_error"] is True and lines[-1]["subtype"] == "error_during_execution"
    assert usage_from_stream(json.dumps(lines[-1])).status == "exact"


def test_patch_edits_reads_hunks_and_new_files():
    """Patches turn into Edit calls per hunk and Write calls for new files."""
    patch = (
        QUICKSTART / "tasks" / "roman-numerals" / "simulated" / "correct-tested.patch"
    ).read_text()
    edits = agent.patch_edits(patch)
    assert [(kind, path) for kind, path, _, _ in edits] == [
        ("Edit", "numerals/roman.py"),
        ("Edit", "numerals/roman.py"),
        ("Write", "tests/test_roman_invalid.py"),
    ]
    assert "to_roman(total) != numeral" in edits[1][3] and "to_roman(total)" not in edits[1][2]
    assert edits[2][3].startswith("import unittest\n")


# ------------------------------------------------------------------ through a sandbox


ISOLATIONS = ["none", "bubblewrap"]


def _environment(isolation: str, root: Path) -> LocalEnvironment:
    if isolation == "bubblewrap":
        require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")
    return LocalEnvironment(isolation=isolation, root=root)


async def _attempt(
    tmp_path: Path,
    isolation: str,
    treatment: FrozenTreatment,
    attempt_id: str,
    task_id: str = "csv-quoting",
):
    """Deliver, run the harness in a fresh sandbox; return (run, receipt, launches, status, trace)."""
    harness = make_harness("simulated")
    task = load_task(QUICKSTART / "tasks" / task_id)
    base = tmp_path / attempt_id
    home = base / "home"
    home.mkdir(parents=True)
    receipt = harness.deliver(treatment, home)
    attempt_dir = base / "attempt"
    launches: list[list[str]] = []

    async def launched(argv):
        assert not (attempt_dir / "agent" / "stdout.jsonl").exists(), (
            "launched must come before the agent runs"
        )
        launches.append(list(argv))

    spec = SandboxSpec(
        "run",
        attempt_id,
        "coding",
        task.id,
        workspace=task.workspace_dir,
        home=home,
        hidden=(task.root,),
    )
    async with _environment(isolation, base / "boxes").sandbox(spec) as sb:
        ctx = AttemptContext(
            "run",
            attempt_id,
            task,
            treatment,
            "simulated-1",
            "medium",
            7,
            60.0,
            attempt_dir,
            launched,
        )
        run = await harness.run(sb, ctx)
        status = (await sb.exec(["git", "status", "--porcelain"])).stdout.decode()
    trace = [
        json.loads(line)
        for line in (attempt_dir / "agent" / "stdout.jsonl").read_text().splitlines()
    ]
    return run, receipt, launches, status, trace


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_harness_runs_the_agent_in_a_sandbox(tmp_path, isolation):
    """Through a real local sandbox the harness launches once, the agent edits the workspace
    according to its trace, and usage is exact from the result line."""
    run, receipt, launches, status, trace = await _attempt(
        tmp_path, isolation, _treatment(guidance=(GUIDANCE,)), "a1"
    )
    assert receipt["memory_file"] == ".claude/CLAUDE.md"
    assert len(launches) == 1 and launches[0][1].endswith("/.pluginbench-sim/agent.py")
    assert run.exit_code == 0 and not run.timed_out and run.error is None
    assert run.coding_seconds > 0
    assert run.usage.status == "exact" and run.usage == usage_from_stream(
        "\n".join(json.dumps(t) for t in trace)
    )
    decided = trace[-1]["pluginbench_simulated"]
    assert decided["guided"] is True
    assert decided["memory_files"] and decided["memory_files"][0].endswith("/.claude/CLAUDE.md")
    assert decided["seed"] == sim_seed(7, "a1")
    assert bool(status.strip()) == (decided["candidate"] != "empty")


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_harness_is_reproducible_per_attempt(tmp_path, isolation):
    """The same seed and attempt id give the same choice, the same changes and the same usage."""
    first = await _attempt(tmp_path / "1", isolation, VANILLA, "same")
    second = await _attempt(tmp_path / "2", isolation, VANILLA, "same")
    assert first[0].usage == second[0].usage
    assert first[3] == second[3]
    assert first[4][-1]["pluginbench_simulated"] == second[4][-1]["pluginbench_simulated"]
    assert first[4][-1]["pluginbench_simulated"]["guided"] is False


@pytest.mark.anyio
async def test_harness_reports_unknown_usage_when_the_agent_dies(tmp_path, monkeypatch):
    """An agent that exits without a result line yields unknown usage and an error, never zeros."""
    broken = tmp_path / "broken_agent.py"
    broken.write_text('import sys\nprint(\'{"type":"system","subtype":"init"}\')\nsys.exit(3)\n')
    monkeypatch.setattr("pluginbench.harnesses._simulated.AGENT_SCRIPT", broken)
    run = (await _attempt(tmp_path, "none", VANILLA, "dead"))[0]
    assert run.exit_code == 3 and run.error
    assert run.usage.status == "unknown" and run.usage.input_tokens is None and run.usage.reason


@pytest.mark.anyio
async def test_harness_times_out_with_unknown_usage(tmp_path, monkeypatch):
    """An agent that outlives the deadline is stopped: timed out, no exit code, usage unknown."""
    slow = tmp_path / "slow_agent.py"
    slow.write_text("import time\ntime.sleep(30)\n")
    monkeypatch.setattr("pluginbench.harnesses._simulated.AGENT_SCRIPT", slow)
    harness = SimulatedHarness()
    task = load_task(QUICKSTART / "tasks" / "word-wrap")
    home = tmp_path / "home"
    home.mkdir()
    spec = SandboxSpec("run", "slow", "coding", task.id, workspace=task.workspace_dir, home=home)

    async def launched(argv):
        return None

    async with LocalEnvironment(isolation="none", root=tmp_path / "boxes").sandbox(spec) as sb:
        ctx = AttemptContext(
            "run", "slow", task, VANILLA, None, None, 1, 0.5, tmp_path / "attempt", launched
        )
        run = await harness.run(sb, ctx)
    assert run.timed_out and run.exit_code is None
    assert run.usage.status == "unknown" and "timed out" in (run.usage.reason or "")
