"""Pure parts of the opencode harness: discovery receipt, usage validation, provider stops,
private config and launch (no CLI, no sockets; real 1.18.33 samples in data/opencode-1.18.33)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pluginbench.config import Capabilities, load
from pluginbench.errors import ConfigError
from pluginbench.harnesses._opencode import OpencodeHarness, seed_plugin_manifest
from pluginbench.harnesses._opencode_config import (
    SEPARATOR,
    config_json,
    discovery_script,
    exec_argv,
    launch_env,
)
from pluginbench.harnesses._opencode_trace import (
    classify_provider_stop,
    compare,
    read_discovery,
    read_stream,
    validate_usage,
)
from pluginbench.harnesses._port import FrozenTreatment
from pluginbench.probe import bundled_scenario, choose
from pluginbench.probe._match import request_cwd

DATA = Path(__file__).parent / "data" / "opencode-1.18.33"
HOME = "/home/agent"
CFG = f"{HOME}/.config/opencode"


def _discovery(skills: list[dict], files: list[str], config: dict | None = None, config_dir: str = CFG) -> str:
    paths = f"home       {HOME}\nconfig     {config_dir}\n"
    return f"\n{SEPARATOR}\n".join([paths, json.dumps(skills), json.dumps(config or {"plugin": []}), "\n".join(files)])


BUILTIN = {"name": "customize-opencode", "location": "<built-in>"}
SKILL = {"name": "careful-edits", "location": f"{CFG}/skills/careful-edits/SKILL.md"}


@pytest.mark.parametrize(("skills", "files", "config", "guidance", "declared", "expect"), [
    ([BUILTIN, SKILL], [f"{CFG}/AGENTS.md"], None, True, ("careful-edits",), []),
    ([BUILTIN], [], None, False, (), []),
    ([BUILTIN], [f"{CFG}/AGENTS.md"], None, False, (), ["would load but the arm declares no guidance"]),
    ([BUILTIN], [], None, True, (), ["is not there to load"]),
    ([BUILTIN], [f"{HOME}/.claude/CLAUDE.md"], None, False, (), ["from outside the treatment"]),
    ([BUILTIN, {"name": "x", "location": f"{HOME}/.agents/skills/x/SKILL.md"}], [], None, False, (),
     ["skill 'x' loads from outside the treatment"]),
    ([BUILTIN], [], None, False, ("careful-edits",), ["the declared skill 'careful-edits' did not load"]),
    ([BUILTIN], [], {"plugin": ["evil@1"]}, False, (), ["sets plugin"]),
    ([BUILTIN], [], {"instructions": ["~/x.md"]}, False, (), ["sets instructions"]),
])
def test_discovery_receipt_flags_exactly_what_differs_from_the_declaration(skills, files, config, guidance, declared,
                                                                          expect):
    """The receipt passes only when the global AGENTS.md and the skills are exactly the arm's; anything else is named."""
    receipt = compare(read_discovery(_discovery(skills, files, config)), home=HOME, workdir="/app",
                      guidance=guidance, skills=declared)
    assert receipt["ok"] == (not expect)
    assert len(receipt["mismatches"]) == len(expect)
    for needle, got in zip(expect, receipt["mismatches"], strict=True):
        assert needle in got
    assert receipt["cli_skills"] == ["customize-opencode"] and receipt["model_calls"] == 0
    assert "no model call" in receipt["how"]["skills"] and "lookup rule" in receipt["how"]["instructions"]


def test_task_owned_skill_is_recorded_not_a_mismatch_and_a_foreign_config_dir_is():
    """A skill from the task repository is the task's own; a config folder other than the private one is a mismatch."""
    task_skill = {"name": "repo-skill", "location": "/app/.opencode/skills/repo-skill/SKILL.md"}
    receipt = compare(read_discovery(_discovery([BUILTIN, task_skill], [])), home=HOME, workdir="/app",
                      guidance=False, skills=())
    assert receipt["ok"] and receipt["task_owned"] == {"skills": ["repo-skill"]}
    other = compare(read_discovery(_discovery([BUILTIN], [], config_dir="/root/.config/opencode")), home=HOME,
                    workdir="/app", guidance=False, skills=())
    assert not other["ok"] and "config folder" in other["mismatches"][0]


def test_garbled_discovery_output_is_a_mismatch_not_a_pass():
    """Output without the four sections or without JSON fails the receipt."""
    assert not compare(read_discovery("nothing"), home=HOME, workdir="/app", guidance=False, skills=())["ok"]
    bad = f"config {CFG}\n{SEPARATOR}\nnot json\n{SEPARATOR}\n{{}}\n{SEPARATOR}\n"
    assert not compare(read_discovery(bad), home=HOME, workdir="/app", guidance=False, skills=())["ok"]


def _sample() -> tuple[str, dict[str, str]]:
    stdout = (DATA / "edit-file.stdout.jsonl").read_text()
    export = (DATA / "edit-file.export.json").read_text()
    return stdout, {read_stream(stdout).session_id or "": export}


def test_real_session_usage_is_exact_and_equals_what_the_probe_served():
    """The recorded 1.18.33 session's three records agree and sum to the edit-file scenario's served usage."""
    stdout, exports = _sample()
    u = validate_usage(stdout, exports, timed_out=False)
    assert u.status == "exact", u.reason
    # edit-file's opencode rule: (1200, 40, 300, 8), (1300, 30, 350, 5), then the final (1500, 12, 400, 0)
    assert (u.input_tokens, u.output_tokens, u.cached_input_tokens, u.reasoning_output_tokens) == (
        1200 + 1300 + 1500, 40 + 30 + 12, 300 + 350 + 400, 8 + 5)
    assert u.uncached_input_tokens == 4000 - 1050 and u.total_tokens == 4000 + 82


def _tamper(export: str, f) -> str:
    data = json.loads(export)
    f(data)
    return json.dumps(data)


@pytest.mark.parametrize(("change", "reason"), [
    (lambda d: d["info"]["tokens"].update(output=1), "session total"),
    (lambda d: d["messages"][1]["info"]["tokens"].update(input=1), "disagree"),
    (lambda d: d["messages"][1]["info"].pop("tokens"), "disagree"),
    (lambda d: d["messages"].pop(), "answer(s)"),
])
def test_usage_is_unknown_with_a_reason_when_the_records_disagree(change, reason):
    """Any disagreement between stdout, the stored answers and the session total makes usage unknown, never zero."""
    stdout, exports = _sample()
    sid = next(iter(exports))
    u = validate_usage(stdout, {sid: _tamper(exports[sid], change)}, timed_out=False)
    assert u.status == "unknown" and reason in (u.reason or "") and u.input_tokens is None


def test_an_answer_without_usage_missing_export_or_timeout_is_unknown():
    """Zeros stored for an answer, no export, or a timeout give unknown usage with the reason."""
    stdout, exports = _sample()
    sid = next(iter(exports))
    zero = '"tokens":{"total":0,"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}}'
    z_stdout = stdout.replace(
        '"tokens":{"total":1512,"input":1100,"output":12,"reasoning":0,"cache":{"write":0,"read":400}}', zero)

    def zero_last(d):
        d["messages"][-1]["info"]["tokens"] = {"total": 0, "input": 0, "output": 0, "reasoning": 0,
                                               "cache": {"write": 0, "read": 0}}
        d["info"]["tokens"] = {"input": 1850, "output": 57, "reasoning": 13, "cache": {"read": 650, "write": 0}}

    u = validate_usage(z_stdout, {sid: _tamper(exports[sid], zero_last)}, timed_out=False)
    assert u.status == "unknown" and "carried no usage" in (u.reason or "")
    assert validate_usage(stdout, {}, timed_out=False).status == "unknown"
    assert validate_usage(stdout, exports, timed_out=True).status == "unknown"


def test_a_429_is_a_provider_stop_and_other_errors_are_not():
    """The recorded quota 429 is a rate-limit provider stop; a tool error or a clean session is not."""
    stdout = (DATA / "quota-exhausted.stdout.jsonl").read_text()
    stop = classify_provider_stop(stdout, timed_out=False)
    assert stop is not None and stop.startswith("rate limited (HTTP 429)") and "quota" in stop
    assert validate_usage(stdout, {}, timed_out=False).status == "unknown"
    other = json.dumps({"type": "error", "sessionID": "s", "error": {"name": "UnknownError", "data": {"message": "x"}}})
    assert classify_provider_stop(other, timed_out=False) is None
    auth = json.dumps({"type": "error", "sessionID": "s", "error": {"name": "APIError", "data": {"statusCode": 401}}})
    assert (classify_provider_stop(auth, timed_out=False) or "").startswith("authentication refused")
    assert classify_provider_stop(_sample()[0], timed_out=False) is None


def test_private_config_names_one_provider_reads_the_key_from_the_environment_and_denies_task_when_off():
    """The config holds the endpoint and model but never the key; sub-agents off denies the task tool."""
    cfg = json.loads(config_json(base_url="http://127.0.0.1:5/v1", model="m", capabilities=Capabilities()))
    assert cfg["model"] == "pluginbench/m" and cfg["enabled_providers"] == ["pluginbench"]
    assert cfg["provider"]["pluginbench"]["options"] == {"baseURL": "http://127.0.0.1:5/v1",
                                                         "apiKey": "{env:OPENAI_API_KEY}"}
    assert cfg["share"] == "disabled" and cfg["autoupdate"] is False and "permission" not in cfg
    off = json.loads(config_json(base_url="u", model="m", capabilities=Capabilities(subagents=False)))
    assert off["permission"] == {"task": "deny"}
    argv = exec_argv("opencode", model="m")
    assert argv[:4] == ["opencode", "run", "--format", "json"] and "--title" in argv and "--auto" in argv
    assert discovery_script("/x/opencode")[-1] == "/x/opencode"
    env = launch_env(home="/h", tmp="/t", key="k")
    assert env["XDG_CONFIG_HOME"] == "/h/.config" and env["OPENCODE_DISABLE_MODELS_FETCH"] == "1"


def test_vanilla_delivery_writes_config_only_and_plugins_are_refused(tmp_path):
    """Vanilla gets the private config and the seeded plugin manifest, no AGENTS.md or skill; plugins are refused."""
    harness = OpencodeHarness("/nonexistent/opencode", "1.18.33", "http://127.0.0.1:5", model="m")
    receipt = harness.deliver(FrozenTreatment("vanilla", None, (), (), (), "v"), tmp_path)
    folder = tmp_path / ".config" / "opencode"
    assert sorted(p.name for p in folder.iterdir()) == ["node_modules", "opencode.json", "package-lock.json",
                                                        "package.json"]
    assert receipt["agents_md"] is None and receipt["skills"] == []
    assert "pluginbench-probe" not in (folder / "opencode.json").read_text()
    seed_plugin_manifest(folder)  # idempotent
    ev = SimpleNamespace(treatments={"p": SimpleNamespace(plugins=["x"], guidance=[], skills=[])})
    with pytest.raises(ConfigError, match="opencode .* has no Claude Code or Codex plugins"):
        OpencodeHarness.admit_evaluation(ev, probe=True)


def test_probe_scenarios_script_opencode_and_find_its_working_directory():
    """edit-file and guided have opencode rules (bash/write), matched by its offered tools; its <env> cwd is read."""
    body = {"messages": [{"role": "system", "content": "<env>\n  Working directory: /app\n</env>"},
                         {"role": "user", "content": "go"}],
            "tools": [{"type": "function", "function": {"name": n}} for n in ("bash", "edit", "write", "read")]}
    assert request_cwd("chat", body) == "/app"
    assert choose(bundled_scenario("edit-file"), "chat", body).rule_name == "opencode"
    assert choose(bundled_scenario("guided"), "chat", body).rule_name == "opencode-vanilla"


def test_capability_policy_enforces_subagents_only_and_launch_identity_is_pinned():
    """Sub-agents on/off is enforced (the task tool); threads, depth and child model are not applicable; the cache key binds the argv."""
    off = OpencodeHarness.capability_policy(Capabilities(subagents=False, max_depth=2))
    assert off["subagents"]["enforcement"] == "enforced" and "denied" in off["subagents"]["how"]
    assert {off[k]["enforcement"] for k in ("max_threads", "max_depth", "child_model")} == {"not_applicable"}
    ident = OpencodeHarness.launch_identity("gpt-4.1", "low")
    assert ident["argv"][:2] == ["<cli>", "run"] and ident["stdin"] == "<prompt>"
    assert ident["discovery"]["receipt"] == "pluginbench.opencode.native-treatment/1"


def test_an_effort_is_the_model_option_and_cache_key_and_max_is_refused_naming_opencode(tmp_path):
    """runner.reasoning becomes the model's reasoningEffort option and part of the launch
    identity (no effort: neither changes), and an effort OpenAI has no value for is refused
    when the config loads, naming opencode and runner.reasoning."""
    def model_entry(reasoning):
        cfg = config_json(base_url="u", model="m", capabilities=Capabilities(), reasoning=reasoning)
        return json.loads(cfg)["provider"]["pluginbench"]["models"]["m"]

    assert model_entry(None) == {"name": "m"}
    assert model_entry("high") == {"name": "m", "options": {"reasoningEffort": "high"}}
    assert "reasoning_effort" not in OpencodeHarness.launch_identity("m", None)
    assert OpencodeHarness.launch_identity("m", "xhigh")["reasoning_effort"] == "xhigh"
    quickstart = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
    path = tmp_path / "evaluation.yaml"
    path.write_text(json.dumps({"name": "x", "tasks": {"source": str(quickstart / "tasks"), "ids": ["roman-numerals"]},
                                "runner": {"harness": "opencode", "model": "gpt-4.1", "reasoning": "max"}}))
    with pytest.raises(ConfigError, match="opencode sends the effort as the OpenAI reasoning_effort") as refused:
        load(path)
    assert refused.value.field == "runner.reasoning" and "xhigh" in (refused.value.fix or "")
