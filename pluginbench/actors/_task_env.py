"""A task's ``[environment.env]`` and ``[solution.env]`` in the coding sandbox.

Harbor injects ``[environment.env]`` into the task container, so every command run there
sees it; PluginBench gives it to every command the harness runs in the coding sandbox (the
agent, the oracle's ``solve.sh``) and to the task's collect commands, through
:class:`TaskEnvSandbox`, and to ``tests/test.sh`` under ``[verifier.env]`` (Harbor's verifier
runs in the task's environment too). The harness's own variables win over the task's, and
PluginBench's own commands in the sandbox (``git``, the export) do not get them.
``[solution.env]`` is added for the oracle's ``solve.sh`` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..environments import ExecResult, Sandbox
from ..tasks import ENVIRONMENT, HarborTask, VerifierEnv, resolve_env


def environment_env(task: HarborTask) -> VerifierEnv:
    """The task's ``[environment.env]`` (literals only: a host reference is refused). Raises
    :class:`~pluginbench.errors.TaskError`."""
    return resolve_env(task.environment_env, ENVIRONMENT, allowed=(), host={}, file=str(task.root / "task.toml"),
                       tid=task.id)


class TaskEnvSandbox:
    """``sandbox`` whose every :meth:`exec` also gets ``env`` (under the caller's own ``env``);
    everything else is the sandbox's."""

    def __init__(self, sandbox: Sandbox, env: Mapping[str, str]) -> None:
        self._sandbox = sandbox
        self._env = dict(env)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sandbox, name)

    async def exec(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, **kw: Any) -> ExecResult:
        return await self._sandbox.exec(argv, env={**self._env, **(env or {})}, **kw)


def with_task_env(sandbox: Sandbox, env: Mapping[str, str]) -> Sandbox:
    """``sandbox`` unchanged without variables, else a :class:`TaskEnvSandbox`."""
    return TaskEnvSandbox(sandbox, env) if env else sandbox
