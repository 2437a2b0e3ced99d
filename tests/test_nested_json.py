"""JSON an agent or a task wrote is data: nesting too deep for Python's parser, or integers too
large for a float, read as undecodable or non-numeric values, never as an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench._parsing import MAX_JSON_DEPTH, json_lines, loads_json
from pluginbench.actors._reward import read_reward


@pytest.mark.parametrize("text", ["[" * 100_000, "[" * 900 + "]" * 900, '{"a":' * (MAX_JSON_DEPTH + 1) + "1" + "}" *
                                  (MAX_JSON_DEPTH + 1)])
def test_loads_json_refuses_nesting_deeper_than_the_limit_as_a_decode_error(text: str) -> None:
    """100,000 levels (a RecursionError in json.loads), 900 levels (parsed, then too deep to walk) and one over the limit are JSONDecodeErrors."""
    with pytest.raises(json.JSONDecodeError, match="nested more than"):
        loads_json(text)
    with pytest.raises(json.JSONDecodeError):
        loads_json(text.encode())


def test_loads_json_reads_what_json_loads_reads_within_the_limit() -> None:
    """A document at the limit, and bracket-heavy text that nests shallowly, decode as json.loads decodes them."""
    deep = '{"a":' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH
    wide = json.dumps({"code": "[" * 5000, "list": [[1]] * 500})
    for text in (deep, wide, "NaN", '"x"'):
        assert json.dumps(loads_json(text)) == json.dumps(json.loads(text))


def test_json_lines_counts_a_nesting_bomb_as_a_bad_line() -> None:
    """A JSON-lines text with a 100,000-deep line keeps the other objects and lists that line as not one."""
    bomb = '{"x":' + "[" * 100_000 + "}"
    objs, bad = json_lines('{"a": 1}\n' + bomb + '\n{"b": 2}\n')
    assert objs == [{"a": 1}, {"b": 2}] and bad == [bomb]


def test_a_nested_reward_json_is_unknown_and_a_huge_integer_key_is_left_out(tmp_path: Path) -> None:
    """reward.json nested 100,000 deep gives no reward with a reason; an integer of 400 digits beside the reward is dropped."""
    (tmp_path / "reward.json").write_text("[" * 100_000)
    reward, reason, _ = read_reward(tmp_path)
    assert reward is None and reason is not None and "nested more than" in reason
    (tmp_path / "reward.json").write_text('{"reward": 1, "f2p_total": 3, "huge": ' + "9" * 400 + "}")
    assert read_reward(tmp_path) == (1.0, None, {"f2p_total": 3.0})
    (tmp_path / "reward.json").write_text('{"reward": ' + "9" * 400 + "}")
    assert read_reward(tmp_path)[:2] == (None, "reward.json has no finite numeric 'reward'")
