"""The guard's decision for one tool call: allow (None) or deny with a hint-contract reason.

Two independent checks, both only ever restricting:
1. Roles. The roles in force are the subagent's (from `agent_type`), the session's guarded
   mode, and (for forge's SDK sessions) the role the caller names; the tool must be allowed
   by every one of them.
2. Protected paths, for every session: file tools and Bash may not write the ledger,
   forge's guard files or the goal fields of state.md; an MCP tool may not even name them.
   While a goal is in progress the gates file is one of them, and no tool may read the gate
   receipts' key (gate_files.py).

Fail closed: any exception while deciding is a deny, as is a broken project rule file for
a guarded session. The host lets a crashing or slow hook through, so the guard must answer
deny itself, fast. A read (Read, Grep, Glob), which no role refuses, is answered from the
key check alone, in every session; a session with no role that calls another tool which
cannot write anything is answered after one `stat` of the mode file.
"""

import os

from forge_runtime.guard import READ_ONLY, gate_files, modes
from forge_runtime.protected import paths

# Return values are `forge_runtime.hints.Hint` objects and roles `roles.Role`; the
# annotations leave those names out so the allow path imports neither `hints`, `roles`
# (fnmatch, so re) nor `typing`.

# apply_patch is Codex's file tool: its patch text names the files it writes (patch.py).
WRITING_TOOLS = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"})
# Tools forge cannot read the effect of: refused when their input names a protected place.
OPAQUE_TOOLS = frozenset({"PowerShell"})
MCP_PREFIX = "mcp__"
# An opaque tool's input with more strings than this, or more characters to resolve as
# paths, is refused unread: each resolution is a `realpath`, one system call per part.
MAX_OPAQUE_STRINGS = 2000
MAX_OPAQUE_PATH_CHARS = 200_000
MAX_PATH_CHARS = 4096
GUARD = "forge guard"
DOCTOR = "forge doctor"
PROTECTION_RATIONALE = ("forge protects the goal ledger, its guard files, the goal fields of "
                        "state.md and the host's settings that keep it on, in every session; "
                        "only its hooks and a person change them")


def decide(event: dict, *, env: dict[str, str] | None = None,
           role=None):
    """None to let the call through, else the `Hint` that explains the deny.

    `role` is an extra role imposed by the caller (forge's SDK sessions).
    """
    try:
        return _decide(event, dict(os.environ) if env is None else env, role)
    except Exception as exc:  # fail closed: a guard that cannot decide denies
        from forge_runtime import hints

        return hints.error(f"{GUARD} could not decide ({exc.__class__.__name__}: {exc}), so it "
                           "denies", DOCTOR, "the guard never lets a call through unchecked")


def _decide(event: dict, env: dict[str, str], role):
    tool = event["tool_name"]
    tool_input = event["tool_input"]
    session_id = event["session_id"]
    if not isinstance(tool, str) or not isinstance(tool_input, dict) \
            or not isinstance(session_id, str):
        raise ValueError("tool_name, tool_input or session_id has the wrong type")
    agent_type = event.get("agent_type")
    if agent_type is not None and not isinstance(agent_type, str):
        raise ValueError("agent_type is not a string")
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    from forge_runtime.roots import ledger_root, locate

    dirs = locate(env.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd())  # strings: no pathlib
    cwd = cwd or dirs[0]
    if tool in READ_ONLY:  # reading is never a role's to refuse: no mode, no rules
        return _key_denial(tool, tool_input, cwd, env, dirs)
    mode = modes.read_mode(paths.guard_dir(dirs), session_id)
    touches_world = (tool in WRITING_TOOLS or tool in OPAQUE_TOOLS
                     or tool.startswith(MCP_PREFIX))
    guarded = role is not None or mode is not None or agent_type is not None
    if tool_input.get("dangerouslyDisableSandbox") is True:
        escape = _sandbox_escape(ledger_root(dirs[0], dirs[2]), session_id, guarded)
        if escape is not None:
            return escape
    key_read = _key_denial(tool, tool_input, cwd, env, dirs)
    if key_read is not None:
        return key_read
    if not guarded and not touches_world:
        return None
    extra_protected = ()
    # Without a role, only a rule file's extra protected paths could apply: no file, no
    # rules to load (nor their modules to import, on every Bash call).
    if guarded or os.path.isfile(paths.rule_file(dirs)):
        from forge_runtime.errors import ForgeError
        from forge_runtime.guard import rules as rules_module
        try:
            rules = rules_module.for_project(dirs)
        except ForgeError as exc:
            if guarded:
                return exc.hint()
            rules = rules_module.DEFAULT_RULES
        for current, from_mode in _roles_in_force(rules, agent_type, mode, role):
            if not current.allows(tool):
                return _role_denial(current, tool, session_id, from_mode)
        extra_protected = rules.protected
    if not touches_world:
        return None
    protected = [*paths.protected_paths(dirs, extra_protected, env),
                 gate_files.gates_entry(dirs)]
    finding = _protection_finding(tool, tool_input, cwd, env, protected)
    if gate_files.may_be_the_gates_file(finding, tool_input):
        without = _protection_finding(tool, tool_input, cwd, env, protected[:-1])
        if without is None:  # the gates file is all that is at stake
            nonce = gate_files.in_progress(ledger_root(dirs[0], dirs[2]))
            if nonce is not None:
                return gate_files.refusal(tool, finding, nonce)
        finding = without
    if finding is None:
        return None
    from forge_runtime import hints

    entry = finding.entry
    message = f"{GUARD}: {tool} {finding.message}"
    if entry is not None and entry.rationale == paths.HOST_RATIONALE and \
            paths.SWITCH_OFF not in message:
        message += "; a change there can switch forge off"
    return hints.error(message, entry.fix if entry else "forge guard roles",
                       entry.rationale if entry and entry.rationale else PROTECTION_RATIONALE)


def _key_denial(tool: str, tool_input: dict, cwd: str, env: dict[str, str], dirs):
    """The deny for a call that would read the gate receipts' key, in every session."""
    from forge_runtime.roots import ledger_root

    key_read = gate_files.key_finding(tool, tool_input, cwd, env,
                                      ledger_root(dirs[0], dirs[2]))
    if key_read is None:
        return None
    from forge_runtime import hints

    return hints.error(f"{GUARD}: {tool} {key_read.message}", "forge gate status",
                       "the key seals receipts for forge's own runs; no agent reads it")


def _sandbox_escape(ledger_root: str, session_id: str, guarded: bool):
    """The deny for a call asking to run outside the host's sandbox, in a session with a role
    or a goal: the kernel layer is what keeps such a session off the ledger."""
    from forge_runtime.goal.store import sessions

    if not guarded and not sessions.involvement(ledger_root, session_id):
        return None
    from forge_runtime import hints

    return hints.error(f"{GUARD}: this session has a goal or a role, so its commands stay in "
                       "the host's sandbox (dangerouslyDisableSandbox is refused)",
                       "forge sandbox status", "run the command without "
                       "dangerouslyDisableSandbox; a person runs what truly needs more")


def _roles_in_force(rules, agent_type: str | None, mode: str | None,
                    role) -> list[tuple]:
    """Each role that applies, paired with whether it comes from the session's mode."""
    from forge_runtime.guard.roles import NOTHING

    in_force = []
    if agent_type is not None:
        agent_role = rules.role_for_agent(agent_type)
        if agent_role is not None:
            in_force.append((agent_role, False))
    if mode is not None:
        in_force.append((rules.roles.get(mode, NOTHING), True))
    if role is not None:
        in_force.append((role, False))
    return in_force


def _role_denial(role, tool: str, session_id: str, from_mode: bool):
    from forge_runtime import hints

    allowed = ", ".join([*role.tools, *(t for t in READ_ONLY if t not in role.tools)])
    message = f"{GUARD}: the {role.name} role may not use {tool} (it may use {allowed})"
    if from_mode:
        return hints.error(message, f"forge mode exit --session {session_id}",
                           "a person ends the mode when the read-only step is done; until "
                           "then keep to reading and asking")
    return hints.error(message, "forge guard roles",
                       "this role only reads and asks; report what should change instead")


def _protection_finding(tool: str, tool_input: dict, cwd: str, env: dict[str, str],
                        protected: list[paths.Protected]) -> paths.Finding | None:
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            raise ValueError("Bash input has no command string")
        from forge_runtime.guard import shell

        return shell.analyse(command, cwd, env, protected)
    if tool.startswith(MCP_PREFIX) or tool in OPAQUE_TOOLS:
        return _opaque_finding(tool_input, cwd, env, protected)
    if tool == "apply_patch":
        from forge_runtime.guard import patch

        return patch.check(tool_input, cwd, env, protected)
    from forge_runtime.guard import edits

    return edits.check(tool, tool_input, cwd, env, protected)


def _opaque_finding(tool_input: dict, cwd: str, env: dict[str, str],
                    protected: list[paths.Protected]) -> paths.Finding | None:
    """An MCP tool or PowerShell is opaque: refuse it when its input names a protected path,
    by a telling name (`forge-goals`) or by any string that resolves into one."""
    import json

    text = json.dumps(tool_input, ensure_ascii=False).lower()
    for marker in paths.MARKERS:
        if marker in text:
            return paths.Finding(f"names a protected location ({marker}) in its arguments")
    for entry in protected:
        if entry.path.lower() in text:
            return paths.Finding(f"names {entry.label} in its arguments", entry)
    values = _strings(tool_input, MAX_OPAQUE_STRINGS)
    if values is None:
        return paths.Finding(f"holds more than {MAX_OPAQUE_STRINGS} strings in its arguments, "
                             "too many to check in time")
    candidates = [value for value in values if len(value) < MAX_PATH_CHARS and "\n" not in value]
    if sum(map(len, candidates)) > MAX_OPAQUE_PATH_CHARS:
        return paths.Finding(f"holds more than {MAX_OPAQUE_PATH_CHARS:,} characters of "
                             "path-like strings in its arguments, too many to check in time")
    for value in candidates:
        path = paths.expand(value, cwd, env)
        entry = paths.hit(path, protected, destructive=False) if path else None
        if entry:
            return paths.Finding(f"names {entry.label} in its arguments ({value})", entry)
    return None


def _strings(value, limit: int) -> list[str] | None:
    """Every string inside a JSON value (keys aside), or None when there are over `limit`.

    Each string may be resolved as a path (a `realpath`, several system calls), so the walk
    is bounded before any of that runs; it is iterative, so no nesting depth overflows.
    """
    found: list[str] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if len(found) == limit:
                return None
            found.append(item)
        elif isinstance(item, dict):
            pending.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            pending.extend(reversed(item))
    return found
