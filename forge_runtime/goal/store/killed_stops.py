"""Stop hooks killed by someone else's signal: recorded beside the ledger, told to the person.

The host ends a hook that outlives its timeout by signalling the hook's whole process group,
forge's launcher included (measured: hooks/forge-hook), so the launcher dies with its
interpreter and nothing answers. Two deaths are therefore someone else's doing (another
process, the OOM killer):

- the interpreter killed while its launcher lives: the launcher runs `entry.py killed
  <signal>` (forge_runtime/hooks/stop.py `on_killed`);
- the launcher killed while its interpreter runs (a process that kills whatever names the
  Stop hook on its command line): the interpreter finds its launcher gone once it has
  charged the turn (`launcher_gone`); the signal is not its to see.

Either ends a goal's autonomy and adds the kill to this repository's row of killed Stops:

    <ledger root>/killed-stops.json   {"kills": [{"signal": 9, "at": "<UTC>", "session": "<id>"}]}

(`"signal": null` for a launcher). A Stop of a bound session that runs to the end with its
launcher empties the row, so it holds the Stops killed in a row. It lives beside the ledger,
where the guard and the kernel layer keep the agent out; the killed Stop's own stop
message, the next prompt and session start of a session with a goal, and `forge goal
status` say how many, and which layer stops a killer.
"""

import os

from forge_runtime import fastjson
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.store.layout import killed_stops_file

KEPT = 100  # a row longer than this is told as "100 or more"
FIX = "forge sandbox enable"
CAUSE = ("something in this session is killing forge's hooks (or the machine ran out of "
         "memory), and the kernel layer stops that (the agent's Bash runs in its own PID "
         "namespace, where forge's hooks cannot be seen)")


def row(ledger_root: str | os.PathLike) -> list[dict]:
    """The Stops killed in a row, oldest first (none when the file is missing or not
    forge's: this is what forge tells, never what decides a goal's autonomy)."""
    from forge_runtime import safeio

    try:
        kills = fastjson.loads(safeio.read_bytes(killed_stops_file(ledger_root))).get("kills")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(kills, list):
        return []
    return [kill for kill in kills if isinstance(kill, dict) and
            (kill.get("signal") is None or isinstance(kill.get("signal"), int))]


def add(ledger_root: str | os.PathLike, session_id: str,
        signal_number: int | None) -> list[dict]:
    """Add one killed Stop to the row; the row as it now stands. Not locked: two Stops
    killed at the same instant may count as one (the row tells; it never decides)."""
    import time

    kills = [*row(ledger_root), {"signal": signal_number, "session": session_id,
                                 "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]
    kills = kills[-KEPT:]
    from forge_runtime import safeio

    safeio.replace(killed_stops_file(ledger_root), fastjson.dumps({"kills": kills}).encode("utf-8"),
                   durable=False, create_dirs=True)
    return kills


def clear(ledger_root: str | os.PathLike) -> None:
    """A Stop ran to the end: the row is broken (one failed unlink when there is none)."""
    try:  # noqa: SIM105 (`contextlib` is one more import on every charging Stop)
        os.unlink(killed_stops_file(ledger_root))
    except FileNotFoundError:
        pass


def launcher_gone() -> bool:
    """Whether the launcher that started this hook (`forge_runtime.launcher_pid`, its pid as
    the launcher saw it) died while the hook ran: it is no longer this process's parent and
    no longer exists (a wrapper between the two leaves it alive and waiting). False outside
    the launcher (Codex's wiring, the CLI). One or two system calls."""
    from forge_runtime import launcher_pid

    if launcher_pid is None or os.getppid() == launcher_pid:
        return False
    try:
        os.kill(launcher_pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _how(kills: list[dict]) -> str:
    """"signal 9 (SIGKILL)", "signal 9 (SIGKILL) or signal 15 (SIGTERM)", "a signal to its
    launcher (which forge cannot see)"."""
    import signal  # enum with it: only when there is a kill to name

    named = []
    for number in sorted({kill["signal"] for kill in kills if kill.get("signal") is not None}):
        try:
            named.append(f"signal {number} ({signal.Signals(number).name})")
        except ValueError:
            named.append(f"signal {number}")
    if any(kill.get("signal") is None for kill in kills):
        named.append("a signal to its launcher (which forge cannot see)")
    return " or ".join(named)


def summary(kills: list[dict]) -> str:
    """"3 Stop hooks in a row were killed by signal 9 (SIGKILL), the last at <UTC>, not by
    the host's timeout" ("forge's Stop hook was killed at <UTC> by ..." for one), for a
    non-empty row."""
    how, last = _how(kills), kills[-1].get("at")
    if len(kills) == 1:
        told = "forge's Stop hook was killed" + (f" at {last}" if last else "") + f" by {how}"
    else:
        count = f"{len(kills)} or more" if len(kills) >= KEPT else str(len(kills))
        told = f"{count} Stop hooks in a row were killed by {how}" + (
            f", the last at {last}" if last else "")
    return f"{told}, not by the host's timeout"


def refusal(kills: list[dict]) -> ForgeError:
    """Why a killed Stop ends autonomy, with the row it closes."""
    return ForgeError(f"{summary(kills)}, so forge ends this goal's autonomy (the next prompt "
                      f"catches its turns up); {CAUSE}", FIX, exit_code=EXIT_REFUSED,
                      code="FORGE_GOAL_HOOK_KILLED")


def warning(kills: list[dict]) -> ForgeError:
    """What the person is told about a non-empty row, away from the Stop it ended."""
    return ForgeError(f"{summary(kills)}: {CAUSE}", FIX, exit_code=EXIT_REFUSED,
                      code="FORGE_GOAL_HOOK_KILLED")


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
