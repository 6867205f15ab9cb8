"""Stop hooks killed by someone else's signal: recorded beside the ledger, told to the person.

The host ends a hook that outlives its timeout by signalling the hook's whole process group,
forge's launcher included (measured: hooks/forge-hook), so the launcher dies with its
interpreter and never answers. A launcher that lives to see its interpreter killed by a
signal therefore saw someone else's kill (another process, the OOM killer), and it runs
`entry.py killed <signal>` (forge_runtime/hooks/stop.py `on_killed`), which ends a goal's
autonomy and adds the kill to this repository's row of killed Stops:

    <ledger root>/killed-stops.json   {"kills": [{"signal": 9, "at": "<UTC>", "session": "<id>"}]}

A Stop of a bound session that runs to the end empties the row, so it holds the Stops
killed in a row. It lives beside the ledger, where the guard and the kernel layer keep the
agent out; the killed Stop's own stop message, the next prompt and session start of a
session with a goal, and `forge goal status` say how many, and which layer stops a killer.
"""

from __future__ import annotations

import os

from forge_runtime import fastjson
from forge_runtime.errors import EXIT_REFUSED, ForgeError

FILE_NAME = "killed-stops.json"
KEPT = 100  # a row longer than this is told as "100 or more"
FIX = "forge sandbox enable"
LAYER = ("the kernel layer stops that (the agent's Bash runs in its own PID namespace, "
         "where forge's hooks cannot be seen)")


def _path(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, FILE_NAME)


def row(ledger_root: str | os.PathLike) -> list[dict]:
    """The Stops killed in a row, oldest first (none when the file is missing or not
    forge's: this is what forge tells, never what decides a goal's autonomy)."""
    try:
        with open(_path(ledger_root), "rb") as handle:
            kills = fastjson.loads(handle.read()).get("kills")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(kills, list):
        return []
    return [kill for kill in kills if isinstance(kill, dict) and
            isinstance(kill.get("signal"), int)]


def add(ledger_root: str | os.PathLike, session_id: str, signal_number: int) -> list[dict]:
    """Add one killed Stop to the row; the row as it now stands. Not locked: two Stops
    killed at the same instant may count as one (the row tells; it never decides)."""
    import time

    kills = [*row(ledger_root), {"signal": signal_number, "session": session_id,
                                 "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]
    kills = kills[-KEPT:]
    os.makedirs(ledger_root, exist_ok=True)
    path = _path(ledger_root)
    temp = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(fastjson.dumps({"kills": kills}))
    os.replace(temp, path)
    return kills


def clear(ledger_root: str | os.PathLike) -> None:
    """A Stop ran to the end: the row is broken (one failed unlink when there is none)."""
    try:  # noqa: SIM105 (`contextlib` is one more import on every charging Stop)
        os.unlink(_path(ledger_root))
    except FileNotFoundError:
        pass


def _signal_name(number: int) -> str:
    import signal  # enum with it: only when there is a kill to name

    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def summary(kills: list[dict]) -> str:
    """"3 Stop hooks in a row were killed by signal 9 (SIGKILL), the last at <UTC>, not by
    the host's timeout", for a non-empty row."""
    numbers = sorted({kill["signal"] for kill in kills})
    how = " or ".join(_signal_name(number) for number in numbers)
    last = kills[-1].get("at")
    if len(kills) == 1:
        told = f"forge's Stop hook was killed by {how}" + (f" at {last}" if last else "")
    else:
        count = f"{len(kills)} or more" if len(kills) >= KEPT else str(len(kills))
        told = f"{count} Stop hooks in a row were killed by {how}" + (
            f", the last at {last}" if last else "")
    return f"{told}, not by the host's timeout"


def refusal(kills: list[dict], signal_number: int) -> ForgeError:
    """Why a killed Stop ends autonomy, with the row it belongs to (`kills` may be empty
    when the row could not be written)."""
    told = summary(kills) if kills else summary([{"signal": signal_number}])
    return ForgeError(f"{told}, so forge ends this goal's autonomy (the next prompt catches its "
                      "turns up); something in this session is killing forge's hooks, and "
                      f"{LAYER}", FIX, exit_code=EXIT_REFUSED, code="FORGE_GOAL_HOOK_KILLED")


def warning(kills: list[dict]) -> ForgeError:
    """What the person is told about a non-empty row, away from the Stop it ended."""
    return ForgeError(f"{summary(kills)}: something in this session is killing forge's hooks, "
                      f"and {LAYER}", FIX, exit_code=EXIT_REFUSED, code="FORGE_GOAL_HOOK_KILLED")


def notice(ledger_root: str | os.PathLike) -> str | None:
    """`warning` for the row beside this ledger, rendered; None when there is no row (one
    failed open)."""
    kills = row(ledger_root)
    return warning(kills).hint().render() if kills else None


def with_notice(reply: dict | None, ledger_root: str | os.PathLike) -> dict | None:
    """`reply` with the row's notice as the person's `systemMessage`, unless it already
    carries one (one hint per message) or there is no row."""
    if reply and "systemMessage" in reply:
        return reply
    told = notice(ledger_root)
    return {**(reply or {}), "systemMessage": told} if told else reply
