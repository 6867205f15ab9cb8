"""SessionStart: make sure this session's hooks and its Bash tool can run forge.

When the interpreter running hooks lacks forge's dependencies, the first session after
install builds `${CLAUDE_PLUGIN_DATA}/forge-env` (see forge_runtime.bootstrap); every later
hook of the session then runs there. If that cannot be done, the person sees one message
with its Fix, and the session goes on: hooks that must fail closed still do so on their own.

The agent's Bash tool runs `forge` hints, but the host passes it no CLAUDE_PLUGIN_*
variables and puts none of the plugin's folders on its PATH (the launcher is in `cli/`, not
`bin/`: forge_runtime.command_path), where another program called `forge` may be. A
SessionStart hook may export variables to the session's Bash commands through the file
named by CLAUDE_ENV_FILE, so this hook puts the plugin's `cli/` first on PATH and tells
`cli/forge` which Python has forge's dependencies. Without that file, a foreign `forge`
first on PATH is told to the person once.
And it tells the person when the repository's last Stop hooks were killed by someone else's
signal, and when the running Claude Code is newer than any version forge was measured on.
"""

import os

REQUIRED: dict[str, type] = {}


def handle(event: dict) -> dict | None:
    from forge_runtime import hook_python

    data_dir = os.environ.get("CLAUDE_PLUGIN_DATA")
    python = hook_python.settled(data_dir)
    if python is None:  # something to build, or a reason it cannot be
        from forge_runtime import bootstrap
        from forge_runtime.errors import ForgeError

        try:
            outcome = bootstrap.ensure(data_dir, os.environ.get("CLAUDE_PLUGIN_ROOT"))
        except ForgeError as exc:
            return {"systemMessage": exc.hint().render()}
        python = bootstrap.python_for(outcome, data_dir)
    reply = None if export_to_bash(python) else foreign_forge_notice()
    return newer_host_notice(killed_stops_notice(event, reply))


def newer_host_notice(reply: dict | None) -> dict | None:
    """Tell the person, in one line, when this Claude Code is newer than every version
    forge's host contract was measured on (host_version: a few system calls, not a second
    start of the host); before another notice, as its first line."""
    from forge_runtime.host_contract import claude_code, newer_than
    from forge_runtime.host_version import claude_version

    running = claude_version()
    if not newer_than(running, claude_code.MEASURED):
        return reply
    line = (f"forge: Claude Code {running} is newer than {claude_code.MEASURED[-1]}, the "
            "newest version forge's host contract was measured on")
    told = (reply or {}).get("systemMessage")
    if told:
        return {**reply, "systemMessage": f"{line}\n{told}"}
    from forge_runtime import hints

    return {**(reply or {}), "systemMessage": f"{line}\n{hints.next_('forge doctor').render()}"}


def foreign_forge_notice() -> dict | None:
    """Without the host's environment file, another program first on PATH called `forge`
    would take forge's hints: tell the person once."""
    from forge_runtime.command_path import foreign_forge

    foreign = foreign_forge()
    if foreign is None:
        return None
    from forge_runtime import hints

    return {"systemMessage": hints.error(
        f"the `forge` this session's Bash runs first is {foreign}, another program, so "
        "forge's hints would run it", "forge doctor",
        "use the plugin's forge by its full path, or put its cli/ first on PATH").render()}


def killed_stops_notice(event: dict, reply: dict | None = None) -> dict | None:
    """Tell the person when this repository's last Stop hooks were killed by someone else's
    signal (forge_runtime/goal/store/killed_stops.py): the killer may live on into this session."""
    from forge_runtime.goal.store import killed_stops
    from forge_runtime.roots import ledger_root_of

    return killed_stops.with_notice(reply, ledger_root_of(
        os.environ.get("CLAUDE_PROJECT_DIR") or event.get("cwd") or None))


def export_to_bash(python: str) -> bool:
    """Export FORGE_PYTHON, and the plugin's `cli/` first on PATH, to the host's per-session
    Bash environment file; False when the host gave none."""
    from forge_runtime.command_path import plugin_cli_dir
    from forge_runtime.guard.shell.lexer import quote

    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if not env_file:
        return False
    lines = [f"export FORGE_PYTHON={quote(python)}\n"]
    directory = plugin_cli_dir()
    if directory is not None:
        lines.append(f'export PATH={quote(directory)}:"$PATH"\n')
    from forge_runtime import safeio

    safeio.append(env_file, "".join(lines).encode("utf-8"))  # the host's file: no FIFO
    return True
