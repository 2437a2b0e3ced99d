"""Activation verdicts from traces (pure rules) and the measure's registration through the port."""

from __future__ import annotations

import json
from pathlib import Path

from pluginbench import measures
from pluginbench.actors._collector import checked
from pluginbench.events import Measure
from pluginbench.measures._activation import (
    Activation,
    activation,
    any_exercised,
    claude_components,
    claude_evidence,
    codex_components,
    codex_evidence,
)
from pluginbench.measures._activation_spec import ACTIVATION, verdicts

RECEIPT = {
    "schema": "pluginbench.claude.native-treatment/2",
    "skills": [{"name": "tidy-code", "source": "userSettings"}, {"name": "pb:plug-skill", "source": "plugin"}],
    "skills_user_invocable_only": [{"name": "manual", "source": "userSettings", "state": "user-invocable-only"}],
    "commands": ["manual", "pb:plug-skill", "tidy-code"],
    "agents": [{"agentType": "pb:reviewer", "source": "plugin"}],
    "hooks": [{"event": "PreToolUse", "matcher": "Bash", "pluginName": "pb@pluginbench-frozen"}],
    "task_owned": {"skills": [{"name": "proj-skill", "source": "projectSettings"}]},
}


def _assistant(mid: str, *blocks: dict) -> str:
    return json.dumps({"type": "assistant", "message": {"id": mid, "model": "m", "content": list(blocks)}})


def _use(uid: str, name: str, **inp: object) -> dict:
    return {"type": "tool_use", "id": uid, "name": name, "input": inp}


def _by_key(found: list[Activation]) -> dict[str, tuple[str, int | None, int | None]]:
    return {v.key if v.owner == "treatment" else "task/" + v.key: (v.state, v.uses, v.first_turn) for v in found}


def test_claude_components_cover_skills_commands_agents_hooks_and_task_owned() -> None:
    """Every declared kind becomes one component; a command that is a skill is not counted twice; task-owned apart."""
    keys = [(c.key, c.owner) for c in claude_components(RECEIPT)]
    assert keys == [("skill:manual", "treatment"), ("skill:pb:plug-skill", "treatment"), ("skill:tidy-code", "treatment"),
                    ("agent:pb:reviewer", "treatment"), ("hook:pb:PreToolUse:Bash", "treatment"),
                    ("skill:proj-skill", "task")]


def test_claude_uses_counted_with_first_turn_and_alias() -> None:
    """Skill calls by full name or bare alias, an Agent call by type, a hook by event and target, each with the
    root turn of its first use; a message written twice counts once; an absent component is not used."""
    root = "\n".join([
        _assistant("m1", _use("u1", "Skill", skill="plug-skill")),
        _assistant("m1", _use("u1", "Skill", skill="plug-skill")),
        _assistant("m2", _use("u2", "Task", subagent_type="pb:reviewer", prompt="x")),
        _assistant("m3", _use("u3", "Skill", skill="proj-skill"), _use("u4", "Skill", skill="pb:plug-skill")),
    ])
    sub = _assistant("s1", _use("v1", "Skill", skill="tidy-code"))
    stream = "\n".join([json.dumps({"type": "system", "subtype": "hook_started", "hook_name": "PreToolUse:Write",
                                    "hook_event": "PreToolUse"}),
                        json.dumps({"type": "assistant", "parent_tool_use_id": None, "message": {"id": "m1"}}),
                        json.dumps({"type": "system", "subtype": "hook_started", "hook_name": "PreToolUse:Bash",
                                    "hook_event": "PreToolUse"})])
    got = _by_key(activation(claude_components(RECEIPT), claude_evidence(root, [("agent-1.jsonl", sub)], stream)))
    assert got == {"skill:manual": ("not_used", 0, None), "skill:pb:plug-skill": ("used", 2, 1),
                   "skill:tidy-code": ("used", 1, None), "agent:pb:reviewer": ("used", 1, 2),
                   "hook:pb:PreToolUse:Bash": ("used", 1, 1), "task/skill:proj-skill": ("used", 1, 3)}


def test_missing_or_incomplete_transcripts_are_unknown_never_not_used() -> None:
    """No root transcript, a subagent without a saved transcript, or a torn line make every component the traces
    do not show unknown with the reason; a component seen stays used."""
    comps = claude_components(RECEIPT)
    none = activation(comps, claude_evidence(None, [], None))
    assert {v.state for v in none} == {"unknown"} and all(v.reason for v in none)
    root = _assistant("m1", _use("u1", "Task", subagent_type="general-purpose"), _use("u2", "Skill", skill="tidy-code"))
    lost = _by_key(activation(comps, claude_evidence(root, [], "")))
    assert lost["skill:tidy-code"][0] == "used" and lost["skill:manual"][0] == "unknown"
    assert lost["hook:pb:PreToolUse:Bash"] == ("not_used", 0, None)  # the stream is complete
    torn = _by_key(activation(comps, claude_evidence(root[:-5] + "\n" + root, [("a.jsonl", "")], "")))
    assert torn["agent:pb:reviewer"][0] == "unknown"


def test_two_hooks_accepting_the_same_run_are_unknown() -> None:
    """Hook runs are named by event and target only: two declared hooks that accept one run cannot be told apart."""
    receipt = {"hooks": [{"event": "PreToolUse", "matcher": "Bash", "pluginName": "a@m"},
                         {"event": "PreToolUse", "matcher": "", "pluginName": "b@m"}]}
    stream = json.dumps({"type": "system", "subtype": "hook_started", "hook_name": "PreToolUse:Bash"})
    got = activation(claude_components(receipt), claude_evidence("", [], stream))
    assert [v.state for v in got] == ["unknown", "unknown"]


def test_codex_skill_used_when_a_call_names_its_skill_md_and_hooks_are_unknown() -> None:
    """A Codex tool call naming the skill's SKILL.md is a use at its response's turn; hooks are unknown; a
    child rollout missing for a spawn makes the unseen skills unknown."""
    receipt = {"skills": [{"name": "careful", "path": "/h/.codex/skills/careful/SKILL.md"}],
               "plugin_skills": [{"plugin": "st@l", "name": "st:plug"}],
               "hooks": [{"plugin": "st@l", "event": "sessionstart", "command": "true"}]}
    call = {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                 "arguments": json.dumps({"cmd": "cat /h/.codex/skills/careful/SKILL.md"})}}
    rec = {"type": "token_usage_record", "payload": {}}
    text = "\n".join(json.dumps(o) for o in (rec, call, rec))
    got = _by_key(activation(codex_components(receipt), codex_evidence([("rollout-1.jsonl", text)])))
    assert got == {"skill:careful": ("used", 1, 2), "skill:st:plug": ("not_used", 0, None),
                   "hook:st:sessionstart": ("unknown", None, None)}
    spawn = {"type": "response_item", "payload": {"type": "function_call", "name": "spawn_agent", "arguments": "{}"}}
    lost = _by_key(activation(codex_components(receipt), codex_evidence([("r", json.dumps(spawn))])))
    assert lost["skill:careful"][0] == "unknown"


def test_activation_any_is_one_zero_or_unknown() -> None:
    """activation_any: 1 on any used treatment component, 0 only when all are known not used, else unknown;
    task-owned uses do not count, and an arm with no treatment component is unknown."""
    def v(state: str, owner: str = "treatment") -> Activation:
        return Activation("k", "skill", "n", owner, state, None, None, "why")  # type: ignore[arg-type]
    assert any_exercised([v("not_used"), v("used")]) == (1, None)
    assert any_exercised([v("not_used")]) == (0, None)
    assert any_exercised([v("not_used"), v("unknown")])[0] is None
    assert any_exercised([v("used", "task")])[0] is None


def test_measure_registers_through_the_port_and_families_pass_the_collector(tmp_path: Path) -> None:
    """`activation` is a registered measure; the collector keeps its family values and drops undeclared names."""
    assert measures.get("activation") is ACTIVATION and "activation_any" in [c.metric for c in measures.all_columns()]
    values = {"activation_any": Measure(value=1, unit="flag"), "activation:skill:x": Measure(value=2, unit="uses"),
              "activation_first_turn:skill:x": Measure(value=1, unit="turn"), "stray": Measure(value=1, unit="x")}
    assert sorted(checked(ACTIVATION, values)) == ["activation:skill:x", "activation_any", "activation_first_turn:skill:x"]
    found, why = verdicts(tmp_path)
    assert found is None and "native-treatment.json" in (why or "")


def test_a_task_component_may_share_a_treatment_component_name() -> None:
    """Keys are unique per owner: a task skill named like a treatment skill keeps its key; two hooks of one plugin
    on one event and matcher get #2."""
    receipt = {"skills": [{"name": "x"}], "task_owned": {"skills": [{"name": "x"}]},
               "hooks": [{"event": "Stop", "pluginName": "p@m"}, {"event": "Stop", "pluginName": "p@m"}]}
    assert [(c.key, c.owner) for c in claude_components(receipt)] == [
        ("skill:x", "treatment"), ("hook:p:Stop", "treatment"), ("hook:p:Stop#2", "treatment"), ("skill:x", "task")]
