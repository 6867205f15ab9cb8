"""Run a session in its own network and PID namespaces: only loopback, and nothing outlives it.

`unshare -n -p -f --kill-child` gives the session a network namespace whose only interface
is its own loopback, and a PID namespace whose init is this module's `main`. So the host can
reach nothing at all, not even the vendor's servers by mistake, and when init dies the
kernel kills every process the session left behind (a hung tool, a background shell).

The model server lives in the test process, outside the namespace; a loopback port there is
unreachable from inside. So `main` listens on 127.0.0.1:<port> inside the namespace and
relays each connection to the server's Unix socket (a filesystem socket crosses network
namespaces); so for each further server a test names (a webhook receiver). Then it runs
the session command as its child and exits with its code (with further servers, once
nothing the session left runs in the namespace: `_linger`).

Needs root (or unprivileged user namespaces) and `ip`; `available()` says when it cannot.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

MODULE = "forge_runtime.hostkit.netns"
# With more relays than the model server's (a test's webhook receiver), the relays stay up
# after the session while something it left runs in the namespace, this long at most.
LINGER, LINGER_SECONDS = "--linger", 120


@functools.cache
def available() -> tuple[bool, str]:
    """Whether this machine can isolate a session, and if not, why (for the test report)."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not unshare or not ip:
        return False, "`unshare` or `ip` is not installed"
    try:
        probe = subprocess.run(
            [unshare, "-n", "-p", "-f", "--kill-child", "--", ip, "link", "set", "lo", "up"],
            capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"`unshare -n -p` failed to start: {exc}"
    if probe.returncode != 0:
        reason = probe.stderr.strip().splitlines()[-1:] or [f"exit {probe.returncode}"]
        return False, f"`unshare -n -p` is not permitted here: {reason[0]}"
    return True, "loopback-only network and PID namespace (unshare -n -p)"


def wrap(command: list[str], unix_path: str, port: int, own_pids: bool = True,
         relays: dict[int, str] | None = None) -> list[str]:
    """`command` run inside fresh namespaces, with 127.0.0.1:<port> relayed to `unix_path`,
    and each of `relays` (port: Unix socket, another loopback server of the test, such as
    a webhook receiver) likewise.

    `own_pids=False` leaves out the PID namespace: then a process the session starts in the
    background can outlive it, as on a person's machine (the caller ends it), and the host's
    own bubblewrap sandbox, which reads /proc/<pid>/ns of its children, can run.
    """
    pids = ["-p", "-f", "--kill-child"] if own_pids else []
    more = [word for extra, path in (relays or {}).items() for word in (path, str(extra))]
    linger = [LINGER, str(LINGER_SECONDS)] if relays else []
    return [shutil.which("unshare") or "unshare", "-n", *pids, "--",
            sys.executable, "-I", "-m", MODULE, *linger, unix_path, str(port), *more, "--",
            *command]


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                sock.shutdown(how)


def _relay_one(client: socket.socket, unix_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(unix_path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, unix_path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay_one, args=(client, unix_path), daemon=True).start()


def _others_here() -> bool:
    """Whether a process besides this one is still in this network namespace."""
    try:
        mine = os.readlink("/proc/self/ns/net")
    except OSError:
        return False
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if os.readlink(f"/proc/{name}/ns/net") == mine:
                    return True
            except OSError:
                continue
    return False


def _linger(seconds: float) -> None:
    """Keep relaying while a process the session left behind still runs here (a hook's
    detached notification sender, which a person's machine lets reach its receiver after
    `claude -p` exits), for `seconds` at most."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and _others_here():
        time.sleep(0.2)


def main(argv: list[str]) -> int:
    linger = 0.0
    if argv[:1] == [LINGER] and len(argv) > 1:
        linger, argv = float(argv[1]), argv[2:]
    pairs = argv[:argv.index("--")] if "--" in argv else []
    command = argv[len(pairs) + 1:]
    if not pairs or len(pairs) % 2 or not command or \
            not all(port.isdigit() for port in pairs[1::2]):
        sys.stderr.write(f"usage: python -m {MODULE} UNIX_SOCKET PORT [UNIX_SOCKET PORT ...] "
                         "-- COMMAND...\n")
        return 2
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for unix_path, port in zip(pairs[::2], pairs[1::2], strict=True):
        listener = socket.create_server(("127.0.0.1", int(port)))
        threading.Thread(target=_serve, args=(listener, unix_path), daemon=True).start()
    code = subprocess.run(command).returncode
    _linger(linger)
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
