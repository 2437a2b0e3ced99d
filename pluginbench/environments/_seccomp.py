"""A hand-written seccomp BPF program for bubblewrap's ``--seccomp FD``.

Why by hand: the Python ``seccomp`` bindings are a Debian package for the system
interpreter only (``python3-seccomp``), not installable into the project's venv, and the
program needed is tiny. It mirrors the part of Docker's default profile that matters
once every capability is dropped: the kernel keyring (``keyctl``, ``add_key``,
``request_key`` — keyrings are not namespaced, so root's keyring would be shared between
attempts and the host) and the namespace/mount/module/kexec/bpf calls. Those return
``EPERM``, as Docker's profile does, and so does a ``clone`` asking for a new namespace
(:data:`CLONE_NEW_ANY`: a child in a user namespace of its own holds every capability
there, which refusing ``unshare`` alone left open); ``clone3``, whose flags sit behind a
pointer no filter can read, returns ``ENOSYS`` so the C library falls back to ``clone``
(Docker's answer too). Every other call is allowed. A call made through a
foreign ABI (x32, or i386 ``int 0x80`` on x86_64) is refused entirely, so the syscall
numbers checked are the only ones that can reach the kernel.

The program is pure data (:func:`program`); :func:`program_bytes` is what bwrap reads.
"""

from __future__ import annotations

import errno
import platform
import struct

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
#: offsets in ``struct seccomp_data`` (``_ARG0``: the low 32 bits of the first argument, little-endian)
_NR, _ARCH, _ARG0 = 0, 4, 16
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a ``clone`` with any is refused
CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
#: (clone, clone3) per machine
_CLONE = {"x86_64": (56, 435), "aarch64": (220, 435)}

#: (audit arch, x32 bit or None, {syscall name: number}) per machine
_ARCHES: dict[str, tuple[int, int | None, dict[str, int]]] = {
    "x86_64": (0xC000003E, 0x40000000, {
        "keyctl": 250, "add_key": 248, "request_key": 249, "unshare": 272, "setns": 308,
        "mount": 165, "umount2": 166, "pivot_root": 155, "bpf": 321, "kexec_load": 246,
        "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "open_by_handle_at": 304,
    }),
    "aarch64": (0xC00000B7, None, {
        "keyctl": 219, "add_key": 217, "request_key": 218, "unshare": 97, "setns": 268,
        "mount": 40, "umount2": 39, "pivot_root": 41, "bpf": 280, "kexec_load": 104,
        "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "open_by_handle_at": 265,
    }),
}

#: the calls refused (names; the numbers depend on the machine)
REFUSED = tuple(sorted(_ARCHES["x86_64"][2]))


def supported(machine: str | None = None) -> bool:
    """Whether a filter exists for ``machine`` (default: this one)."""
    return (machine or platform.machine()) in _ARCHES


def program(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The filter as ``(code, jt, jf, k)`` instructions for ``machine`` (default: this one).

    Raises ``ValueError`` for a machine without a table.
    """
    name = machine or platform.machine()
    if name not in _ARCHES:
        raise ValueError(f"no seccomp table for machine {name!r}")
    arch, x32, calls = _ARCHES[name]
    clone, clone3 = _CLONE[name]
    # Written with labels (a jump target is a label, 0 the next instruction), then resolved.
    labelled: list[tuple[int, str | int, str | int, int]] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, "eperm", arch),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if x32 is not None:
        labelled.append((_JGE_K, "eperm", 0, x32))
    labelled += [(_JEQ_K, "eperm", 0, nr) for nr in sorted(calls.values())]
    labelled += [
        (_JEQ_K, "enosys", 0, clone3),
        (_JEQ_K, 0, "allow", clone),
        (_LD_W_ABS, 0, 0, _ARG0),
        (_JSET_K, "eperm", 0, CLONE_NEW_ANY),
    ]
    at = {"allow": len(labelled), "eperm": len(labelled) + 1, "enosys": len(labelled) + 2}
    body = [(code, 0 if jt == 0 else at[str(jt)] - i - 1, 0 if jf == 0 else at[str(jf)] - i - 1, k)
            for i, (code, jt, jf, k) in enumerate(labelled)]
    body.append((_RET_K, 0, 0, RET_ALLOW))
    body.append((_RET_K, 0, 0, RET_ERRNO | errno.EPERM))
    body.append((_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS))
    return body


def program_bytes(machine: str | None = None) -> bytes:
    """:func:`program` as the ``struct sock_filter`` array bwrap reads from ``--seccomp``."""
    return b"".join(struct.pack("=HBBI", *ins) for ins in program(machine))


def run(prog: list[tuple[int, int, int, int]], nr: int, arch: int, arg0: int = 0) -> int:
    """Evaluate ``prog`` for one call (a tiny BPF interpreter for the filter's own tests)."""
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        if code == _LD_W_ABS:
            acc = {_ARCH: arch, _NR: nr, _ARG0: arg0 & 0xFFFFFFFF}[k]
            pc += 1
        elif code == _JEQ_K:
            pc += 1 + (jt if acc == k else jf)
        elif code == _JGE_K:
            pc += 1 + (jt if acc >= k else jf)
        elif code == _JSET_K:
            pc += 1 + (jt if acc & k else jf)
        elif code == _RET_K:
            return k
        else:  # pragma: no cover - the program uses no other opcode
            raise ValueError(f"opcode {code:#x}")
