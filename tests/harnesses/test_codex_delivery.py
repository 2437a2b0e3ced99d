"""Codex delivery layout, pinned config/argv, Codex admission rules and the discovery comparison."""

from __future__ import annotations

import json
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from pluginbench.errors import InputError, TreatmentError
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._codex_config import (
    APP_SERVER_SCRIPT,
    OFFLINE_PROXY,
    app_server_requests,
    exec_argv,
    launch_env,
    offline_env,
)
from pluginbench.harnesses._codex_discovery import Expected, ExpectedPlugin, compare
from pluginbench.harnesses._port import FrozenTreatment
from pluginbench.probe._launch import PROBE_OPENAI_KEY
from pluginbench.treatments._codex_rules import installed_command, read_codex_plugin

PROBE = "http://127.0.0.1:45678"


def make_skill(root: Path, name: str = "my-skill") -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: test skill\n---\nBody.\n")
    (d / "scripts").mkdir()
    (d / "scripts" / "run.sh").write_text("echo hi\n")
    (d / "scripts" / "run.sh").chmod(0o755)
    return d


def make_plugin(root: Path, hooks: dict | None = None, name: str = "pa") -> Path:
    d = root / name
    (d / ".codex-plugin").mkdir(parents=True)
    (d / ".codex-plugin" / "plugin.json").write_text(json.dumps({"name": name, "version": "1.0.0", "description": "d"}))
    make_skill(d / "skills", "ps")
    if hooks is not None:
        (d / "hooks").mkdir()
        (d / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return d


def session_start(command: str, **extra: object) -> dict:
    return {"SessionStart": [{"hooks": [{"type": "command", "command": command, "timeout": 30, **extra}]}]}


def test_vanilla_probe_home_has_only_config(tmp_path):
    """Vanilla in probe mode writes config.toml alone: no AGENTS.md, skills, marketplace or auth.json."""
    home = tmp_path / "home"
    receipt = CodexHarness("/x/codex", "0.169.0", PROBE).deliver(FrozenTreatment("vanilla", None, (), (), (), "f"), home)
    files = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert files == [".codex/config.toml"]
    assert receipt["agents_md"] is None and receipt["probe"] is True


def test_probe_config_toml_selects_loopback_provider_and_disables_catalog(tmp_path):
    """config.toml pins approval, enables Code Mode, disables apps and the remote plugin catalog, and selects the probe provider."""
    home = tmp_path / "home"
    CodexHarness("/x/codex", "0.169.0", PROBE).deliver(FrozenTreatment("vanilla", None, (), (), (), "f"), home)
    cfg = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert cfg["features"] == {"apps": False, "remote_plugin": False, "code_mode": True,
                               "multi_agent_v2": {"expose_spawn_agent_model_overrides": False}}
    assert cfg["approval_policy"] == "never" and cfg["check_for_update_on_startup"] is False
    assert cfg["analytics"] == {"enabled": False}
    provider = cfg["model_providers"][cfg["model_provider"]]
    assert provider["base_url"] == PROBE + "/v1" and provider["wire_api"] == "responses"
    assert PROBE_OPENAI_KEY not in (home / ".codex" / "config.toml").read_text()


def test_real_mode_keeps_the_credential_out_of_the_delivered_home(tmp_path):
    """A real run delivers no auth.json into the saved home and sets no custom provider."""
    host = tmp_path / "host-codex"
    host.mkdir()
    (host / "auth.json").write_text('{"auth_mode":"chatgpt"}')
    (host / "config.toml").write_text('model = "host-model"\n[mcp_servers.x]\ncommand = "x"\n')
    home = tmp_path / "home"
    receipt = CodexHarness("/x/codex", "0.169.0", host_codex_home=host).deliver(
        FrozenTreatment("vanilla", None, (), (), (), "f"), home)
    assert not (home / ".codex" / "auth.json").exists()
    text = (home / ".codex" / "config.toml").read_text()
    assert "host-model" not in text and "mcp_servers" not in text and "model_provider" not in text
    assert "session only" in receipt["credential"]


@pytest.mark.anyio
async def test_real_mode_puts_the_credential_into_the_sandbox_privately(tmp_path):
    """The host auth.json is copied into the sandbox's private CODEX_HOME with mode 600, and its values are scanned for."""
    from pluginbench.environments import LocalEnvironment, SandboxSpec

    host = tmp_path / "host-codex"
    host.mkdir()
    (host / "auth.json").write_text('{"tokens": {"access_token": "tok-0123456789abcdefghij"}}')
    harness = CodexHarness("/x/codex", "0.169.0", host_codex_home=host)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    spec = SandboxSpec(run_id="r", attempt_id="a", role="coding", task="t", workspace=ws)
    async with LocalEnvironment(isolation="none").sandbox(spec) as sb:
        target = await harness._put_credential(sb)
        copied = Path(target)
        assert copied.read_text() == (host / "auth.json").read_text()
        assert copied.stat().st_mode & 0o777 == 0o600
    assert harness.secrets() == ["tok-0123456789abcdefghij"]


def test_real_mode_without_host_credentials_is_refused(tmp_path):
    """A real run with no host auth.json is refused before anything starts."""
    with pytest.raises(InputError, match="no Codex credentials"):
        CodexHarness("/x/codex", "0.169.0", host_codex_home=tmp_path / "none").deliver(
            FrozenTreatment("vanilla", None, (), (), (), "f"), tmp_path / "home")


def test_treatment_delivers_agents_md_skill_tree_and_marketplace(tmp_path):
    """Guidance becomes AGENTS.md, skills keep their whole tree and modes, plugins land in the private marketplace."""
    g1, g2 = tmp_path / "a.md", tmp_path / "b.md"
    g1.write_text("# A\nalpha\n")
    g2.write_text("# B\nbeta\n")
    skill = make_skill(tmp_path / "skills")
    plugin = make_plugin(tmp_path / "plugins", session_start("sh ${PLUGIN_ROOT}/x.sh"))
    home = tmp_path / "home"
    t = FrozenTreatment("core", tmp_path, (g1, g2), (skill,), (plugin,), "f")
    receipt = CodexHarness("/x/codex", "0.169.0", PROBE).deliver(t, home)
    assert (home / ".codex" / "AGENTS.md").read_text() == "# A\nalpha\n\n\n# B\nbeta\n"
    run_sh = home / ".codex" / "skills" / "my-skill" / "scripts" / "run.sh"
    assert run_sh.read_text() == "echo hi\n" and run_sh.stat().st_mode & 0o111
    market = json.loads((home / ".pluginbench-market" / ".agents" / "plugins" / "marketplace.json").read_text())
    assert market["plugins"] == [{"name": "pa", "source": {"source": "local", "path": "./plugins/pa"}}]
    assert (home / ".pluginbench-market" / "plugins" / "pa" / ".codex-plugin" / "plugin.json").is_file()
    assert receipt["plugins"] == [{"name": "pa", "version": "1.0.0", "skills": ["pa:ps"]}]


def test_pinned_argv_and_env():
    """The launch argv is exec --json with the model, effort, no approval flag and the prompt after --."""
    argv = exec_argv("/c/codex", workdir="/app", model="gpt-5.5", reasoning="high", prompt="-fix it", bypass_hook_trust=False)
    assert argv == ["/c/codex", "exec", "--json", "--strict-config", "--skip-git-repo-check", "-C", "/app",
                    "-m", "gpt-5.5", "-c", 'model_reasoning_effort="high"', "--", "-fix it"]
    env = launch_env(home="/home/agent", tmp="/tmp")
    assert env["CODEX_HOME"] == "/home/agent/.codex" and env["TMPDIR"] == "/tmp"
    with pytest.raises(ValueError, match="TMPDIR"):
        launch_env(home="/tmp/x/home", tmp="/tmp/x/home")


def test_plugin_admission_reads_skills_and_hooks(tmp_path):
    """An admitted plugin lists its skills as plugin:skill and hooks with the root substituted on install."""
    p = read_codex_plugin(make_plugin(tmp_path, session_start("sh ${CLAUDE_PLUGIN_ROOT}/hooks/x.sh")))
    assert (p.name, p.version, p.skills) == ("pa", "1.0.0", ("pa:ps",))
    assert installed_command(p.hooks[0][1], "/r") == "sh /r/hooks/x.sh"


@pytest.mark.parametrize(
    ("hooks", "rule"),
    [
        (session_start("sh ${PLUGIN_DATA}/x.sh"), "PLUGIN_DATA"),
        (session_start("sh ${CLAUDE_PLUGIN_DATA}/x.sh"), "PLUGIN_DATA"),
        (session_start("sh x.sh", **{"async": True}), "asynchronous"),
        ({"SessionStart": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}, "non-command"),
    ],
)
def test_plugin_admission_refuses_bad_hooks(tmp_path, hooks, rule):
    """Hook commands naming the plugin data folder, async hooks and non-command hooks are refused."""
    with pytest.raises(TreatmentError, match=rule):
        read_codex_plugin(make_plugin(tmp_path, hooks))


def test_plugin_admission_refuses_missing_manifest_and_mcp(tmp_path):
    """A plugin without .codex-plugin/plugin.json, or one declaring MCP servers, is refused."""
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "README.md").write_text("x")
    with pytest.raises(TreatmentError, match="plugin.json"):
        read_codex_plugin(bare)
    mcp = make_plugin(tmp_path / "m")
    (mcp / ".mcp.json").write_text("{}")
    with pytest.raises(TreatmentError, match="unsupported .mcp.json"):
        read_codex_plugin(mcp)


def _results(skills: list[dict], hooks: list[dict], plugins: list[str]) -> dict:
    return {
        2: {"data": [{"cwd": "/app", "skills": skills}]},
        3: {"data": [{"cwd": "/app", "hooks": hooks}]},
        4: {"marketplaces": [{"plugins": [{"id": p, "installed": True, "enabled": True} for p in plugins]}]},
    }


SYSTEM = {"name": "imagegen", "scope": "system", "path": "/h/.codex/skills/.system/imagegen/SKILL.md", "pluginId": None}


def offering(*names: str) -> list[dict]:
    """A rendered model input whose skills section offers ``names`` (as Codex 0.169.0 renders it)."""
    lines = "\n".join(f"- {n}: does {n}. (file: r0/{n}/SKILL.md)" for n in names)
    text = f"## Skills\n### Available skills\n{lines}\n### How to use skills\n- Discovery: the list above."
    return [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}]


def test_compare_vanilla_accepts_builtins_and_refuses_an_extra_skill():
    """Vanilla with only built-in skills matches; an undeclared user skill is a mismatch."""
    empty = Expected(None, (), ())
    ok = compare(empty, offering("imagegen"), _results([SYSTEM], [], []))
    assert ok["ok"] and ok["ambient_skills"] == ["system:imagegen"]
    extra = {"name": "sneaky", "scope": "user", "path": "/h/.agents/skills/sneaky/SKILL.md", "pluginId": None}
    bad = compare(empty, offering("imagegen", "sneaky"), _results([SYSTEM, extra], [], []))
    assert not bad["ok"] and "sneaky" in bad["mismatches"][0]


def test_compare_guidance_must_be_the_loaded_agents_md():
    """The declared guidance must equal the loaded global AGENTS.md; vanilla must load none."""
    block = [{"type": "message", "content": [{"type": "input_text", "text": "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nG\n</INSTRUCTIONS>"}]}]
    assert compare(Expected("G\n", (), ()), block, _results([], [], []))["ok"]
    assert not compare(Expected("H\n", (), ()), block, _results([], [], []))["ok"]
    assert not compare(Expected(None, (), ()), block, _results([], [], []))["ok"]
    assert not compare(Expected("G\n", (), ()), [], _results([], [], []))["ok"]


def test_compare_plugin_skills_hooks_and_install_state():
    """Plugin skills, hooks (root substituted) and the installed plugin id must all match the declaration."""
    plugin = ExpectedPlugin("pa@pluginbench-local", "/r", ("pa:ps",), (("sessionstart", "sh /r/x.sh"),))
    exp = Expected(None, (), (plugin,))
    skill = {"name": "pa:ps", "scope": "user", "path": "/r/skills/ps/SKILL.md", "pluginId": "pa@pluginbench-local"}
    hook = {"pluginId": "pa@pluginbench-local", "eventName": "sessionStart", "command": "sh /r/x.sh", "handlerType": "command", "async": False}
    assert compare(exp, offering("pa:ps"), _results([skill], [hook], ["pa@pluginbench-local"]))["ok"]
    wrong = dict(hook, command="sh /other/x.sh")
    assert not compare(exp, offering("pa:ps"), _results([skill], [wrong], ["pa@pluginbench-local"]))["ok"]
    assert not compare(exp, offering("pa:ps"), _results([skill], [hook], []))["ok"]
    missing = compare(exp, offering("pa:ps"), {2: _results([skill], [], [])[2]})
    assert any("hooks/list gave no answer" in m for m in missing["mismatches"])


def test_receipt_lists_only_the_skills_the_model_was_offered():
    """An installed system skill the rendered input leaves out is not in the receipt, and a declared
    skill the input leaves out is a mismatch."""
    review = dict(SYSTEM, name="review-agent", path="/h/.codex/skills/.system/review-agent/SKILL.md")
    ok = compare(Expected(None, (), ()), offering("imagegen"), _results([SYSTEM, review], [], []))
    assert ok["ok"] and ok["ambient_skills"] == ["system:imagegen"] and ok["offered_skills"] == ["imagegen"]
    mine = {"name": "mine", "scope": "user", "path": "/h/.agents/skills/mine/SKILL.md", "pluginId": None}
    hidden = compare(Expected(None, (("mine", mine["path"]),), ()), offering("imagegen"), _results([SYSTEM, mine], [], []))
    assert not hidden["ok"] and any("not offered to the model: ['mine']" in m for m in hidden["mismatches"])


def test_offline_env_keeps_the_launch_env_and_closes_every_way_out() -> None:
    """Discovery's environment is the launch's, plus git limited to local repositories and every
    HTTP proxy variable on a refusing loopback port with no exception list (nothing else changes)."""
    base = launch_env(home="/home/agent", tmp="/tmp", extra={"HTTPS_PROXY": "http://127.0.0.1:3128", "K": "v"})
    out = offline_env(base)
    assert {k: v for k, v in out.items() if k in base and k != "HTTPS_PROXY"} == {
        k: v for k, v in base.items() if k != "HTTPS_PROXY"}
    assert out["GIT_ALLOW_PROTOCOL"] == "file"
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        assert out[name] == OFFLINE_PROXY
    assert out["NO_PROXY"] == out["no_proxy"] == ""
    assert OFFLINE_PROXY.startswith("http://127.0.0.1:")
    assert base["HTTPS_PROXY"] == "http://127.0.0.1:3128"  # the caller's mapping is not changed


#: A stand-in for ``codex app-server`` (its argument ignored): answers every request with an id
#: as the real one prints it, then says when it saw EOF on stdin; ``dies`` exits at once instead.
_FAKE_SERVER = {
    "answers": 'while IFS= read -r l; do id=$(printf %s "$l" | sed -n \'s/.*"id": \\([0-9]*\\).*/\\1/p\'); '
               '[ -n "$id" ] && printf \'{"id":%s,"result":{}}\\n\' "$id"; done; echo \'{"method":"eof"}\'',
    "dies": "echo '{\"id\":1,\"result\":{}}'; exit 3",
}


@pytest.mark.parametrize("server", list(_FAKE_SERVER))
def test_app_server_script_closes_stdin_once_answered_and_never_hangs(tmp_path: Path, server: str) -> None:
    """Discovery's app-server script closes the server's stdin as soon as ids 2-4 are answered (not
    at its 30 s cap), prints all the server wrote, leaves no FIFO behind, and ends when the server dies."""
    fake = tmp_path / "codex"
    fake.write_text(f"#!/bin/sh\n{_FAKE_SERVER[server]}\n")
    fake.chmod(0o755)
    requests = "".join(json.dumps(r) + "\n" for r in app_server_requests("/app"))
    started = time.monotonic()
    done = subprocess.run(["sh", "-c", APP_SERVER_SCRIPT, "sh", requests, str(tmp_path / "out.jsonl"), str(fake)],
                          capture_output=True, text=True, timeout=25)
    assert time.monotonic() - started < 10
    ids = [json.loads(line).get("id") for line in done.stdout.splitlines()]
    if server == "answers":
        assert done.returncode == 0 and ids == [1, 2, 3, 4, None]  # None: the server saw EOF after answering
        assert done.stdout.splitlines()[-1] == '{"method":"eof"}'
    else:
        assert ids == [1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["codex", "out.jsonl"]
