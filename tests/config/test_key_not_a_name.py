"""A config key that YAML reads as a number, a boolean or null is refused at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.config import load
from pluginbench.errors import ConfigError


@pytest.mark.parametrize(("key", "read_as"), [("5", "5"), ("~", "None"), ("yes", "True")])
def test_a_key_that_is_not_text_is_refused_naming_its_line_and_the_fix(tmp_path: Path, key: str, read_as: str) -> None:
    """A treatment keyed 5:, ~: or yes: is refused naming the key, what YAML made of it, its line and the fix to write it as a name."""
    config = tmp_path / "evaluation.yaml"
    config.write_text(f"name: t\ntreatments:\n  {key}:\n    guidance: [./g.md]\n")
    with pytest.raises(ConfigError) as caught:
        load(config)
    err = caught.value
    assert f"the key '{key}' is not a name (YAML reads it as {read_as})" in err.message
    assert err.field == "line 3, column 3" and err.file == str(config) and err.fix and "name" in err.fix
