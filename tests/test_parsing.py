"""The shared readers of input text (pluginbench/_parsing.py)."""

from __future__ import annotations

import math

from pluginbench._parsing import json_lines, looks_numeric, value_at


def test_json_lines_keeps_objects_in_order_and_returns_the_rest() -> None:
    """Objects come back in order; a torn line and a non-object line are the bad lines; blanks are skipped."""
    objs, bad = json_lines('{"a": 1}\n\n[1, 2]\n{"b": 2}\n{"torn": \n')
    assert objs == [{"a": 1}, {"b": 2}]
    assert bad == ["[1, 2]", '{"torn": ']


def test_json_lines_accepts_what_json_loads_accepts() -> None:
    """A NaN that msgspec refuses is still read as json.loads reads it, so measures keep their values."""
    objs, bad = json_lines('{"x": NaN}')
    assert bad == [] and math.isnan(objs[0]["x"])


def test_value_at_follows_a_dotted_path_with_indexes() -> None:
    """A field path from a validation error leads to its node, or to None when it leads nowhere."""
    raw = {"runner": {"limits": [{"x": "1e3"}]}}
    assert value_at(raw, "runner.limits[0].x") == "1e3"
    assert value_at(raw, "runner.limits[3].x") is None
    assert value_at(raw, "runner.nope") is None
    assert value_at(raw, None) == raw


def test_looks_numeric_tells_numeric_text_from_words() -> None:
    """Text YAML left as a string but that reads as a number is recognised; words are not."""
    assert looks_numeric(" 1e3 ") and looks_numeric("2.5")
    assert not looks_numeric("fast") and not looks_numeric("")
