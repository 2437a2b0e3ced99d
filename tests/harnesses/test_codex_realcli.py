"""The real Codex CLI 0.169.0 through CodexHarness, a local sandbox and the loopback probe."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._codex import CodexHarness, DiscoveryMismatch
from pluginbench.harnesses._codex_native import resolve_native
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.probe._clis import find_cli
from pluginbench.probe._scenario import load_scenario
from pluginbench.probe._server import ProbeServer
from pluginbench.tasks._harbor import HarborTask
from tests._prereq import require

pytestmark = pytest.mark.realcli
SCENARIOS = Path(__file__).resolve().parents[2] / "pluginbench" / "probe" / "scenarios"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cli() -> Path:
    path = find_cli("codex")
    require(path is not None, "codex 0.169.0 in .tools/clis (run tools/install-clis.sh)")
    assert path is not None
    return path


def task(root: Path, instruction: str) -> HarborTask:
    return HarborTask(id="t", root=root, instruction=instruction, workdir="/app", agent_timeout_sec=120,
                      verifier_timeout_sec=60, build_timeout_sec=60, environment_mode="local",
                      docker_image=None, verifier_docker_image=None, cpus=None, memory_mb=None,
                      collect=(), metadata={})


def skill(root: Path) -> Path:
    d = root / "skills" / "careful-edits"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("---\nname: careful-edits\ndescription: Edit carefully.\n---\nRead before you write.\n")
    return d


def plugin(root: Path) -> Path:
    d = root / "plugins" / "starter"
    (d / ".codex-plugin").mkdir(parents=True)
    (d / ".codex-plugin" / "plugin.json").write_text(json.dumps({"name": "starter", "version": "0.2.0", "description": "d"}))
    (d / "skills" / "plug-skill").mkdir(parents=True)
    (d / "skills" / "plug-skill" / "SKILL.md").write_text("---\nname: plug-skill\ndescription: from a plugin\n---\nx\n")
    (d / "hooks").mkdir()
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": "sh ${PLUGIN_ROOT}/hooks/start.sh", "timeout": 10}]}]}
    (d / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    (d / "hooks" / "start.sh").write_text('echo "$PWD" > "$HOME/hook-ran.txt"\n')
    return d


class Attempt:
    """One attempt's result and what the probe saw."""

    def __init__(self) -> None:
        self.launched: list[list[str]] = []
        self.requests_at_launch: int | None = None


async def attempt(tmp: Path, cli: Path, scenario: str, treatment: FrozenTreatment, *, extra_home=None, instruction="Do the task."):
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("starting source\n")
    home = tmp / "home"
    record = Attempt()
    with ProbeServer(load_scenario(SCENARIOS / scenario)) as probe:
        harness = CodexHarness(cli, "0.169.0", probe.base_url)
        harness.deliver(treatment, home)
        if extra_home:
            extra_home(home)

        async def launched(argv):
            record.launched.append(list(argv))
            record.requests_at_launch = len(probe.requests)

        ctx = AttemptContext("run", "att", task(tmp, instruction), treatment, "gpt-5.5", "medium", 1, 120.0,
                             tmp / "attempt", launched)
        spec = SandboxSpec("run", "att", "coding", "t", workspace=ws, home=home, readonly=harness.readonly, egress=harness.egress("coding", None))
        async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
            run = None
            error = None
            try:
                run = await harness.run(sb, ctx)
            except DiscoveryMismatch as exc:
                error = exc
            await sb.stop()
            await sb.export_workspace(tmp / "out")
            hook_file = tmp / "hook-ran.txt"
            with contextlib.suppress(Exception):  # absent unless a hook ran
                await sb.get(f"{sb.paths.home}/hook-ran.txt", hook_file)
        probe.wait_idle(timeout=60)
        served = probe.served_usage()
    return run, error, record, served, tmp / "out", tmp / "attempt"


def assert_usage_equals_served(run, served, status: str = "exact") -> None:
    (model_usage,) = served.values()
    u = run.usage
    assert u.status == status, u.reason
    assert u.input_tokens == model_usage.input_tokens
    assert u.cached_input_tokens == model_usage.cache_read_input_tokens
    assert u.uncached_input_tokens == model_usage.input_tokens - model_usage.cache_read_input_tokens
    assert u.output_tokens == model_usage.output_tokens
    assert u.reasoning_output_tokens == model_usage.reasoning_tokens


@pytest.mark.anyio
async def test_vanilla_attempt_edits_workspace_and_usage_is_exact(tmp_path, cli):
    """Vanilla: discovery loads nothing, the scripted shell + apply_patch really edit /app, usage equals what was served."""
    vanilla = FrozenTreatment("vanilla", None, (), (), (), "v")
    run, error, rec, served, out, adir = await attempt(tmp_path, cli, "edit-file.yaml", vanilla)
    assert error is None and run is not None
    assert run.exit_code == 0 and run.provider_stop is None and run.error is None
    assert (out / "probe_output.txt").read_text() == "written by the pluginbench probe\n"
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["ok"] and receipt["model_call"] is False
    assert receipt["skills"] == [] and receipt["plugins"] == [] and not receipt["memory_file"]["loaded"]
    assert rec.requests_at_launch == 0  # discovery made no model request
    assert rec.launched[0][1:3] == ["exec", "--json"]
    assert rec.launched[0][0] == resolve_native(cli, "0.169.0").exe  # the native binary, not the node wrapper
    assert_usage_equals_served(run, served)
    assert list((adir / "agent" / "rollouts").glob("rollout-*.jsonl"))
    assert (adir / "agent" / "stdout.jsonl").read_text().count('"turn.completed"') == 1
    # no child: the real rollout's turn context names the runner's model and effort
    rec_model = run.model_record
    assert rec_model is not None and (rec_model.status, rec_model.model, rec_model.effort, rec_model.children) == (
        "single", "gpt-5.5", "medium", 0)


@pytest.mark.anyio
async def test_guidance_and_skill_treatment_changes_the_outcome(tmp_path, cli):
    """Guidance reaches Codex as the private AGENTS.md (the probe writes the correct fix) and the skill is discovered."""
    guidance = tmp_path / "core.md"
    guidance.write_text("# Core\nPLUGINBENCH-GUIDANCE-MARKER: add, never subtract.\n")
    t = FrozenTreatment("core", tmp_path, (guidance,), (skill(tmp_path),), (), "c")
    run, error, rec, served, out, adir = await attempt(tmp_path, cli, "guided.yaml", t)
    assert error is None and run is not None and run.exit_code == 0
    assert "return a + b" in (out / "solution.py").read_text()
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["ok"] and receipt["memory_file"]["loaded"]
    assert [s["name"] for s in receipt["skills"]] == ["careful-edits"]
    assert rec.requests_at_launch == 0
    assert_usage_equals_served(run, served)
    assert not (out / "AGENTS.md").exists()  # never written into the repository


@pytest.mark.anyio
async def test_vanilla_guided_scenario_writes_the_wrong_fix(tmp_path, cli):
    """Without the guidance the same scenario writes the wrong fix, so the treatment's delta is real."""
    run, error, _, served, out, _ = await attempt(tmp_path, cli, "guided.yaml", FrozenTreatment("vanilla", None, (), (), (), "v"))
    assert error is None and run is not None
    assert "return a - b" in (out / "solution.py").read_text()
    assert_usage_equals_served(run, served)


@pytest.mark.anyio
async def test_plugin_installs_through_private_marketplace_and_hook_runs(tmp_path, cli):
    """A plugin installs via the private marketplace; discovery lists its skill and hook; the trusted hook runs."""
    t = FrozenTreatment("workflow", tmp_path, (), (), (plugin(tmp_path),), "w")
    run, error, rec, served, out, adir = await attempt(tmp_path, cli, "edit-file.yaml", t)
    assert error is None and run is not None and run.exit_code == 0, run
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["plugins"] == ["starter@pluginbench-local"]
    assert receipt["plugin_skills"] == [{"plugin": "starter@pluginbench-local", "name": "starter:plug-skill"}]
    root = receipt["installed_plugin_roots"]["starter"]
    assert receipt["hooks"] == [{"plugin": "starter@pluginbench-local", "event": "sessionstart", "command": f"sh {root}/hooks/start.sh"}]
    assert "--dangerously-bypass-hook-trust" in rec.launched[0]
    assert (tmp_path / "hook-ran.txt").is_file()
    # The hook may spend unmetered tokens: the total is unknown; the validated native
    # session usage is kept apart and equals what the probe served.
    assert run.usage.status == "unknown" and run.usage.total_tokens is None
    assert_usage_equals_served(run._replace(usage=run.usage.native_session), served)


@pytest.mark.anyio
async def test_discovery_refuses_vanilla_that_would_load_a_skill(tmp_path, cli):
    """A skill planted in the private HOME makes vanilla's discovery fail before launch, with no model call."""

    def plant(home: Path) -> None:
        d = home / ".agents" / "skills" / "stowaway"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text("---\nname: stowaway\ndescription: undeclared\n---\nx\n")

    vanilla = FrozenTreatment("vanilla", None, (), (), (), "v")
    run, error, rec, served, _, adir = await attempt(tmp_path, cli, "edit-file.yaml", vanilla, extra_home=plant)
    assert run is None and isinstance(error, DiscoveryMismatch)
    assert "stowaway" in str(error)
    assert rec.launched == [] and served == {}
    assert json.loads((adir / "native-treatment.json").read_text())["ok"] is False


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("scenario", "cause"),
    [("rate-limit.yaml", "rate limit"), ("auth.yaml", "authentication failure"), ("server-error.yaml", "provider server error")],
)
async def test_provider_errors_are_provider_stops(tmp_path, cli, scenario, cause):
    """429, 401 and 5xx from the provider end the session as a provider stop carrying Codex's message, usage unknown."""
    run, error, _, _, _, _ = await attempt(tmp_path, cli, scenario, FrozenTreatment("vanilla", None, (), (), (), "v"))
    assert error is None and run is not None
    assert run.exit_code == 1 and run.provider_stop is not None
    assert run.provider_stop.startswith(cause) and run.error and run.error in run.provider_stop
    assert run.usage.status == "unknown" and run.usage.input_tokens is None


class _ForwardedAnyway:
    """The sandbox, every command given the egress forwarder whatever it asked for (``egress`` kept)."""

    def __init__(self, sandbox) -> None:
        self._sandbox = sandbox
        self.asked: list[tuple[str, bool]] = []

    def __getattr__(self, name):
        return getattr(self._sandbox, name)

    async def exec(self, argv, **kw):
        self.asked.append((" ".join(argv[:3]), kw.pop("egress", True)))
        return await self._sandbox.exec(argv, **kw)


@pytest.mark.anyio
async def test_discovery_makes_no_network_call(tmp_path, cli):
    """Discovery (plugin install, prompt-input, app-server) asks for no way out at all, and even
    given the egress proxy's forwarder it tries no host: Codex's curated-plugins sync (git ls-remote
    github.com, then api.github.com and chatgpt.com) is never attempted, and the plugin still installs."""
    from pluginbench.environments import Egress

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("starting source\n")
    home = tmp_path / "home"
    t = FrozenTreatment("workflow", tmp_path, (), (), (plugin(tmp_path),), "w")
    harness = CodexHarness(cli, "0.169.0", "http://127.0.0.1:9")  # discovery calls no model
    harness.deliver(t, home)

    async def launched(argv):
        raise AssertionError("discovery launched the agent")

    ctx = AttemptContext("run", "att", task(tmp_path, "Do the task."), t, "gpt-5.5", "medium", 1, 120.0,
                         tmp_path / "attempt", launched)
    (tmp_path / "attempt").mkdir()
    spec = SandboxSpec("run", "att", "coding", "t", workspace=ws, home=home, readonly=harness.readonly,
                       egress=Egress("proxy", hosts=("api.openai.com",)))
    async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
        require(sb.egress is not None, "bubblewrap (an egress proxy needs an isolated sandbox)")
        spy = _ForwardedAnyway(sb)
        receipt, _ = await harness.discover(spy, ctx)
        refused = sb.egress.refused
    assert receipt["ok"], receipt.get("mismatches")
    assert spy.asked and not any(egress for _, egress in spy.asked), spy.asked
    assert receipt["plugins"] == ["starter@pluginbench-local"]
    assert refused == []  # before: ['github.com is not on the allow-list'] (and api.github.com, chatgpt.com)


class _Starts:
    """The sandbox, with the argv of every command it was asked to run."""

    def __init__(self, sandbox) -> None:
        self._sandbox = sandbox
        self.argvs: list[list[str]] = []

    def __getattr__(self, name):
        return getattr(self._sandbox, name)

    async def exec(self, argv, **kw):
        self.argvs.append(list(argv))
        return await self._sandbox.exec(argv, **kw)


async def stored_attempt(tmp: Path, cli: Path, store, name: str, run_id: str, *, isolation: str = "auto"):
    """One vanilla attempt of run ``run_id`` with its own probe server (a new port) and a new
    harness object sharing ``store``: (its receipt, the Codex starts it made, its attempt folder)."""
    root = tmp / name
    (root / "ws").mkdir(parents=True)
    (root / "ws" / "README.md").write_text("starting source\n")
    vanilla = FrozenTreatment("vanilla", None, (), (), (), "v")
    with ProbeServer(load_scenario(SCENARIOS / "edit-file.yaml")) as probe:
        harness = CodexHarness(cli, "0.169.0", probe.base_url, store=store)
        harness.deliver(vanilla, root / "home")

        async def launched(argv):
            pass

        ctx = AttemptContext(run_id, name, task(root, "Do the task."), vanilla, "gpt-5.5", "medium", 1, 120.0,
                             root / "attempt", launched)
        spec = SandboxSpec(run_id, name, "coding", "t", workspace=root / "ws", home=root / "home",
                           readonly=harness.readonly, egress=harness.egress("coding", None))
        async with LocalEnvironment(isolation=isolation).sandbox(spec) as sb:
            if isolation != "none":
                require(sb.isolated, "bubblewrap (the store is read only from isolated sandboxes)")
            spy = _Starts(sb)
            run = await harness.run(spy, ctx)
        probe.wait_idle(timeout=60)
    assert run.error is None, run.error
    starts = [a for a in spy.argvs if a and a[0] == harness.native.exe]
    return json.loads((root / "attempt" / "native-treatment.json").read_text()), starts, root / "attempt"


@pytest.mark.anyio
async def test_a_later_run_reuses_stored_discovery_answers_and_damaged_ones_are_dropped(tmp_path, cli):
    """A later run (new harness, new probe port) judges the stored discovery answers again and starts Codex
    once, the entry copied into the attempt with its origin run named; answers that fail today's judging
    are dropped and the attempt discovers afresh; an unisolated sandbox neither reads nor writes the store."""
    from pluginbench.harnesses._discovery_store import DiscoveryStore

    store = DiscoveryStore(tmp_path / "store" / "codex")
    first, starts, _ = await stored_attempt(tmp_path, cli, store, "first", "r1")
    assert first["ok"] and first["cache"]["hit"] is False
    assert first["cache"]["store"] == {"read": "miss", "reason": None, "written": True}
    assert sorted(a[1] for a in starts) == ["debug", "exec"]  # + the app-server session, started by sh
    (entry_file,) = store.folder.glob("*.json")

    later, starts, adir = await stored_attempt(tmp_path, cli, store, "later", "r2")
    assert later["ok"] and later["cache"]["key"] == first["cache"]["key"]
    assert later["cache"]["hit"] is True and (later["cache"]["origin_run"], later["cache"]["origin_attempt"]) \
        == ("r1", "first") and later["cache"]["store"]["read"] == "hit"
    assert [a[1] for a in starts] == ["exec"]  # no prompt-input, no app-server: the coding launch only
    assert json.loads((adir / "agent" / "discovery.origin.json").read_text()) == json.loads(entry_file.read_text())

    # Damaged (same owner, same mode): the stored input now carries a global AGENTS.md vanilla never declared.
    entry = json.loads(entry_file.read_text())
    prompt = json.loads(entry["prompt_input"])
    prompt.insert(0, {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
                      "# AGENTS.md instructions for /app\n\n<INSTRUCTIONS>\nplanted\n</INSTRUCTIONS>"}]})
    entry["prompt_input"] = json.dumps(prompt)
    entry_file.write_text(json.dumps(entry))
    damaged, starts, _ = await stored_attempt(tmp_path, cli, store, "damaged", "r3")
    assert damaged["ok"] and damaged["cache"]["hit"] is False and damaged["cache"]["store"]["read"] == "refused"
    assert "vanilla arm loaded a global AGENTS.md" in damaged["cache"]["store"]["reason"]
    assert sorted(a[1] for a in starts) == ["debug", "exec"]  # discovered again
    assert json.loads(entry_file.read_text())["origin"] == {"run": "r3", "attempt": "damaged"}  # replaced

    entry = json.loads(entry_file.read_text())
    entry["prompt_input"] = "not JSON"
    entry_file.write_text(json.dumps(entry))
    unreadable, starts, _ = await stored_attempt(tmp_path, cli, store, "unreadable", "r4")
    assert unreadable["ok"] and unreadable["cache"]["store"]["read"] == "refused"
    assert "printed no JSON" in unreadable["cache"]["store"]["reason"] and sorted(a[1] for a in starts) == ["debug", "exec"]

    entry_file.unlink()
    open_, starts, _ = await stored_attempt(tmp_path, cli, store, "open", "r5", isolation="none")
    assert open_["cache"]["store"] == {"read": "off", "reason": "the sandbox is not isolated", "written": False}
    assert sorted(a[1] for a in starts) == ["debug", "exec"] and list(store.folder.glob("*.json")) == []
