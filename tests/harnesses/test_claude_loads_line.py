"""loads_line decodes a CLI line exactly as loads_json does, only faster (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pluginbench._parsing import MAX_JSON_DEPTH, loads_json
from pluginbench.harnesses._claude_stream import loads_line

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "claude-code-2.1.328"

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**200), max_value=2**200)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)

#: Texts json.loads and msgspec may treat apart: non-finite numbers, lone surrogates,
#: out-of-range floats, control characters, duplicate keys, trailing bytes, deep nesting.
_EDGES = ['{"a":NaN}', '{"a":-Infinity}', '{"a":1e400}', '{"a":1.7976931348623157e309}', '{"a":"\\ud800"}',
          '{"a":"\\udcff"}', '{"a":"x\x01y"}', '{"a":1,"a":2}', '{"a":-0}', '{"a":-0.0}', '{"a":1.5e-400}',
          '{"a":18446744073709551616}', '{"a":-9223372036854775809}', ' {"a":1} ', '{"a":1}x', '\ufeff{"a":1}',
          '{"a":[1,2,]}', '{"a":.5}', '"s"', "[]", "", "  ", "[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5),
          '{"a":' * 150 + "1" + "}" * 150, "[" * 3000 + "]" * 3000]


def _outcome(loads: Any, text: str) -> tuple[str, str]:
    try:
        return "ok", repr(loads(text))  # repr: -0.0, nan and int vs float told apart
    except json.JSONDecodeError as exc:
        return "refused", type(exc).__name__


def _same(text: str) -> None:
    assert _outcome(loads_line, text) == _outcome(loads_json, text), text[:200]


def test_edge_texts_and_the_real_samples_decode_as_loads_json_decodes_them() -> None:
    """Every edge text and every line of the real Claude Code samples gives loads_json's value or its refusal."""
    for text in _EDGES:
        _same(text)
    lines = [line for f in sorted(SAMPLES.glob("*.jsonl")) for line in f.read_text(errors="replace").splitlines()]
    assert lines
    for line in lines:
        _same(line)


@settings(max_examples=100, deadline=None)
@given(_json, st.sampled_from([None, 1, 2]))
def test_any_json_document_decodes_as_loads_json_decodes_it(value: Any, indent: int | None) -> None:
    """A document of any JSON values (big integers, non-finite floats, any text) decodes to loads_json's value."""
    _same(json.dumps(value, indent=indent))
    _same(json.dumps(value, ensure_ascii=False))


@settings(max_examples=100, deadline=None)
@given(_json, st.integers(min_value=0, max_value=200), st.characters())
def test_a_damaged_document_is_refused_or_accepted_as_loads_json_does(value: Any, at: int, char: str) -> None:
    """A document with one character replaced is refused, or decoded to the same value, exactly as loads_json does."""
    text = json.dumps(value, ensure_ascii=False)
    i = at % (len(text) + 1)
    _same(text[:i] + char + text[i + 1:])
