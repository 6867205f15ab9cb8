"""The seccomp filter forge's confined gate run gets: no new Unix domain sockets.

A read-only file system does not stop a process from talking to a service through a Unix
socket it can see: the session bus (`systemd-run --user` starts anything, unconfined), a
docker socket (a root container mounting `/`), an ssh or gpg agent. Claude Code's sandbox
closes that with a seccomp filter shipped by a separate package (`@anthropic-ai/sandbox-runtime`:
`apply-seccomp` and a `.bpf` file) that is often absent, and a helper from a root the agent
could write would be no guard at all; so forge assembles its own, a dozen BPF instructions,
and hands it to bubblewrap (`--seccomp FD`), which loads it after `no_new_privs` for the
whole process tree of the gate:

- `socket(AF_UNIX, ...)` fails with EPERM (as Claude Code's filter answers), every other
  family is allowed (the gate's own network namespace has only loopback);
- `io_uring_setup` fails with EPERM: io_uring's own socket and connect operations are not
  system calls a filter sees;
- on x86_64 the x32 ABI's calls (numbers with bit 30 set) fail with EPERM, and a system
  call of any other architecture (a 32-bit `int 0x80`, whose `socketcall` multiplexes
  socket) ends the process.

`socketpair` stays allowed: the pair it makes reaches nothing outside the gate, and asyncio
and test runners use it. Supported: x86_64 and aarch64; elsewhere `program()` is None and a
sandboxed posture's gates cannot be confined (confined.py says so).
"""

from __future__ import annotations

import platform
import struct

# classic BPF opcodes (linux/filter.h), the seccomp return actions (linux/seccomp.h)
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
EPERM, AF_UNIX = 1, 1
X32_BIT = 0x40000000
# struct seccomp_data: nr, arch, instruction_pointer, args[6] (the low word of args[0] at
# 16 on a little-endian machine, which both supported architectures are)
NR, ARCH, ARG0_LOW = 0, 4, 16

# machine name -> (AUDIT_ARCH_*, socket, io_uring_setup, whether it has the x32 ABI)
ARCHITECTURES = {
    "x86_64": (0xC000003E, 41, 425, True),
    "aarch64": (0xC00000B7, 198, 425, False),
}
ARCHITECTURES["amd64"] = ARCHITECTURES["x86_64"]
ARCHITECTURES["arm64"] = ARCHITECTURES["aarch64"]


def _assemble(lines: list[tuple]) -> bytes:
    """Pack (label or None, code, k, jump-if-true label, jump-if-false label) lines into
    `struct sock_filter` entries, resolving labels to the relative offsets BPF jumps by."""
    where = {line[0]: index for index, line in enumerate(lines) if line[0]}
    packed = []
    for index, (_, code, k, true, false) in enumerate(lines):
        jt = where[true] - index - 1 if true else 0
        jf = where[false] - index - 1 if false else 0
        packed.append(struct.pack("=HBBI", code, jt, jf, k))
    return b"".join(packed)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture (`machine`: as `platform.machine()`
    names it), or None where forge has none."""
    known = ARCHITECTURES.get((machine or platform.machine()).lower())
    if known is None:
        return None
    arch, socket_nr, io_uring_nr, x32 = known
    lines = [
        (None, LD_W_ABS, ARCH, None, None),
        (None, JEQ_K, arch, None, "kill"),
        (None, LD_W_ABS, NR, None, None),
    ]
    if x32:
        lines.append((None, JGE_K, X32_BIT, "deny", None))
    lines += [
        (None, JEQ_K, socket_nr, "socket", None),
        (None, JEQ_K, io_uring_nr, "deny", "allow"),
        ("socket", LD_W_ABS, ARG0_LOW, None, None),
        (None, JEQ_K, AF_UNIX, "deny", "allow"),
        ("allow", RET_K, RET_ALLOW, None, None),
        ("deny", RET_K, RET_ERRNO | EPERM, None, None),
        ("kill", RET_K, RET_KILL_PROCESS, None, None),
    ]
    return _assemble(lines)

