"""Grading's ``git apply`` and ``tests/test.sh`` in one bubblewrap launch, with a result
channel on the host that the verifier's code cannot write.

They used to be two launches because test.sh runs the agent's code, which could fake a
"does not apply" (or a "does apply") if the apply's result came back through anything the
sandbox still holds once test.sh starts. Here the host makes a pipe and keeps its read end;
the write end goes into the launch as fd ``N`` (a digit, 3..9, that no other descriptor
passed to the launch uses: a host-side ``sh`` moves it there from stdin, which then becomes
``/dev/null``, before anything of the sandbox starts). bubblewrap's monitor and its pid 1
close every descriptor above 2 and hand the others to the command, so only the command
holds it. The command is a tiny ``sh`` that

1. runs ``git apply --binary --whitespace=nowarn <patch>`` in the environment grading's own
   ``git apply`` had (``env -i`` and the sandbox's default variables, not the verifier's),
   its stdout and stderr into the channel (``git apply`` writes nothing to stdout without
   ``--stat``/``--numstat``/``--summary``, so that is the ``stdout + stderr`` grading kept);
2. writes ``<nonce> <exit status>`` to the channel (the nonce is drawn per launch, after the
   patch is fixed, so no file name git quotes can end the output early);
3. **closes** ``N``: from then on no process of the sandbox holds the pipe, and the host
   stops reading at the status line, so nothing written later could count;
4. only when the status is 0, ``exec``\\ s test.sh (through the egress forwarder when the
   sandbox has a way out) in test.sh's own environment, working folder and limits. A patch
   that does not apply never runs test.sh.

The host gives the apply phase its own deadline and test.sh its full deadline from the
moment the status line arrives, as two launches did.
"""

import os
import secrets
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import anyio

from ._local_after import pwd_prefix
from ._port import ExecResult

if TYPE_CHECKING:
    from ._local import LocalSandbox

#: the argv of grading's ``git apply`` (the patch path is appended), one launch or two
GIT_APPLY = ("git", "apply", "--binary", "--whitespace=nowarn")
#: how much of git's output is kept (a patch naming many files that do not apply)
OUTPUT_CAP = 1 << 20


class AppliedRun(NamedTuple):
    """One launch of :class:`ApplyChannel`: whether the patch applied (``None``: the apply
    never reported, it timed out or was killed), git's output, and the launch (test.sh's
    result when it applied)."""

    applied: bool | None
    apply_output: bytes
    result: ExecResult


def free_digit(taken: Sequence[int]) -> int | None:
    """A descriptor number 3..9 not in ``taken`` (``sh`` redirects only single digits), or ``None``."""
    return next((n for n in range(3, 10) if n not in taken), None)


class ApplyChannel:
    """The host's end of one apply-then-test launch (see the module docstring)."""

    def __init__(self, patch: str, apply_env: Mapping[str, str], then_timeout: float | None) -> None:
        self.patch = patch
        self.apply_env = dict(apply_env)
        self.then_timeout = then_timeout
        self.nonce = secrets.token_hex(16).encode()
        self.read_end, self.write_end = os.pipe()
        self.status: int | None = None
        self.output = bytearray()
        self.fd = 0

    def outer(self, command: Sequence[str]) -> list[str]:
        """``command`` behind the host-side ``sh`` that moves the write end (its stdin) to
        :attr:`fd` (a digit the launch passes nothing else on)."""
        script = f'exec {self.fd}>&0 0</dev/null; unset PWD OLDPWD; exec "$@"'
        return ["/bin/sh", "-c", script, "pluginbench-channel", *command]

    def inner(self, argv: Sequence[str], env: Mapping[str, str], forwarder: Sequence[str]) -> list[str]:
        """The in-sandbox ``sh``: apply, report, close the channel, then ``exec`` ``argv``
        (behind ``forwarder``) in ``env``."""
        n, q = self.fd, shlex.quote
        assigns = " ".join(q(f"{k}={v}") for k, v in self.apply_env.items())
        script = (
            f"env -i {assigns} {' '.join(q(a) for a in (*GIT_APPLY, self.patch))} </dev/null >&{n} 2>&{n} {n}>&-; "
            f"s=$?; printf '%s %s\\n' {self.nonce.decode()} \"$s\" >&{n}; exec {n}>&-; "
            f'[ "$s" -eq 0 ] || exit 125; {pwd_prefix(env)}exec "$@"'
        )
        return ["/bin/sh", "-c", script, "pluginbench-apply", *forwarder, *argv]

    def _found(self) -> bool:
        """Whether the status line arrived (then ``status`` is set and ``output`` is git's alone)."""
        mark = self.output.find(self.nonce + b" ")
        end = self.output.find(b"\n", mark) if mark >= 0 else -1
        if end < 0:
            return False
        word = bytes(self.output[mark + len(self.nonce) + 1:end])
        self.status = int(word) if word.isdigit() else None
        del self.output[mark:]
        return True

    async def watch(self, deadline: anyio.CancelScope) -> None:
        """Read the channel until the status line (or its end); when the patch applied,
        give the rest of the launch test.sh's own deadline from now."""
        os.set_blocking(self.read_end, False)
        while True:
            await anyio.wait_readable(self.read_end)
            try:
                data = os.read(self.read_end, 65536)
            except BlockingIOError:
                continue
            if not data:
                return
            self.output += data
            if len(self.output) > OUTPUT_CAP + 4096:  # keep the head, and a tail the status line fits in
                del self.output[OUTPUT_CAP:len(self.output) - 256]
            if self._found():
                break
        if self.status == 0:
            deadline.deadline = (anyio.current_time() + self.then_timeout
                                 if self.then_timeout is not None else float("inf"))

    def close_write(self) -> None:
        if self.write_end >= 0:
            os.close(self.write_end)
            self.write_end = -1

    def close(self) -> None:
        self.close_write()
        if self.read_end >= 0:
            os.close(self.read_end)
            self.read_end = -1

    def outcome(self, result: ExecResult) -> AppliedRun:
        """The launch's :class:`AppliedRun`."""
        applied = None if self.status is None else self.status == 0
        return AppliedRun(applied, bytes(self.output[:OUTPUT_CAP]), result)


async def apply_and_exec(box: "LocalSandbox", patch: str, argv: Sequence[str], *, cwd: str,
                     env: Mapping[str, str] | None, apply_timeout: float, timeout: float | None,
                     stdout_path: Path, stderr_path: Path) -> AppliedRun | None:
    """In ``box``, grading's ``git apply`` of ``patch`` and then ``argv`` (test.sh, through
    the forwarder when the sandbox has a way out) in ONE bubblewrap launch, the apply's
    result read from a channel only the host holds once ``argv`` starts. ``argv`` never
    runs when the patch does not apply; then ``stdout_path``/``stderr_path`` are not left
    behind. ``None`` (nothing ran) when unisolated or no descriptor digit is free: the
    caller makes two launches, as before."""
    if not box.isolated:
        return None
    channel = ApplyChannel(patch, box._env(None), timeout)
    try:
        result = await box._launch(argv, cwd=cwd, env=env, timeout=apply_timeout, stdout_path=stdout_path,
                                   stderr_path=stderr_path, channel=channel)
        if result is None:
            return None
        ran = channel.outcome(result)
    finally:
        channel.close()
    if not ran.applied:
        for path in (stdout_path, stderr_path):
            path.unlink(missing_ok=True)
    return ran


__all__ = ["GIT_APPLY", "AppliedRun", "ApplyChannel", "apply_and_exec", "free_digit"]
