"""Resolving a task's [verifier.env] for tests/test.sh (pure): literals, allowed host variables, refusals."""

from __future__ import annotations

import pytest

from pluginbench.environments import SandboxPaths
from pluginbench.environments._docker_sandbox import MARKER
from pluginbench.environments._egress import Egress
from pluginbench.errors import ConfigError, TaskError
from pluginbench.tasks import check_allowed_names, resolve_verifier_env
from pluginbench.tasks._verifier_env import SANDBOX_SET, forbidden

FILE = "/tasks/t/task.toml"


def _resolve(env: dict[str, object], allowed: tuple[str, ...] = (), host: dict[str, str] | None = None):  # noqa: ANN202
    return resolve_verifier_env(env, allowed=allowed, host=host or {}, file=FILE, tid="t")


def test_literals_pass_as_written_and_are_recorded_with_their_value() -> None:
    """Strings pass unchanged, integers and floats as their TOML text, and each is recorded as from the task."""
    got = _resolve({"MODE": "strict", "N": 3, "RATIO": 0.5, "TEXT": "a ${X} b"})
    assert got.values == {"MODE": "strict", "N": "3", "RATIO": "0.5", "TEXT": "a ${X} b"}
    assert got.record["N"] == {"from": "task", "value": "3"}
    assert got.record["TEXT"] == {"from": "task", "value": "a ${X} b"}  # only a whole-value reference reads the host


def test_an_allowed_host_variable_is_read_and_recorded_by_name_only() -> None:
    """${NAME} with NAME allowed takes the host's value, and the record names the variable, never the value."""
    got = _resolve({"TOKEN": "${HF_TOKEN}"}, allowed=("HF_TOKEN",), host={"HF_TOKEN": "hf_secret"})
    assert got.values == {"TOKEN": "hf_secret"}
    assert got.record == {"TOKEN": {"from": "host", "variable": "HF_TOKEN"}}
    assert "hf_secret" not in repr(got.record)


def test_a_default_is_used_when_the_allowed_host_variable_is_unset() -> None:
    """${NAME:-d} with NAME allowed but unset gives d, recorded as the task's default; a set NAME wins over d."""
    unset = _resolve({"LEVEL": "${PB_LEVEL:-2}"}, allowed=("PB_LEVEL",))
    assert unset.values == {"LEVEL": "2"}
    assert unset.record == {"LEVEL": {"from": "default", "variable": "PB_LEVEL", "value": "2"}}
    assert _resolve({"LEVEL": "${PB_LEVEL:-2}"}, allowed=("PB_LEVEL",), host={"PB_LEVEL": "5"}).values == {"LEVEL": "5"}


@pytest.mark.parametrize("value", ["${HOME_SECRET}", "${HOME_SECRET:-x}"])
def test_a_reference_to_a_name_not_allowed_is_refused(value: str) -> None:
    """A host reference to a name the evaluation does not allow is refused, default or not, naming file, key and fix."""
    with pytest.raises(TaskError) as err:
        _resolve({"K": value}, host={"HOME_SECRET": "v"})
    assert err.value.file == FILE
    assert err.value.field == "verifier.env.K"
    assert "grading.verifier_env_from_host" in (err.value.fix or "")


def test_an_allowed_variable_missing_on_the_host_is_refused() -> None:
    """An allowed ${NAME} without a default is refused when the host does not set NAME."""
    with pytest.raises(TaskError) as err:
        _resolve({"K": "${PB_MISSING}"}, allowed=("PB_MISSING",))
    assert err.value.field == "verifier.env.K"
    assert "PB_MISSING" in str(err.value) and "not set" in str(err.value)


@pytest.mark.parametrize("name", ["PATH", "HOME", "TESTS_DIR", "LOGS_DIR", "https_proxy", "LD_PRELOAD",
                                  "LD_LIBRARY_PATH", "GLIBC_TUNABLES", "BASH_ENV", "ENV", "BASH_FUNC_x%%"])
def test_names_the_sandbox_or_the_loader_own_are_refused(name: str) -> None:
    """Variables the sandbox sets, the loader's and glibc's, and shell start-up hooks are refused naming the key."""
    with pytest.raises(TaskError) as err:
        _resolve({name: "x"})
    assert err.value.field == f"verifier.env.{name}"


def test_the_refused_names_cover_every_variable_a_sandbox_sets() -> None:
    """Every variable a sandbox gives its commands (paths, proxy, the docker exec marker) is refused in [verifier.env]."""
    paths = SandboxPaths("/app", "/tests", "/solution", "/logs", "/home/x", "/tmp")
    proxy = Egress(mode="proxy").inside_env()
    for name in [*paths.env(), *proxy, MARKER, "PATH", "LANG", "GIT_CONFIG_NOSYSTEM"]:
        assert forbidden(name) is not None, name
    assert forbidden("PYTHONPATH") is None and forbidden("MY_FLAG") is None
    assert "PATH" in SANDBOX_SET


@pytest.mark.parametrize("value", [True, [1], {"a": 1}, float("nan"), "a\0b"])
def test_values_that_are_not_strings_or_numbers_are_refused(value: object) -> None:
    """Booleans, arrays, tables, NaN and NUL-bearing strings are refused naming the key."""
    with pytest.raises(TaskError) as err:
        _resolve({"K": value})
    assert err.value.field == "verifier.env.K"


def test_allowed_names_in_the_config_must_be_variable_names() -> None:
    """grading.verifier_env_from_host entries that are not variable names are refused naming the entry."""
    check_allowed_names(["HF_TOKEN", "_X1"], "/e.yaml")
    with pytest.raises(ConfigError) as err:
        check_allowed_names(["OK", "$BAD"], "/e.yaml")
    assert err.value.field == "grading.verifier_env_from_host[1]"


def prepared_identity(**prepared: object) -> dict[str, object]:
    """The comparison identity of a one-task run whose task.prepared carries ``prepared`` (e.g. verifier_env=...)."""
    from pluginbench.events import TaskPrepared
    from pluginbench.projections import RunState
    from pluginbench.projections._report_data import comparison_identity

    state = RunState()
    state.prepared_tasks["t"] = TaskPrepared(task="t", fingerprint="sha256:x", files=1, workdir="/app",
                                             **prepared)  # type: ignore[arg-type]
    run = {"timeout_seconds": 60, "harness": "oracle", "model": None, "reasoning": None, "cli_version": None,
           "capabilities": {}, "measurements": []}
    return comparison_identity({}, state, run)


def test_the_comparison_identity_records_the_verifier_env_and_compare_refuses_a_difference() -> None:
    """A task's recorded [verifier.env] is in comparison_identity.verifier_env, two runs differing there differ
    on that field, and a task without one leaves the identity as it was (no verifier_env key)."""
    from pluginbench.stats._identity import compare_identities

    literal = prepared_identity(verifier_env={"MODE": {"from": "task", "value": "strict"}, "TOKEN": {"from": "host", "variable": "HF"}})
    other = prepared_identity(verifier_env={"MODE": {"from": "task", "value": "lax"}, "TOKEN": {"from": "host", "variable": "HF"}})
    assert literal["verifier_env"] == {"t": {"MODE": {"from": "task", "value": "strict"},
                                             "TOKEN": {"from": "host", "variable": "HF"}}}
    diffs, _ = compare_identities(literal, other, ["t"])
    assert [d.field for d in diffs] == ["verifier_env.t"]
    assert "verifier_env" not in prepared_identity(verifier_env=None)
