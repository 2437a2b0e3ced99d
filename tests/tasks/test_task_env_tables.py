"""A task's [solution.env] and [environment.env] (pure and unit logic): one resolution with [verifier.env], the
solution table reads allowed host variables, the environment table none; where each reaches (recorded execs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pluginbench.actors._task_env import TaskEnvSandbox, environment_env, with_task_env
from pluginbench.environments import ExecResult
from pluginbench.errors import TaskError
from pluginbench.tasks import (
    COMMON_SETTINGS,
    ENVIRONMENT,
    SOLUTION,
    ignored_settings,
    load_task,
    resolve_env,
)
from tests.runs_helpers import task_folder
from tests.tasks.test_verifier_env import prepared_identity

FILE = "/tasks/t/task.toml"


def test_solution_env_reads_allowed_host_variables_and_names_its_table_when_refused() -> None:
    """[solution.env] passes literals, reads a host variable the allowlist names (recorded by name only), and
    refuses any other host reference naming solution.env.<KEY> and the config field."""
    got = resolve_env({"SOL_VAR": "fix", "TOKEN": "${PB_SOL}"}, SOLUTION, allowed=("PB_SOL",),
                      host={"PB_SOL": "secret-value"}, file=FILE, tid="t")
    assert got.values == {"SOL_VAR": "fix", "TOKEN": "secret-value"}
    assert got.record["TOKEN"] == {"from": "host", "variable": "PB_SOL"}
    with pytest.raises(TaskError) as err:
        resolve_env({"TOKEN": "${OTHER}"}, SOLUTION, allowed=("PB_SOL",), host={"OTHER": "x"}, file=FILE, tid="t")
    assert err.value.field == "solution.env.TOKEN" and err.value.file == FILE
    assert "grading.verifier_env_from_host" in (err.value.fix or "")


@pytest.mark.parametrize("value", ["${PB_ANY}", "${PB_ANY:-d}"])
def test_environment_env_refuses_every_host_reference_even_an_allowed_one(value: str) -> None:
    """[environment.env] reaches the agent, so a host reference is refused even when the allowlist names it."""
    with pytest.raises(TaskError) as err:
        resolve_env({"K": value}, ENVIRONMENT, allowed=("PB_ANY",), host={"PB_ANY": "v"}, file=FILE, tid="t")
    assert err.value.field == "environment.env.K"
    assert "may not read host variables" in str(err.value) and "[verifier.env]" in (err.value.fix or "")


@pytest.mark.parametrize("name", ["PATH", "HOME", "LD_PRELOAD", "https_proxy", "BASH_ENV", "ANTHROPIC_BASE_URL",
                                  "OPENAI_API_KEY", "CLAUDE_CONFIG_DIR", "PLUGINBENCH_SIM_SEED", "XDG_CONFIG_HOME"])
def test_environment_env_refuses_sandbox_loader_and_agent_cli_names(name: str) -> None:
    """[environment.env] refuses the names refused everywhere plus the ones the agent CLIs read, naming the key."""
    with pytest.raises(TaskError) as err:
        resolve_env({name: "x"}, ENVIRONMENT, allowed=(), host={}, file=FILE, tid="t")
    assert err.value.field == f"environment.env.{name}"


def test_agent_cli_names_stay_allowed_where_the_agent_never_looks() -> None:
    """A name only the agent's table refuses (ANTHROPIC_*) is still allowed in [solution.env]; BASH_ENV's reason names solve.sh."""
    assert resolve_env({"ANTHROPIC_X": "1"}, SOLUTION, allowed=(), host={}, file=FILE, tid="t").values == {"ANTHROPIC_X": "1"}
    with pytest.raises(TaskError) as err:
        resolve_env({"BASH_ENV": "/x"}, SOLUTION, allowed=(), host={}, file=FILE, tid="t")
    assert "before solve.sh" in str(err.value)


def test_load_task_reads_both_tables_and_check_no_longer_calls_environment_env_ignored(tmp_path: Path) -> None:
    """load_task keeps [environment.env] and [solution.env] as written; environment.env is a setting every backend honours."""
    task = load_task(task_folder(tmp_path / "t", '[environment.env]\nENV_VAR = "e"\nN = 1\n[solution.env]\nSOL_VAR = "s"\n'))
    assert task.environment_env == {"ENV_VAR": "e", "N": 1} and task.solution_env == {"SOL_VAR": "s"}
    assert environment_env(task).values == {"ENV_VAR": "e", "N": "1"}
    assert "environment.env" in task.settings and "environment.env" in COMMON_SETTINGS
    assert ignored_settings(task.settings, frozenset()) == ()


def test_a_solution_env_that_is_not_a_table_is_refused_naming_it(tmp_path: Path) -> None:
    """solution.env = "x" (not a table) is refused naming solution.env."""
    with pytest.raises(TaskError) as err:
        load_task(task_folder(tmp_path / "t", '[solution]\nenv = "x"\n'))
    assert err.value.field == "solution.env"


class _Box:
    paths = "the-paths"

    def __init__(self) -> None:
        self.envs: list[dict[str, str] | None] = []

    async def exec(self, argv: list[str], *, env: dict[str, str] | None = None, **kw: Any) -> ExecResult:
        self.envs.append(env)
        return ExecResult(0, False, 0.0, b"", b"")


@pytest.mark.anyio
async def test_every_exec_of_the_wrapped_sandbox_gets_the_task_env_under_the_callers() -> None:
    """The wrapped sandbox adds the task's variables to every exec, the caller's own variables win, other
    attributes are the sandbox's, and an empty env leaves the sandbox unwrapped."""
    box = _Box()
    wrapped = with_task_env(box, {"ENV_VAR": "task", "SHARED": "task"})  # type: ignore[arg-type]
    assert isinstance(wrapped, TaskEnvSandbox) and wrapped.paths == "the-paths"
    await wrapped.exec(["true"])
    await wrapped.exec(["true"], env={"SHARED": "harness"})
    assert box.envs == [{"ENV_VAR": "task", "SHARED": "task"}, {"ENV_VAR": "task", "SHARED": "harness"}]
    assert with_task_env(box, {}) is box  # type: ignore[arg-type]


def test_the_comparison_identity_records_environment_env_and_compare_refuses_a_difference() -> None:
    """A task's recorded [environment.env] is in comparison_identity.environment_env and two runs differing there
    differ on that field; a task without one adds no key."""
    from pluginbench.stats._identity import compare_identities

    def identity(env: dict[str, dict[str, str]] | None) -> dict[str, object]:
        return prepared_identity(environment_env=env)

    one = identity({"ENV_VAR": {"from": "task", "value": "a"}})
    assert one["environment_env"] == {"t": {"ENV_VAR": {"from": "task", "value": "a"}}}
    diffs, _ = compare_identities(one, identity({"ENV_VAR": {"from": "task", "value": "b"}}), ["t"])
    assert [d.field for d in diffs] == ["environment_env.t"]
    assert "environment_env" not in identity(None)


def test_the_oracles_host_values_are_redacted_from_its_error() -> None:
    """solve.sh's stderr quoted in the oracle's error (recorded in events) has the [solution.env] host values redacted in
    every encoded form the run's files are scrubbed of, and a value too short to be told from text is left."""
    from pluginbench.actors._pipeline import CodingResult, _without_values
    from pluginbench.events import Usage
    from pluginbench.harnesses import AgentRun

    run = AgentRun(exit_code=1, timed_out=False, coding_seconds=0.1, usage=Usage(status="unknown", reason="x"),
                   error="solve.sh exited with 1: token pb-secret-value-1234 rejected; base64 "
                         "cGItc2VjcmV0LXZhbHVlLTEyMzQ=; 1 of 1 failed")
    got = _without_values(CodingResult(run, None, None), ["pb-secret-value-1234", "1"])
    assert got.run.error == ("solve.sh exited with 1: token <redacted credential> rejected; base64 "
                             "<redacted credential>Q=; 1 of 1 failed")  # every encoded form (the padded end stays); a short value is left
    assert _without_values(CodingResult(run, None, None), []).run.error == run.error
