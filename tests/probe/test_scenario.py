"""Pure tests of scenario loading, request inspection, rule matching and step selection."""

from __future__ import annotations

import pytest

from pluginbench.errors import InputError
from pluginbench.probe import (
    PROBE_ANTHROPIC_KEY,
    PROBE_OPENAI_KEY,
    PROBE_TOKENS,
    SCENARIOS_DIR,
    ScenarioError,
    StepUsage,
    assistant_turns,
    bundled_scenario,
    choose,
    is_coding,
    launch_env,
    load_scenario,
)
from pluginbench.probe._match import credential_of, looks_real, request_cwd, substitute_cwd

from ._client import anthropic_body, responses_body, rinput, user

SCEN = {
    "name": "t",
    "final": {"text": "the end", "usage": {"input_tokens": 9, "output_tokens": 1}},
    "rules": [
        {"name": "marked", "when": {"messages_contain": "MARK"},
         "script": [{"text": "marked-0"}, {"text": "marked-1"}]},
        {"name": "sys", "when": {"system_contains": "SYSNEEDLE"}, "script": [{"text": "sys-0"}]},
        {"name": "model", "when": {"model": "claude-opus-*"}, "script": [{"text": "opus-0"}]},
        {"name": "tool", "when": {"tools_include": "exec_command"}, "script": [{"text": "cx-0"}]},
        {"name": "fallback", "script": [{"tool": {"name": "Bash", "input": {"command": "ls"}}},
                                        {"text": "fb-1"}]},
    ],
}


def _assistant(text: str = "ok") -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def test_every_bundled_scenario_loads() -> None:
    """Each bundled example scenario file parses and validates."""
    names = sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml"))
    assert {"text", "edit-file", "guided", "rate-limit", "auth", "server-error",
            "drop-stream"} <= set(names)
    for name in names:
        assert bundled_scenario(name).rules, name


def test_step_usage_defaults_and_partial_override() -> None:
    """A step's usage fills unspecified counters with the defaults."""
    s = load_scenario({"rules": [{"script": [{"text": "x", "usage": {"output_tokens": 7}}]}]})
    u = s.rules[0].script[0].usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_input_tokens) == (1000, 7, 0)


def test_bare_list_is_rules() -> None:
    """A top-level list is read as the rule list."""
    s = load_scenario([{"script": [{"text": "a"}]}, {"script": [{"text": "b"}]}])
    assert [r.script[0].text for r in s.rules] == ["a", "b"]


@pytest.mark.parametrize("bad, field", [
    ({"rules": [{"script": [{"text": "x", "error": {"status": 429}}]}]}, "rules[0].script[0]"),
    ({"rules": [{"script": [{}]}]}, "rules[0].script[0]"),
    ({"rules": [{"script": [{"error": {"status": 418}}]}]}, "rules[0].script[0].error.status"),
    ({"rules": [{"script": [{"text": "x", "usage": {"input_tokens": -1}}]}]},
     "rules[0].script[0].usage.input_tokens"),
    ({"rules": [{"when": {"api": "grpc"}, "script": []}]}, "rules[0].when.api"),
    ({"rules": [{"script": [{"tool": {"name": "Bash", "input": "ls"}}]}]}, "rules[0].script[0].tool.input"),
])
def test_invalid_scenarios_name_the_field(bad: dict, field: str) -> None:
    """An invalid scenario raises an InputError naming the offending field."""
    with pytest.raises(ScenarioError) as info:
        load_scenario(bad)
    assert isinstance(info.value, InputError)
    assert info.value.field == field


def test_unknown_key_is_refused() -> None:
    """A misspelt key is an error, not silently ignored."""
    with pytest.raises(ScenarioError) as info:
        load_scenario({"rules": [{"script": [{"txt": "typo"}]}]})
    assert "txt" in str(info.value)


def test_missing_file_names_the_file(tmp_path) -> None:
    """Loading a missing file raises an InputError with the path."""
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path / "nope.yaml")
    assert info.value.file == str(tmp_path / "nope.yaml")


def test_anthropic_turns_count_assistant_messages() -> None:
    """The Anthropic turn index is the number of assistant messages."""
    body = anthropic_body([user("a"), _assistant(), user("b"), _assistant(), user("c")])
    assert assistant_turns("anthropic", body) == 2


def test_responses_turns_count_runs_of_model_items() -> None:
    """Reasoning plus several calls in one model turn count once; tool outputs separate turns."""
    inp = [rinput("developer", "sys"), rinput("user", "go"),
           {"type": "reasoning", "summary": []},
           {"type": "function_call", "call_id": "1", "name": "exec_command", "arguments": "{}"},
           {"type": "custom_tool_call", "call_id": "2", "name": "apply_patch", "input": "p"},
           {"type": "function_call_output", "call_id": "1", "output": "x"},
           {"type": "custom_tool_call_output", "call_id": "2", "output": "y"},
           {"type": "function_call", "call_id": "3", "name": "exec_command", "arguments": "{}"},
           {"type": "function_call_output", "call_id": "3", "output": "z"}]
    assert assistant_turns("responses", responses_body(inp)) == 2
    inp.append({"type": "message", "role": "assistant", "content": []})
    assert assistant_turns("responses", responses_body(inp)) == 3


def test_step_follows_turn_index_then_final() -> None:
    """Turn n answers script step n; past the script the final text answers."""
    s = load_scenario(SCEN)
    convo = [user("MARK please")]
    picks = []
    for _ in range(3):
        c = choose(s, "anthropic", anthropic_body(convo))
        picks.append((c.rule_name, c.step_index, c.step.text, c.scripted))
        convo += [_assistant(), user("next")]
    assert picks == [("marked", 0, "marked-0", True), ("marked", 1, "marked-1", True),
                     ("marked", 2, "the end", False)]


def test_first_matching_rule_wins_in_order() -> None:
    """Rules are tried in order and each condition kind selects its rule."""
    s = load_scenario(SCEN)
    assert choose(s, "anthropic", anthropic_body([user("MARK")], system="SYSNEEDLE")).rule_name == "marked"
    assert choose(s, "anthropic", anthropic_body([user("x")], system="SYSNEEDLE")).rule_name == "sys"
    assert choose(s, "anthropic", anthropic_body([user("x")], model="claude-opus-5-5")).rule_name == "model"
    assert choose(s, "responses", responses_body([rinput("user", "x")])).rule_name == "tool"
    assert choose(s, "anthropic", anthropic_body([user("x")])).rule_name == "fallback"


def test_messages_contain_sees_tool_results() -> None:
    """messages_contain matches text inside a tool result, not only user text."""
    s = load_scenario(SCEN)
    msgs = [user("x"), {"role": "assistant", "content": [{"type": "tool_use", "id": "t",
                                                          "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                          "content": "output with MARK inside"}]}]
    assert choose(s, "anthropic", anthropic_body(msgs)).rule_name == "marked"


def test_responses_system_is_developer_messages() -> None:
    """For Responses, system_contains reads developer messages (Codex has no instructions field)."""
    s = load_scenario(SCEN)
    body = responses_body([rinput("developer", "SYSNEEDLE here"), rinput("user", "x")], tools=[
        {"type": "function", "name": "shell"}])
    assert choose(s, "responses", body).rule_name == "sys"


def test_no_rule_matches_answers_final() -> None:
    """Without a matching rule the scenario's final text answers."""
    s = load_scenario({"rules": [{"when": {"model": "nothing"}, "script": [{"text": "x"}]}]})
    c = choose(s, "anthropic", anthropic_body([user("x")]))
    assert (c.rule_index, c.step.text, c.scripted) == (None, "Done.", False)


def test_coding_requests_offer_tools() -> None:
    """A request offering tools is coding; one without (title, quota probe) is side."""
    assert is_coding(anthropic_body([user("x")]))
    assert not is_coding(anthropic_body([user("quota")], tools=False))


def test_cwd_is_read_from_either_cli_prompt() -> None:
    """The working directory is found in Claude Code's and Codex's own prompt text."""
    claude = anthropic_body([user("<env>\nPrimary working directory: /w/a b\nIs git: no")])
    codex = responses_body([rinput("user", "<environment_context>\n  <cwd>/w/cx</cwd>\n")])
    assert request_cwd("anthropic", claude) == "/w/a b"
    assert request_cwd("responses", codex) == "/w/cx"
    assert request_cwd("anthropic", anthropic_body([user("x")])) is None
    assert substitute_cwd({"p": ["{{cwd}}/f"]}, "/w") == {"p": ["/w/f"]}


@pytest.mark.parametrize("cred, real", [
    ("sk-ant-api03-abcdef", True), ("sk-ant-oat01-abcdef", True), ("sk-proj-abc", True),
    ("sk-abc", True), ("eyJhbGciOi.eyJzdWIiOi.sig", True), (PROBE_ANTHROPIC_KEY, False),
    (PROBE_OPENAI_KEY, False), ("dummy", False), (None, False), ("", False),
])
def test_real_credential_shapes(cred: str | None, real: bool) -> None:
    """Keys and tokens shaped like real provider credentials are flagged; the probe's are not."""
    assert looks_real(cred, PROBE_TOKENS) is real


def test_credential_is_read_from_api_key_or_bearer() -> None:
    """The credential comes from x-api-key, else from a Bearer Authorization header."""
    assert credential_of({"X-Api-Key": "k1", "Authorization": "Bearer k2"}) == "k1"
    assert credential_of({"Authorization": "Bearer k2"}) == "k2"
    assert credential_of({}) is None


def test_fake_tokens_do_not_look_like_real_keys() -> None:
    """The probe's fake credentials never start with a real key prefix."""
    assert all(not t.startswith("sk-") for t in PROBE_TOKENS)


def test_launch_env_for_claude_code() -> None:
    """Claude Code probe mode sets the base URL, the fake key and disables nonessential traffic."""
    le = launch_env("anthropic", "http://127.0.0.1:5555/")
    assert le.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:5555"
    assert le.env["ANTHROPIC_API_KEY"] == PROBE_ANTHROPIC_KEY
    assert le.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert le.config_toml is None


def test_launch_env_for_codex_is_valid_toml() -> None:
    """The Codex snippet is valid TOML selecting a responses-wire provider at {base}/v1."""
    import tomllib

    le = launch_env("responses", "http://127.0.0.1:5555")
    cfg = tomllib.loads(le.config_toml or "")
    provider = cfg["model_providers"][cfg["model_provider"]]
    assert provider["wire_api"] == "responses"
    assert provider["base_url"] == "http://127.0.0.1:5555/v1"
    assert le.env[provider["env_key"]] == PROBE_OPENAI_KEY
    assert le.config_args[0] == "-c" and len(le.config_args) % 2 == 0
    with pytest.raises(ValueError):
        launch_env("grpc", "http://127.0.0.1:1")


def test_usage_sums_field_by_field() -> None:
    """Adding usages adds every counter."""
    a = StepUsage(input_tokens=1, output_tokens=2, cache_read_input_tokens=3,
                  cache_creation_input_tokens=4, reasoning_tokens=5)
    assert a + a == StepUsage(input_tokens=2, output_tokens=4, cache_read_input_tokens=6,
                              cache_creation_input_tokens=8, reasoning_tokens=10)
