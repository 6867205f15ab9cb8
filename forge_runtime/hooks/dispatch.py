"""Route one host event to its module, and keep our own bugs out of a person's session.

The contract for every event module:
    REQUIRED: dict of field name -> type that the event must carry (besides the common ones)
    handle(event: dict) -> dict | None       the JSON reply, or None for the no-op reply
    on_failure(problem: str) -> dict | None  optional: the reply when the input is malformed
                                             or handle() raised; the guard answers deny here,
                                             everything else answers nothing (fail open),
                                             unless a goal's contract says fail closed.
    deadline_seconds() -> float              optional: a hard limit on the whole event; past
                                             it the process dies (see `arm_watchdog`).
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
    try:
        event = parse_event(stdin.read(), event_name, getattr(module, "REQUIRED", {}))
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
    if reply:
        stdout.write(fastjson.dumps(reply) + "\n")
    if deadline is not None:
        stdout.flush()
        import faulthandler

        faulthandler.cancel_dump_traceback_later()
    return 0
