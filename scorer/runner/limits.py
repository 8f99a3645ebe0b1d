"""The runner's resource limits kept from the team's code (contract section 10): a process of the same user
may lower another's limits with ``prlimit`` past what an unprivileged process can raise again, so the child
that runs the code, before any of it runs, forbids itself and every process it starts to change the
runner's (:func:`keep_limits_of`, a seccomp filter built here in classic BPF).
"""

from __future__ import annotations

import errno
import os
import sys

_PR_SET_NO_NEW_PRIVS = 38  # <linux/prctl.h>
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2  # <linux/seccomp.h>
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_RET_K = 0x20, 0x15, 0x06  # <linux/filter.h>
#: The system call ``prlimit64`` by machine (``os.uname().machine``): each ABI a process there may call it
#: through, as (``AUDIT_ARCH_*`` of <linux/audit.h>, its numbers): x86-64's own and x32's, i386's; arm64's,
#: 32-bit ARM's.
_PRLIMIT64 = {
    "x86_64": ((0xC000003E, (302, 0x40000000 | 302)), (0x40000003, (340,))),
    "aarch64": ((0xC00000B7, (261,)), (0x40000028, (369,))),
}


def _limits_filter(machine: str, big_endian: bool) -> list[tuple[int, int, int, int]] | None:
    """A seccomp program (classic BPF: code, jump if true, jump if false, k) that fails with EPERM every
    ``prlimit64`` setting a limit (its new limit not NULL) of any process named by its id, and allows every
    other call (reading any process's limits; setting one's own, as ``setrlimit`` does: ``prlimit64`` of pid
    0). Any id is refused, not the runner's alone: the kernel takes the id of any thread of a process for
    it, and the runner's threads share its limits. None on a machine it does not know."""
    abis = _PRLIMIT64.get(machine)
    if abis is None:
        return None
    # struct seccomp_data: nr at 0, arch at 4, args[k] (64 bits each) at 16 + 8 k; a pid is the low 32 bits
    low, high = (4, 0) if big_endian else (0, 4)
    labels: dict[str, int] = {}
    code: list[tuple[int, str | None, str | None, int]] = []
    code.append((_BPF_LD_W_ABS, None, None, 4))
    for k, (arch, _) in enumerate(abis):
        code.append((_BPF_JEQ_K, f"abi{k}", None, arch))
    code.append((_BPF_RET_K, None, None, _SECCOMP_RET_ALLOW))
    for k, (_, numbers) in enumerate(abis):
        labels[f"abi{k}"] = len(code)
        code.append((_BPF_LD_W_ABS, None, None, 0))
        code.extend((_BPF_JEQ_K, "prlimit", None, number) for number in numbers)
        code.append((_BPF_RET_K, None, None, _SECCOMP_RET_ALLOW))
    labels["prlimit"] = len(code)
    code.append((_BPF_LD_W_ABS, None, None, 16 + low))
    code.append((_BPF_JEQ_K, "allow", None, 0))  # pid 0: the caller's own limits
    code.append((_BPF_LD_W_ABS, None, None, 32 + low))
    code.append((_BPF_JEQ_K, None, "deny", 0))
    code.append((_BPF_LD_W_ABS, None, None, 32 + high))
    code.append((_BPF_JEQ_K, "allow", "deny", 0))
    labels["allow"] = len(code)
    code.append((_BPF_RET_K, None, None, _SECCOMP_RET_ALLOW))
    labels["deny"] = len(code)
    code.append((_BPF_RET_K, None, None, _SECCOMP_RET_ERRNO | errno.EPERM))

    def jump(label: str | None, at: int) -> int:
        return 0 if label is None else labels[label] - at - 1

    return [(op, jump(yes, at), jump(no, at), k) for at, (op, yes, no, k) in enumerate(code)]


def keep_limits_of() -> bool:
    """On Linux, keep this process and every process it starts from changing the resource limits of another
    process (the runner: the scoring step itself in a code competition's scoring step), which a process of
    the same user may otherwise lower with ``prlimit``, past what the runner, without privileges, could
    raise again: a seccomp filter (after ``PR_SET_NO_NEW_PRIVS``, which any process may set) makes such a
    call fail with EPERM; a process's own limits (``setrlimit``) stay its to set. Whether the filter is in
    place (False on a machine or a system without it)."""
    program = _limits_filter(os.uname().machine, sys.byteorder == "big")
    if program is None:
        return False
    try:
        import ctypes
        import struct

        raw = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
        instructions = ctypes.create_string_buffer(raw, len(raw))

        class Program(ctypes.Structure):  # struct sock_fprog
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        fprog = Program(len(program), ctypes.cast(instructions, ctypes.c_void_p))
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return bool(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0)
    except (OSError, AttributeError, ImportError):
        return False
