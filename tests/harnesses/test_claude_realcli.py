"""The real Claude Code CLI through ClaudeHarness, against PluginBench's loopback probe."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pluginbench.environments._local_env import LocalEnvironment
from pluginbench.environments._port import SandboxSpec
from pluginbench.errors import InputError
from pluginbench.harnesses._claude import ClaudeHarness, DiscoveryMismatch
from pluginbench.harnesses._discovery_store import DiscoveryStore
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment  # noqa: F401
from pluginbench.harnesses._secrets import scan_for_secret
from pluginbench.probe import (
    PINNED,
    PROBE_ANTHROPIC_KEY,
    ProbeServer,
    cli_version,
    find_cli,
    load_scenario,
)
from pluginbench.tasks import HarborTask
from tests._prereq import require
from tests.harnesses._claude_pkg import MARKER, sample_treatment, vanilla, write

pytestmark = pytest.mark.realcli
MODEL = "claude-sonnet-4-5"

SCENARIO = textwrap.dedent(f"""\
    name: harness-edit
    description: Bash then Write; the written text depends on the delivered guidance.
    final:
      text: "Done."
      usage: {{input_tokens: 1400, output_tokens: 12, cache_read_input_tokens: 200, cache_creation_input_tokens: 50}}
    rules:
      - name: guided
        when: {{api: anthropic, tools_include: Write, messages_contain: {MARKER}}}
        script:
          - tool: {{name: Bash, input: {{command: "ls -la", description: "List"}}}}
            usage: {{input_tokens: 1200, output_tokens: 40, cache_read_input_tokens: 300, cache_creation_input_tokens: 100}}
          - tool: {{name: Write, input: {{file_path: "{{{{cwd}}}}/answer.txt", content: "guided\\n"}}}}
            usage: {{input_tokens: 1300, output_tokens: 30, cache_read_input_tokens: 350, cache_creation_input_tokens: 0}}
      - name: vanilla
        when: {{api: anthropic, tools_include: Write}}
        script:
          - tool: {{name: Write, input: {{file_path: "{{{{cwd}}}}/answer.txt", content: "vanilla\\n"}}}}
            usage: {{input_tokens: 1250, output_tokens: 35}}
    """)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cli() -> Path:
    path = find_cli("claude")
    require(path is not None and cli_version(path) == PINNED["claude"],
            f"Claude Code {PINNED['claude']} (tools/install-clis.sh)")
    assert path is not None
    return path


def _task(tmp: Path) -> HarborTask:
    return HarborTask("t1", tmp, "Write answer.txt.", "/app", None, 60.0, 60.0, "local", None, None,
                      None, None, (), {})


async def _attempt(cli: Path, tmp: Path, probe: ProbeServer, treatment: FrozenTreatment,
                   name: str, *, prepare=None, harness: ClaudeHarness | None = None, run_id: str = "run",
                   isolation: str = "auto"):
    harness = harness or ClaudeHarness(cli, PINNED["claude"], probe.base_url, environ={"PATH": "/usr/bin:/bin"})
    home = tmp / f"home-{name}"
    home.mkdir()
    receipt = harness.deliver(treatment, home)
    if prepare:
        prepare(home)
    work = tmp / f"work-{name}"
    write(work / "README.md", "hello\n")
    launched: list[list[str]] = []

    async def on_launch(argv):
        launched.append(list(argv))

    attempt_dir = tmp / f"attempt-{name}"
    ctx = AttemptContext(run_id, name, _task(tmp), treatment, MODEL, "medium", 0, 120.0, attempt_dir, on_launch)
    spec = SandboxSpec(run_id="run", attempt_id=name, role="coding", task="t1", workspace=work, home=home,
                       readonly=harness.readonly, egress=harness.egress("coding", None))
    async with LocalEnvironment(isolation=isolation).sandbox(spec) as sb:
        run = await harness.run(sb, ctx)
        await sb.stop()
        out = tmp / f"export-{name}"
        await sb.export_workspace(out)
    return receipt, run, attempt_dir, out, launched


def _served(probe: ProbeServer) -> tuple[int, int]:
    total_in = total_out = 0
    for u in probe.served_usage().values():
        total_in += u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
        total_out += u.output_tokens
    return total_in, total_out


@pytest.mark.anyio
async def test_vanilla_attempt_discovers_nothing_and_usage_equals_served(cli: Path, tmp_path: Path) -> None:
    """Vanilla loads no component, the scripted edit lands, and parsed usage equals what the probe served."""
    scen = load_scenario(write(tmp_path / "s.yaml", SCENARIO))
    with ProbeServer(scen) as probe:
        _, run, adir, out, launched = await _attempt(cli, tmp_path, probe, vanilla(), "van")
        probe.wait_idle(timeout=60)
        served = _served(probe)
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["passed"] and receipt["probe"] is True
    assert receipt["skills"] == [] and receipt["plugins"] == [] and receipt["memory_files"] == []
    assert (out / "answer.txt").read_text() == "vanilla\n"
    assert launched and launched[0][0] == str(cli)
    assert run.error is None and run.provider_stop is None and run.exit_code == 0
    assert run.usage.status == "exact"
    assert (run.usage.input_tokens, run.usage.output_tokens) == served
    execution = json.loads((adir / "execution.json").read_text())
    assert execution["checks"]["passed"] and execution["api_retries"] == {}
    assert execution["execution_outcome"] == "success" and execution["execution_outcome_reasons"] == []
    # claude-sonnet-4-5 takes no effort: the CLI sends none, so the effective effort is not the requested one.
    assert execution["requested_effort"] == "medium" and execution["effective_effort"] is None
    assert "budget_tokens" in execution["effective_effort_evidence"]


@pytest.mark.anyio
async def test_effective_effort_is_read_from_the_requests_the_cli_sent(cli: Path, tmp_path: Path, monkeypatch) -> None:
    """On claude-opus-5-5 every API request carries the requested effort, recorded as the effective one."""
    import tests.harnesses.test_claude_realcli as me

    monkeypatch.setattr(me, "MODEL", "claude-opus-5-5")
    scen = load_scenario(write(tmp_path / "s.yaml", SCENARIO))
    with ProbeServer(scen) as probe:
        _, run, adir, _, _ = await _attempt(cli, tmp_path, probe, vanilla(), "opus")
        probe.wait_idle(timeout=60)
        sent = [r.body.get("output_config") for r in probe.requests if r.kind == "coding"]
    execution = json.loads((adir / "execution.json").read_text())
    assert sent and all(s == {"effort": "medium"} for s in sent)
    assert (execution["requested_effort"], execution["effective_effort"]) == ("medium", "medium")


@pytest.mark.anyio
async def test_treatment_attempt_loads_exactly_the_declared_components(cli: Path, tmp_path: Path) -> None:
    """Guidance, skill and plugin hook are discovered with hooks disabled, the hook runs once while coding, and the guided edit lands."""
    scen = load_scenario(write(tmp_path / "s.yaml", SCENARIO))
    with ProbeServer(scen) as probe:
        _, run, adir, out, _ = await _attempt(cli, tmp_path, probe, sample_treatment(tmp_path), "trt")
        probe.wait_idle(timeout=60)
        served = _served(probe)
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["passed"], receipt["problems"]
    assert sorted(s["name"] for s in receipt["skills"]) == ["pb-hooks:plug-skill", "tidy-code"]
    assert receipt["memory_files"] == [{"path": "<config>/CLAUDE.md", "type": "User"}]
    assert receipt["plugins"] == ["pb-hooks@pluginbench-frozen"]
    assert receipt["task_owned"]["memory_files"] == [] and receipt["cli_processes"] == 2
    # Discovery ran with hooks disabled: the hook is listed but did not run there.
    assert receipt["hooks_all_disabled"] is True and receipt["hook_events_before_task"] == 0
    assert [h["event"] for h in receipt["hooks"]] == ["SessionStart"]
    assert '"hook_started"' not in (adir / "agent" / "discovery.stdout.jsonl").read_text()
    assert '"hook_started"' in (adir / "agent" / "stdout.jsonl").read_text()  # it ran while coding
    assert (out / "answer.txt").read_text() == "guided\n"
    assert run.error is None, run.error
    # A command hook runs unmetered: the total is unknown, the native session's usage is kept apart.
    assert run.usage.status == "unknown" and run.usage.input_tokens is None
    native = run.usage.native_session
    assert native is not None and native.status == "exact"
    assert (native.input_tokens, native.output_tokens) == served
    saved = json.loads((adir / "execution.json").read_text())["usage"]
    assert saved["status"] == "unknown" and saved["native_session"]["input_tokens"] == native.input_tokens
    assert list((adir / "agent" / "transcripts").glob("*.jsonl"))
    assert scan_for_secret([adir, out], PROBE_ANTHROPIC_KEY) == []


@pytest.mark.anyio
@pytest.mark.parametrize("arm", ["vanilla", "treatment"])
async def test_discovery_refuses_an_undeclared_skill(cli: Path, tmp_path: Path, arm: str) -> None:
    """An arm (vanilla or treatment) whose private config would load an undeclared skill stops before coding."""
    scen = load_scenario(write(tmp_path / "s.yaml", SCENARIO))

    def sneak(home: Path) -> None:
        write(home / ".claude-config" / "skills" / "sneaky" / "SKILL.md",
               "---\nname: sneaky\ndescription: undeclared\n---\nx\n")

    with ProbeServer(scen) as probe:
        with pytest.raises(DiscoveryMismatch, match="sneaky"):
            chosen = vanilla() if arm == "vanilla" else sample_treatment(tmp_path)
            await _attempt(cli, tmp_path, probe, chosen, "sneak", prepare=sneak)
        assert [r for r in probe.requests if r.kind == "coding"] == []


@pytest.mark.anyio
async def test_same_setup_reuses_discovery_and_a_drifted_coding_process_stops_before_the_task(
        cli: Path, tmp_path: Path) -> None:
    """A second attempt of the same setup starts the CLI once (the receipt reused, its coding control answers
    compared); when those answers differ from the reused receipt it stops before agent.launched and any model call."""
    scen = load_scenario(write(tmp_path / "s.yaml", SCENARIO))
    with ProbeServer(scen) as probe:
        harness = ClaudeHarness(cli, PINNED["claude"], probe.base_url, environ={"PATH": "/usr/bin:/bin"})
        await _attempt(cli, tmp_path, probe, sample_treatment(tmp_path), "first", harness=harness)
        _, run, adir, out, launched = await _attempt(cli, tmp_path, probe, sample_treatment(tmp_path), "again",
                                                     harness=harness)
        receipt = json.loads((adir / "native-treatment.json").read_text())
        assert receipt["passed"] and receipt["cli_processes"] == 1
        assert receipt["cache"]["hit"] is True and receipt["cache"]["origin_attempt"] == "first"
        assert receipt["attempt_id"] == "again" and not (adir / "agent" / "discovery.stdout.jsonl").exists()
        assert '"hook_started"' in (adir / "agent" / "stdout.jsonl").read_text()  # the hook ran while coding
        assert (out / "answer.txt").read_text() == "guided\n" and run.error is None and launched
        # Drift: the reused receipt no longer says what this coding process loads.
        (cached,) = harness._receipts.values()
        cached["skills"] = [*cached["skills"], {"name": "ghost", "source": "userSettings", "path": None,
                                                "pluginId": None}]
        coding = [r for r in probe.requests if r.kind == "coding"]
        with pytest.raises(DiscoveryMismatch, match="skills differs from the discovery receipt"):
            await _attempt(cli, tmp_path, probe, sample_treatment(tmp_path), "drift", harness=harness)
        assert [r for r in probe.requests if r.kind == "coding"] == coding
    drift = json.loads((tmp_path / "attempt-drift" / "native-treatment.json").read_text())
    assert drift["passed"] is False and drift["cache"]["hit"] is True and harness._receipts == {}


@pytest.mark.anyio
async def test_a_later_run_reuses_stored_discovery_answers_and_a_tampered_entry_is_dropped(
        cli: Path, tmp_path: Path) -> None:
    """A later run (another harness and probe port) starts the CLI once from the store, with the entry copied into
    the attempt and its origin run named; a tampered entry fails the coding comparison before any model call and is
    dropped from the store; an unisolated sandbox neither reads nor writes it."""
    scen = load_scenario(write(tmp_path / "s.yaml", SCENARIO))
    store = DiscoveryStore(tmp_path / "store" / "claude")

    def harness(probe: ProbeServer) -> ClaudeHarness:
        return ClaudeHarness(cli, PINNED["claude"], probe.base_url, environ={"PATH": "/usr/bin:/bin"}, store=store)

    with ProbeServer(scen) as probe:
        await _attempt(cli, tmp_path, probe, sample_treatment(tmp_path), "first", harness=harness(probe), run_id="r1")
    first = json.loads((tmp_path / "attempt-first" / "native-treatment.json").read_text())
    assert first["cli_processes"] == 2 and first["cache"]["store"] == {"read": "miss", "reason": None, "written": True}
    (entry_file,) = store.folder.glob("*.json")
    with ProbeServer(scen) as probe:
        _, run, adir, out, launched = await _attempt(cli, tmp_path, probe, sample_treatment(tmp_path), "later",
                                                     harness=harness(probe), run_id="r2")
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["passed"] and receipt["cli_processes"] == 1 and receipt["attempt_id"] == "later"
    assert receipt["cache"]["hit"] is True and (receipt["cache"]["origin_run"], receipt["cache"]["origin_attempt"]) \
        == ("r1", "first") and receipt["cache"]["store"]["read"] == "hit"
    assert json.loads((adir / "agent" / "discovery.origin.json").read_text()) == json.loads(entry_file.read_text())
    assert not (adir / "agent" / "discovery.stdout.jsonl").exists()
    assert (out / "answer.txt").read_text() == "guided\n" and run.error is None and launched
    # Tampered (same owner, same mode): a built-in command removed from the stored answers.
    entry = json.loads(entry_file.read_text())
    lines = [json.loads(line) for line in entry["discovery_stdout"].splitlines()]
    for line in lines:
        if (line.get("response") or {}).get("request_id", "").endswith("_initialize"):
            commands = line["response"]["response"]["commands"]
            commands.remove(next(c for c in commands if c.get("builtin")))  # not a component: judged as passing
    entry["discovery_stdout"] = "".join(json.dumps(line) + "\n" for line in lines)
    entry_file.write_text(json.dumps(entry))
    with ProbeServer(scen) as probe:
        with pytest.raises(DiscoveryMismatch, match="session differs from the discovery receipt"):
            await _attempt(cli, tmp_path, probe, sample_treatment(tmp_path), "tampered", harness=harness(probe),
                           run_id="r3")
        assert [r for r in probe.requests if r.kind == "coding"] == []
    assert not entry_file.exists()
    with ProbeServer(scen) as probe:
        await _attempt(cli, tmp_path, probe, vanilla(), "open", harness=harness(probe), run_id="r4", isolation="none")
    unisolated = json.loads((tmp_path / "attempt-open" / "native-treatment.json").read_text())
    assert unisolated["cli_processes"] == 2 and unisolated["cache"]["store"] == {
        "read": "off", "reason": "the sandbox is not isolated", "written": False}
    assert list(store.folder.glob("*.json")) == []


def test_refused_operator_variables_raise_before_anything_starts(tmp_path: Path) -> None:
    """A refused variable in the operator environment is an InputError at construction."""
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY"):
        ClaudeHarness("/nonexistent/claude", "2.1.328", environ={"ANTHROPIC_API_KEY": "x",
                                                                  "CLAUDE_CODE_OAUTH_TOKEN": "t"})
    with pytest.raises(InputError, match="probe"):
        ClaudeHarness("/nonexistent/claude", "2.1.328", "http://127.0.0.1:9",
                      environ={"CLAUDE_CODE_OAUTH_TOKEN": "real"})
