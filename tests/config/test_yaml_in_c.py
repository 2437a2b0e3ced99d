"""A config parsed by libyaml reads exactly as the Python loader reads it (issue 27, startup)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from pluginbench.config import _parse

_ROOT = Path(__file__).parents[2]

#: YAML a config may hold, and YAML it should not: every shape the two parsers must agree on
#: (values, types, anchors, merges, block scalars, tags) and text either one refuses.
_TEXTS = [
    "name: x\ntasks: {source: ./t, ids: [a, b]}\n",
    "a: &base {x: 1, y: [1, 2]}\nb: *base\nc:\n  <<: *base\n  y: 3\n",
    "s: |\n  line one\n  line two\n\nf: >-\n  folded\n  text\nk: 'q''s'\nd: \"e\\u00e9\\t\"\n",
    "on: yes\noff: no\nn: ~\nnull_: null\noct: 0o17\nold_oct: 017\nhex: 0x1F\nf: 1e3\ninf: .inf\nnan: .nan\n",
    "t: 2026-12-05\nts: 2026-12-05T10:00:00Z\nv: !!str 12\nb: !!binary aGk=\nset: !!set {a, b}\n",
    "x: [a, {b: c}, [d]]\ny: {? complex : 1}\n",
    "# only a comment\n", "", "---\na: 1\n...\n", "- a\n- b\n", "just a scalar\n", "ümlaut: 日本 😀\n",
    "a: 1\na: 2\n", "5: x\n", "yes: x\n", "a:\n  b: 1\n  b: 2\n", "a: [1, 2\n", "a: b: c\n", "\ta: 1\n",
    "a: *missing\n", "a: !!python/object:os.system x\n", "%YAML 1.1\n---\na: 1\n", "%YAML 2.0\n---\na: 1\n",
    "a: 'unterminated\n", "? a\n? a\n", "<<: {a: 1}\nb: 2\n", "a: \x07\n", "a: @x\n", "{a: 1, a: 2}\n",
    "a: !custom 1\n", "a: 1\n---\nb: 2\n", "a:\n- x\n - y\n",
]


def _outcome(load: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", load(text)
    except yaml.YAMLError as exc:
        return "error", (type(exc).__name__, str(exc))


def _python(text: str) -> Any:
    return yaml.load(text, Loader=_parse._ConfigLoader)  # noqa: S506 - the safe loader's subclass


@pytest.mark.skipif(_parse._CConfigLoader is None, reason="PyYAML without libyaml: the Python loader is the only one")
@pytest.mark.parametrize("text", [pytest.param(t, id=f"text{i}") for i, t in enumerate(_TEXTS)] + [
    pytest.param(p.read_text(encoding="utf-8"), id=str(p.relative_to(_ROOT)))
    for p in sorted([*_ROOT.glob("examples/**/*.yaml"), *_ROOT.glob("tests/data/**/*.yaml")])])
def test_libyaml_and_python_read_every_text_alike(text: str) -> None:
    """The same value, or the same refusal word for word, from the config loader with libyaml as from the Python loader."""
    assert _outcome(_parse._load_yaml, text) == _outcome(_python, text)


def test_the_c_loader_is_used_when_pyyaml_has_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """With libyaml the config is parsed by it (the Python loader is not called for valid text)."""
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML without libyaml")
    assert _parse._CConfigLoader is not None and issubclass(_parse._CConfigLoader, yaml.CSafeLoader)
    called: list[str] = []
    real = yaml.load

    def spy(text: str, Loader: Any) -> Any:  # noqa: N803 - yaml.load's own keyword
        called.append(Loader.__name__)
        return real(text, Loader=Loader)  # noqa: S506 - both are safe loaders

    monkeypatch.setattr(_parse.yaml, "load", spy)
    assert _parse._load_yaml("a: 2026-12-05\n") == {"a": datetime.date(2026, 12, 5)}
    assert called == ["_CConfigLoader"]
    with pytest.raises(yaml.YAMLError, match="duplicate key"):
        _parse._load_yaml("a: 1\na: 2\n")
    assert called[1:] == ["_CConfigLoader", "_ConfigLoader"]
