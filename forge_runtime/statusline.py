"""`python -P -c "from forge_runtime.statusline import main; main()" [--wrap COMMAND]`:
forge's part of Claude Code's status line (`python -m forge_runtime.statusline` also works).

Claude Code (2.1.332, measured) runs the `statusLine.command` of its settings through a
shell in the project directory, with the session's JSON on stdin (`session_id`,
`transcript_path`, `cwd`, `workspace.project_dir`, `model`, `cost`, `context_window`, ...)
and CLAUDE_PROJECT_DIR / CLAUDE_CODE_SESSION_ID in the environment; stdout is a pipe. It
runs it at start, again whenever the session changes (every second or two while a goal's
turns run), and every `refreshInterval` seconds when that is set. So this is a hot path,
like a hook: a session with no goal pays two stat calls and imports nothing but `os`-based
modules (not json, pathlib or runpy, hence `-c`), and `-P` keeps a module planted in the
project from being imported.

On a subscription login its input also carries the plan's windows (`rate_limits`, read
from the API's rate-limit headers; no hook input has them): for a session bound to a goal
or with a pending `/goal`, forge keeps them where the hooks read them (goal/hosts/plan_readings.py),
with the usage of the newest answer the input holds (`context_window.current_usage`), and
the gauge shows the windows the goal watches with these newest figures.

It never prints an error: one line about the session's goal, `forge: ledger needs
attention` when the ledger or state.md does not check out (the Stop hook says what is wrong
and the fix), or nothing for a session without a goal and for input it cannot read.

`--wrap COMMAND` keeps a person's own status line (`forge init --statusline` sets this up):
COMMAND runs with the same input, after forge's part (a goal's tool call waits for the plan
reading forge keeps, and COMMAND may take up to OWN_TIMEOUT_S), its output is printed as it
was, and forge's part joins its last line. `--wrap-inherited COMMAND` does the same for a
command forge took from a settings file of lower precedence (removing forge's line then
leaves the file without one).
"""

# lazy: the status line runs as often as a hook (see above); each function imports
# what its line shows.
from __future__ import annotations

import os
import sys

INPUT_LIMIT = 1 << 20
OWN_TIMEOUT_S = 10.0
WRAP_FLAG = "--wrap"
INHERITED_FLAG = "--wrap-inherited"
SEPARATOR = "  "
# A ledger lock held longer than this (a charge, or a holder that never lets go) shows the
# attention line: the status line redraws on every event and must not lag behind one.
STATUS_LOCK_SECONDS = 1.0


def _colour() -> bool:
    """The host draws this line on the person's terminal (our stdout is its pipe): colour
    unless NO_COLOR is set or the terminal is a dumb one."""
    return "NO_COLOR" not in os.environ and os.environ.get("TERM", "dumb") != "dumb"


def session_line(project, session_id: str, *, unicode: bool, colour: bool,
                 reading: dict | None = None) -> str:
    """The line for a session bound to a goal, after the Stop hook's own head and state
    checks; anything that does not check out is the attention line. `reading`: the plan's
    windows the host reports now (goal/budget/plan.py), newer than the goal's last charge."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.rules import consistency
    from forge_runtime.goal.store import sessions
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.views import checkpoint, gauge

    try:
        binding = sessions.read_binding(project.ledger_root, session_id) or {}
        nonce = binding.get("nonce")
        if not isinstance(nonce, str) or len(nonce) != 32 or not nonce.isalnum():
            return gauge.attention(colour)
        ledger = Ledger(project.ledger_root, nonce)
        with ledger.lock(seconds=STATUS_LOCK_SECONDS):
            head = ledger.head()
            current = consistency.check(project.state_path, ledger, head)
            pace = _pace(ledger, head, binding)
    except (ForgeError, OSError, KeyError, TypeError):
        return gauge.attention(colour)
    goal = head.goal
    if reading and reading["windows"] and isinstance(goal.get("plan_ceilings"), dict):
        from forge_runtime.goal.budget import plan

        goal = plan.advanced(goal, reading)  # what the next charge records, shown now
    return gauge.line(goal, checkpoint.of_tasks(current.tasks),
                      gauge.stuck_turns(head.record), unicode=unicode, colour=colour,
                      outlook=_outlook(goal, pace))


def _pace(ledger, head, binding: dict):
    """A running goal's pace (goal/views/forecast.py), from the tranche start its session's
    Stop noted (one record read; without a note, a walk back of one tranche); None for a
    goal that is not running."""
    if head.goal["status"] != "active":
        return None
    from forge_runtime.goal.views import tranche

    return tranche.pace(ledger, head, binding.get(tranche.SEQ_KEY))[0]


def _outlook(goal: dict, pace) -> str | None:
    """The gauge's forecast of a running goal at `pace`."""
    if pace is None:
        return None
    import time

    from forge_runtime.goal.views import forecast, gauge

    now = int(time.time())
    return gauge.runway_text(forecast.runways(goal, pace, now), now)


def _heard_from_api(event: dict) -> bool:
    """True once the host has had an answer from the API in this process: before that its
    input has no `rate_limits` on any login (it reads them from the answers' headers).
    The time it spent on the API says so (host_contract/claude_code.API_DURATION)."""
    from forge_runtime.host_contract.claude_code import API_DURATION

    section, field = API_DURATION
    cost = event.get(section)
    spent = cost.get(field) if isinstance(cost, dict) else None
    return isinstance(spent, (int, float)) and spent > 0


def keep_plan_reading(ledger_root: str, event: dict) -> dict | None:
    """The plan's windows in the host's input as a reading, kept for the hooks (a copy
    under the ledger root, its mirror in the witness root: goal/hosts/plan_readings.py) with the
    usage of the newest answer the input holds (a tool call waits for the figures of the
    answer that asked for it: goal/hosts/plan_freshness.py); None when none is kept. A reading
    without windows from before the host's first answer says nothing about the login, so
    it does not replace what is kept."""
    import time

    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.budget import plan
    from forge_runtime.goal.hosts import plan_readings
    from forge_runtime.goal.hosts.plan_freshness import usage_key

    reading = plan.from_statusline(event, int(time.time()))
    if not reading["windows"] and not _heard_from_api(event):
        return None
    context = event.get("context_window")
    answer = usage_key(context.get("current_usage")) if isinstance(context, dict) else None
    try:
        plan_readings.record(ledger_root, event["session_id"], reading, answer)
    except (ForgeError, OSError):
        return None  # the mirror is written first: a stale copy then fails closed (latest)
    return reading


def _quick_session_id(raw: bytes) -> str | None:
    """The session id from input that starts as the host's does, `{"session_id": "<id>"`,
    read without the json module (json imports `re`: most of what a lean interpreter would
    spend here). None for any other shape: then the full parse decides."""
    prefix = b'{"session_id":'
    head = raw[:256].lstrip()
    if not head.startswith(prefix):
        return None
    rest = head[len(prefix):].lstrip()
    end = rest.find(b'"', 1)
    value = rest[1:end] if rest.startswith(b'"') and end > 1 else b""
    if not value.replace(b"-", b"a").replace(b"_", b"a").isalnum():  # ASCII only, no escapes
        return None
    return value.decode("ascii")


def _surely_without_goal(raw: bytes) -> bool:
    """True when the host's session has no binding, decided with os.path alone; only with
    the host's CLAUDE_PROJECT_DIR, which names the project as `sessions.project_for` does."""
    session_id = _quick_session_id(raw)
    project_dir = os.environ.get("CLAUDE_PROJECT_DIR")
    if session_id is None or not project_dir:
        return False
    from forge_runtime.goal.store import sessions
    from forge_runtime.roots import ledger_root_of

    return not sessions.involvement(ledger_root_of(project_dir), session_id)


def forge_part(raw: bytes, *, colour: bool = False) -> str:
    """forge's line for the host's status-line input `raw`, or "" (no goal, bad input)."""
    if _surely_without_goal(raw):
        return ""
    import json

    try:
        event = json.loads(raw)
    except ValueError:  # UnicodeDecodeError included
        return ""
    if not isinstance(event, dict) or not isinstance(event.get("session_id"), str):
        return ""
    from forge_runtime.goal.store import sessions
    from forge_runtime.goal.views import gauge

    project = sessions.project_for(event)
    involved = sessions.involvement(project.ledger_root, event["session_id"])
    reading = None
    if involved & {sessions.BOUND, sessions.PENDING}:
        reading = keep_plan_reading(str(project.ledger_root), event)
    if sessions.BOUND not in involved:  # the witness knowing it bound: its binding was lost
        return gauge.attention(colour) if sessions.WITNESSED in involved else ""
    return session_line(project, event["session_id"], unicode=gauge.unicode_ok(),
                        colour=colour, reading=reading)


def own_output(command: str, raw: bytes) -> str:
    """What the person's own status-line command prints for the same input ("" when it
    cannot run or takes too long); its stderr goes where ours goes."""
    import subprocess

    try:
        done = subprocess.run(command, shell=True, input=raw, stdout=subprocess.PIPE,
                              timeout=OWN_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.decode("utf-8", errors="replace").rstrip("\n")


def joined(own: str, ours: str) -> str:
    """The person's output with forge's part at the end of its last line."""
    if not own or not ours:
        return own or ours
    return f"{own}{SEPARATOR}{ours}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        raw = sys.stdin.buffer.read(INPUT_LIMIT)
    except (OSError, ValueError):
        raw = b""
    wraps = len(argv) == 2 and argv[0] in (WRAP_FLAG, INHERITED_FLAG)
    try:  # first: a goal's tool call waits for the plan reading this keeps
        ours = forge_part(raw, colour=_colour())
    except Exception:  # a bug of ours: never a traceback on the person's screen
        ours = ""
    own = own_output(argv[1], raw) if wraps else ""
    text = joined(own, ours)
    if text:  # in the terminal's encoding, whatever the person's own command printed
        out = sys.stdout
        out.buffer.write((text + "\n").encode(out.encoding or "utf-8", errors="replace"))
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
