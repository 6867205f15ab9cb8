"""Route one host event to its module, and keep our own bugs out of a person's session.

What an event module offers here (REQUIRED and handle; on_failure, deadline_seconds, and
watchdog_seconds with on_wedged when it has them) and what a host adapter does are declared
in hooks/contract.py and hosts/contract.py; this module reads them by name, since importing
`typing` would cost every hook. A module without on_failure answers nothing when its input
is malformed or it fails (fail open); the guard's on_failure denies, the Stop's ends a
goal's autonomy.
"""

import io
import sys

from forge_runtime import fastjson

EVENT_MODULES = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
    "StopFailure": "stop_failure",
    "Interrupt": "interrupt",
    "SubagentStop": "subagent_stop",
    "SessionEnd": "session_end",
}

COMMON_FIELDS = {"session_id": str, "hook_event_name": str}

FIX = "forge doctor"


class InvalidEvent(ValueError):
    """The host sent something we cannot read as this event."""


def parse_event(raw: bytes, event_name: str, required: dict[str, type]) -> dict:
    """Decode and check the event; raise InvalidEvent with a precise reason."""
    if not raw.strip():
        raise InvalidEvent("empty input (the host sends one JSON object on stdin)")
    try:
        event = fastjson.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidEvent(f"input is not JSON ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(event, dict):
        raise InvalidEvent(f"input is a JSON {type(event).__name__}, not an object")
    for name, kind in {**COMMON_FIELDS, **required}.items():
        if not isinstance(event.get(name), kind):
            raise InvalidEvent(f"field {name!r} is missing or not a {kind.__name__}")
    if event["hook_event_name"] != event_name:
        raise InvalidEvent(
            f"hook_event_name is {event['hook_event_name']!r}, expected {event_name!r}")
    return event


def _say(stderr: io.TextIOBase, event_name: str, problem: str) -> None:
    from forge_runtime import hints

    text = hints.error(f"forge {event_name} hook: {problem}", FIX).render()
    stderr.write(text + "\n")


def split_host(argv: list[str]) -> tuple[str, list[str]]:
    """`[--host NAME] EVENT` -> (host, [EVENT]); no `--host` is Claude Code (the plugin)."""
    from forge_runtime.hosts import DEFAULT

    if argv[:1] == ["--host"] and len(argv) >= 2:
        return argv[1], argv[2:]
    return DEFAULT, argv


def arm_watchdog(seconds: float) -> None:
    """Kill this process `seconds` from now unless the reply was written by then.

    A hard limit, not a check between steps: `faulthandler` keeps its own C thread, which
    needs no GIL, so it fires in the middle of a regex, a glob or a deep expansion too. It
    writes the stuck stack to stderr and exits with status 1; forge's launcher answers that
    with a deny, and the host blocks a PreToolUse hook that exits so (`"onFailure": "block"`).
    """
    import faulthandler

    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.__stderr__)


class Wedged(BaseException):
    """Raised into the hook's work by its watchdog: the event took too long. A
    BaseException, so no `except Exception` of forge's turns it into an ordinary failure."""


# May only shorten a watchdog (tests wedge a hook with it); a larger or unreadable value is
# ignored, so no setting can switch it off.
WATCHDOG_ENV = "FORGE_HOOK_WATCHDOG"
# How long after the watchdog the process is killed when the work does not let go (C code
# that never returns to the interpreter): still below every host timeout forge is given.
_HARD_AFTER = 3.0


class Watchdog:
    """An event module with `on_wedged` answers before the host's timeout, whatever the work
    tree holds.

    The host kills a hook that outlives its timeout, and takes forge's launcher with it, so
    nobody answers and the session works on uncharged; a charge that waits on something the
    agent controls (a FIFO, a lock it holds) would do exactly that at every Stop. At
    `seconds`, SIGALRM raises `Wedged` into whatever the hook is doing (a blocked system call
    returns EINTR, so a wait ends too), `with` blocks let go of their locks, and the event's
    `on_wedged` answers: a goal's autonomy ends with FORGE_GOAL_WEDGED. Should the work not
    let go (C code that never returns to the interpreter), `arm_watchdog` ends the process
    `_HARD_AFTER` later and the launcher answers for it.
    """

    def __init__(self, seconds: float) -> None:
        # `_signal`, not `signal`: the latter builds its enums with `enum`, 4 ms of imports
        # every Stop, prompt and session end of every session would pay
        import _signal as signal
        import os

        try:
            wanted = float(os.environ.get(WATCHDOG_ENV, seconds))
        except ValueError:
            wanted = seconds
        self.seconds = wanted if 0 < wanted < seconds else seconds
        self._signal = signal
        signal.signal(signal.SIGALRM, self._fire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        arm_watchdog(self.seconds + _HARD_AFTER)

    @staticmethod
    def _fire(signum, frame) -> None:
        raise Wedged()

    def disarm(self) -> None:
        """No more raising: called before the reply is written (the hard limit stays until
        the reply is out)."""
        self._signal.setitimer(self._signal.ITIMER_REAL, 0)


def _event_module(name: str):
    """forge_runtime.hooks.<name> (`__import__` and sys.modules: `importlib` is one more
    import for every hook)."""
    qualified = f"forge_runtime.hooks.{name}"
    __import__(qualified)
    return sys.modules[qualified]


def run(argv: list[str], stdin: io.BufferedIOBase, stdout: io.TextIOBase,
        stderr: io.TextIOBase) -> int:
    """Handle one event; always exit 0 and answer in JSON so the host decides by our reply."""
    from forge_runtime import hosts

    host_name, argv = split_host(argv)
    if host_name not in hosts.NAMES:
        _say(stderr, "launcher", f"--host is {host_name!r}, expected one of "
                                 f"{', '.join(hosts.NAMES)}")
        return 1
    if len(argv) != 1 or argv[0] not in EVENT_MODULES:
        _say(stderr, "launcher", f"expected one event name of {', '.join(EVENT_MODULES)}, "
                                 f"got {' '.join(argv) or 'nothing'}")
        return 1
    event_name = argv[0]
    module = _event_module(EVENT_MODULES[event_name])
    on_failure = getattr(module, "on_failure", lambda problem: None)
    host = hosts.adapter(host_name)
    deadline = getattr(module, "deadline_seconds", None)
    if deadline is not None:
        arm_watchdog(deadline())
    on_wedged = getattr(module, "on_wedged", None)
    watchdog = Watchdog(module.watchdog_seconds(host)) if on_wedged is not None else None
    event = None
    try:
        try:
            event = parse_event(stdin.read(), event_name, module.REQUIRED)
            problem = host.shape_problem(event_name, event)
            if problem:
                raise InvalidEvent(problem)
            reply = host.handle(event_name, module, event)
        except InvalidEvent as exc:
            _say(stderr, event_name, str(exc))
            reply = on_failure(str(exc))
        except Exception as exc:  # a bug of ours: report it in one line, never a traceback
            problem = f"internal error {exc.__class__.__name__}: {exc}"
            _say(stderr, event_name, problem)
            reply = on_failure(problem)
    except Wedged:
        _say(stderr, event_name, f"no answer within {watchdog.seconds:g} s (wedged)")
        reply = on_wedged(event, watchdog.seconds)
        if event is not None:  # the host's terms, as for any reply
            reply = host.wedged_reply(event_name, event, reply)
    if watchdog is not None:
        watchdog.disarm()
    if reply:
        stdout.write(fastjson.dumps(reply) + "\n")
    if deadline is not None or watchdog is not None:
        stdout.flush()
        import faulthandler

        faulthandler.cancel_dump_traceback_later()
    tell(event, reply)
    return 0


def tell(event: dict | None, reply: dict | None) -> None:
    """Once the reply is out, start the message for what this event ended (a goal's end,
    a refusal, the stuck warning: notify/); nothing is imported when nothing was noted."""
    noted = sys.modules.get("forge_runtime.goal.rules.end_notes")
    if noted is None or not noted.NOTED:
        return
    import os

    from forge_runtime.notify.trigger import after_event
    from forge_runtime.roots import locate

    try:
        root = locate(os.environ.get("CLAUDE_PROJECT_DIR") or (event or {}).get("cwd")
                      or None)[0]
    except OSError:
        return
    after_event(root, event, reply)
