"""A command the container runtime failed to start for a passing reason (runc's init died
on a loaded host) is started again; a lasting or non-passing start failure is not retried
into a different error. The retry logic is unit-tested on the sandbox class with its one
start replaced; the real runtime's failure cannot be provoked on demand."""

from __future__ import annotations

from typing import Any

import pytest

from pluginbench.environments import _docker_sandbox as ds
from pluginbench.environments._port import ExecResult
from pluginbench.errors import EnvironmentFailure

_RUNC = (b"OCI runtime exec failed: exec failed: unable to start container process: "
         b"read init-p: connection reset by peer: unknown")


def test_a_runtime_init_reset_counts_as_a_passing_start_failure() -> None:
    """Exit 126 with the runtime's 'read init-p: connection reset by peer' is passing; a missing binary is not."""
    assert ds._transient_start(126, _RUNC)
    assert not ds._transient_start(126, b'OCI runtime exec failed: exec: "nope": executable file not found in $PATH')
    assert not ds._transient_start(1, _RUNC)
    assert not ds._transient_start(126, b"read init-p: connection reset by peer (printed by the command itself)")


class _Flaky(ds.DockerSandbox):
    def __init__(self, failures: int) -> None:  # no container: only the retry loop runs
        self.failures = failures
        self.starts = 0

    async def _exec_once(self, argv: Any, **kwargs: Any) -> ExecResult:
        self.starts += 1
        if self.starts <= self.failures:
            raise ds.CommandStartFailed("cannot start 'sh' in the container: read init-p")
        return ExecResult(0, False, 0.0, b"ok", b"")


@pytest.fixture(autouse=True)
def _no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ds, "_START_RETRY_PAUSES", (0.0, 0.0))


@pytest.mark.anyio
async def test_a_passing_start_failure_is_started_again() -> None:
    """Two passing start failures, then the command runs: its result is returned after three starts."""
    sandbox = _Flaky(failures=2)
    result = await sandbox.exec(["sh", "-c", "true"])
    assert (result.exit_code, result.stdout, sandbox.starts) == (0, b"ok", 3)


@pytest.mark.anyio
async def test_a_lasting_start_failure_is_an_environment_failure_after_three_starts() -> None:
    """Three passing start failures in a row end as an EnvironmentFailure naming the runtime's words."""
    sandbox = _Flaky(failures=99)
    with pytest.raises(EnvironmentFailure, match="read init-p"):
        await sandbox.exec(["sh"])
    assert sandbox.starts == 3


@pytest.mark.anyio
async def test_a_dialogue_is_never_started_twice() -> None:
    """A command with a dialogue (it may have written to stdin) fails on its first start failure."""
    async def dialogue(channel: Any) -> None:
        return None

    sandbox = _Flaky(failures=1)
    with pytest.raises(EnvironmentFailure):
        await sandbox.exec(["sh"], dialogue=dialogue)
    assert sandbox.starts == 1
