"""The process that sends a notification, started by a hook that never waits for it.

`spawn` starts `<python> -I <plugin>/forge_runtime/entry.py notify` (launch.py routes it
here) in a session of its own (the host's signal to the hook's process group never
reaches it), its stdout on /dev/null and its stderr appended to the outbox's sender.log
(the host waits on no pipe of it), and the job on a pipe that is its stdin: the channels
are never taken from a file the job names, only from the person's configuration, which
`main` reads itself (notify/config.py).

`main` sends the message through every channel at once, each attempt bounded by the
channel's timeout and tried `ATTEMPTS` times with a growing pause, all within
`DEADLINE_SECONDS`, and writes what each channel answered on the outbox record
(notify/outbox.py). Nothing here raises into anything: a broken configuration or a crash
is written on the record as its failure.
"""

from __future__ import annotations

import os
import sys

from forge_runtime.goal.store.layout import SENDER_LOG

_LOG_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
ATTEMPTS = 3
PAUSES = (1.0, 3.0)  # seconds before the second and third attempts
DEADLINE_SECONDS = 100.0  # 3 x 30 s (the longest timeout a channel may set) and the pauses
COMMAND = "notify"  # the word launch.py routes to `main`




def spawn(job: dict) -> int:
    """Start the sender with `job` and return its pid at once; the caller never waits."""
    import forge_runtime
    from forge_runtime import fastjson

    root = os.path.dirname(os.path.dirname(os.path.realpath(forge_runtime.__file__)))
    entry = os.path.join(root, "forge_runtime", "entry.py")
    argv = [sys.executable, "-I", entry, COMMAND] if os.path.isfile(entry) else \
        [sys.executable, "-I", "-m", "forge_runtime.entry", COMMAND]
    log = os.path.join(os.path.dirname(job["outbox"]), SENDER_LOG)
    read_end, write_end = os.pipe()
    try:
        pid = os.posix_spawn(sys.executable, argv, dict(os.environ), setsid=True,
                             file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0),
                                           (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                           (os.POSIX_SPAWN_OPEN, 2, log, _LOG_FLAGS, 0o644)])
        os.close(read_end)
        read_end = -1
        data = fastjson.dumps(job).encode("utf-8")
        while data:  # a job is a few KB, well inside a pipe's buffer: this never blocks
            data = data[os.write(write_end, data):]
    finally:
        if read_end >= 0:
            os.close(read_end)
        os.close(write_end)
    return pid


def main(stdin) -> int:
    """Read the job from `stdin`, send it, record the outcome; always 0."""
    from forge_runtime import fastjson

    try:
        job = fastjson.loads(stdin.read())
    except ValueError as exc:  # its hook died while writing it: the record says sending
        sys.stderr.write(f"forge notify: no job to send ({exc})\n")
        return 0
    try:
        run(job)
    except BaseException as exc:  # noqa: BLE001 - written on the record, never raised
        import traceback

        traceback.print_exc()
        _record(job, "failed", [], f"the sender failed: {exc.__class__.__name__}: {exc}")
    return 0


def run(job: dict) -> dict | None:
    """Send `job`'s message through every configured channel; the outbox record, or None
    when no channel is configured (the record is dropped)."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.notify import config, outbox

    if not outbox.claim(job["outbox"], job["ledger_root"]):
        return None  # started again for a record another sender took after all
    try:
        channels = config.load(job["project"])
    except ForgeError as exc:
        return _record(job, outbox.FAILED, [], exc.hint().render())
    if not channels:
        outbox.discard(job["outbox"], job["ledger_root"])
        return None
    from forge_runtime.notify.message import build

    results = deliver(channels, build(job))
    status = outbox.SENT if all(r["status"] == outbox.SENT for r in results) else outbox.FAILED
    return _record(job, status, results)


def deliver(channels, message, deadline: float = DEADLINE_SECONDS,
            attempts: int = ATTEMPTS) -> list[dict]:
    """Send `message` through each channel in a thread of its own, `attempts` times at
    most; what each answered, in the channels' order (a channel still trying at `deadline`
    is failed)."""
    import threading
    import time

    results: list[dict | None] = [None] * len(channels)

    def one(index: int) -> None:
        results[index] = attempt(channels[index], message, attempts)

    threads = [threading.Thread(target=one, args=(index,), daemon=True)
               for index in range(len(channels))]
    for thread in threads:
        thread.start()
    end = time.monotonic() + deadline
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
    return [result or {"channel": channel.label, "status": "failed", "attempts": attempts,
                       "error": f"still trying after {deadline:g} s"}
            for result, channel in zip(results, channels, strict=True)]


def attempt(channel, message, attempts: int = ATTEMPTS) -> dict:
    """Send through one channel, up to `attempts` times with a pause between."""
    import time

    from forge_runtime.notify.channels import Unavailable, send

    error = None
    for number in range(1, attempts + 1):
        try:
            error = send(channel, message)
        except Unavailable as exc:
            return {"channel": channel.label, "status": "failed", "attempts": number,
                    "error": str(exc)}
        if error is None:
            return {"channel": channel.label, "status": "sent", "attempts": number}
        if number < attempts:
            time.sleep(PAUSES[number - 1])
    return {"channel": channel.label, "status": "failed", "attempts": attempts,
            "error": error}


def _record(job: dict, status: str, channels: list[dict], error: str | None = None) -> dict:
    from forge_runtime.notify import outbox

    return outbox.finish(job["outbox"], job["ledger_root"], status, channels, error)
