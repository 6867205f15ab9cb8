"""`forge init --hooks` / `--host codex`: wire forge's hooks into a host's project settings.

People who pip-install forge instead of adding the plugin get the same registrations
as the plugin's `hooks/hooks.json` (same events, matchers and timeouts), pointing at the
interpreter that has forge installed, in exec form (`"args"`, no shell), isolated (`-I`: the
project, the hook's working directory, is never on `sys.path`, and no PYTHON* variable from a
settings file's `env` applies). The merge keeps
every other key and every other hook, replaces forge's own entries instead of adding a
second copy, and leaves a file it cannot read exactly as it was.

For Codex CLI the same merge writes `.codex/hooks.json` (Codex's project hook file, in
Claude Code's hooks format): each hook is one command line,
`<python> -I -m forge_runtime.hooks --host codex <Event>`, for the events that matter there
(SessionStart only bootstraps the Claude Code plugin's environment).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from forge_runtime import agent_roots, distribution, resources
from forge_runtime.errors import ForgeError
from forge_runtime.host_contract import codex
from forge_runtime.initializer import write_atomically

HOOK_MODULE_ARGS = ["-m", "forge_runtime.hooks"]
# Claude Code hooks of a pip install run isolated; an entry without the flag (written by an
# older forge) is still forge's own, to be replaced.
ISOLATED = "-I"
LAUNCHER_NAME = "forge-hook"


def plugin_registrations(bundle: Path | None = None) -> dict[str, list[dict]]:
    """The plugin's hook groups by event, as `hooks/hooks.json` declares them."""
    bundle = bundle or resources.bundle_root()
    declared = json.loads((bundle / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    return declared["hooks"]


def pip_registrations(python: str = sys.executable,
                      bundle: Path | None = None) -> dict[str, list[dict]]:
    """The same groups, each hook running `<python> -I -m forge_runtime.hooks <Event>`."""
    wired: dict[str, list[dict]] = {}
    for event, groups in plugin_registrations(bundle).items():
        wired[event] = []
        for group in groups:
            hooks = [{**hook, "command": python, "args": [ISOLATED, *HOOK_MODULE_ARGS, event]}
                     for hook in group["hooks"]]
            wired[event].append({**group, "hooks": hooks})
    return wired


CODEX_EVENTS = tuple(codex.HOOK_EVENTS)  # the events forge's contract reads from Codex
CODEX_HOOKS_FILE = Path(".codex") / "hooks.json"


def codex_registrations(python: str = sys.executable,
                        bundle: Path | None = None) -> dict[str, list[dict]]:
    """The plugin's groups for CODEX_EVENTS, each hook one `--host codex` command line."""
    wired: dict[str, list[dict]] = {}
    for event, groups in plugin_registrations(bundle).items():
        if event not in CODEX_EVENTS:
            continue
        # -I, as for Claude Code: Codex runs hooks in the project, and `python -m` would put
        # it first on sys.path (a `forge_runtime/` the agent wrote there would be what runs);
        # isolated mode also ignores the PYTHON* variables an environment could set
        command = shlex.join([python, ISOLATED, *HOOK_MODULE_ARGS, "--host", "codex", event])
        wired[event] = [{**group, "hooks": [
            {"type": "command", "command": command, "timeout": hook.get("timeout", 30)}
            for hook in group["hooks"]]} for group in groups]
    return wired


def is_forge_hook(hook: object) -> bool:
    """True for a hook entry forge wrote (either the pip form or the plugin launcher)."""
    if not isinstance(hook, dict):
        return False
    args = hook.get("args")
    if isinstance(args, list) and HOOK_MODULE_ARGS in (args[:2], args[1:3]):
        return True
    command = str(hook.get("command", ""))
    return "forge_runtime.hooks" in command or command.endswith(f"/{LAUNCHER_NAME}")


def merged(settings: dict, wiring: dict[str, list[dict]]) -> dict:
    """`settings` with forge's previous entries removed and `wiring` added, others untouched."""
    hooks = dict(settings.get("hooks") or {})
    for event in [*hooks, *(name for name in wiring if name not in hooks)]:
        kept = []
        for group in hooks.get(event, []):
            others = [hook for hook in group.get("hooks", []) if not is_forge_hook(hook)]
            if others:
                kept.append({**group, "hooks": others})
            elif not group.get("hooks"):
                kept.append(group)
        combined = kept + wiring.get(event, [])
        if combined:
            hooks[event] = combined
        else:
            hooks.pop(event, None)
    return {**settings, "hooks": hooks}


def _broken(path: Path, problem: str, again: str | None) -> ForgeError:
    if again is None:
        again = "forge init --host codex" if path.parent.name == ".codex" \
            else "forge init --hooks"
    return ForgeError(f"{path} {problem}; forge left it untouched",
                      f"{shlex.quote(sys.executable)} -m json.tool {shlex.quote(str(path))}",
                      rationale=f"shows where the file is broken; repair it, then run "
                                f"{again} again",
                      or_=[again])


def read_settings(path: Path, again: str | None = None) -> dict:
    """The settings object, `{}` when the file does not exist; ForgeError when unusable
    (its hints name `again`, the command that wanted to change the file; by default the
    one that wires this file's hooks)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise _broken(path, f"cannot be read ({exc.__class__.__name__})", again) from None
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise _broken(path, f"is not valid JSON ({exc})", again) from None
    if not isinstance(settings, dict):
        raise _broken(path, f"holds a JSON {type(settings).__name__}, not an object", again)
    hooks = settings.get("hooks")
    if hooks is not None and not (isinstance(hooks, dict) and all(
            isinstance(groups, list) and all(isinstance(g, dict) for g in groups)
            for groups in hooks.values())):
        raise _broken(path, "has a \"hooks\" key that is not a map of event to hook groups",
                      again)
    return settings


# Where `interpreter_refused` points a person whose forge lives in a directory the agent
# can write: an environment of forge's own in their home directory.
OWN_ENV = "~/.venvs/forge"


def interpreter_problem(python: str, project_root: Path) -> str | None:
    """Why `python` must not run forge's hooks, or None: it lies in a directory the agent
    can write (forge_runtime/agent_roots.py), where a virtual environment's `.pth` files and
    site-packages, or the interpreter itself, are the agent's code run in every hook."""
    roots = agent_roots.roots(project_root)
    home = os.path.realpath(os.path.expanduser("~"))
    # A project that holds the home directory leaves no place of the person's own to point
    # to: there the agent can write everything forge could pick, and nothing is refused.
    roots = [root for root in roots if agent_roots.holder(home, [root]) is None]
    held = agent_roots.holder(python, roots)
    if held is None:
        return None
    return (f"the Python forge would run its hooks with, {python}, is in {held}, which the "
            "agent can write: its .pth files and site-packages would run in every hook, "
            "outside the agent's sandbox")


def interpreter_refused(python: str, project_root: Path, again: str) -> ForgeError | None:
    """The refusal of `forge init` to wire `python`, with the way to an interpreter of
    forge's own; None when `python` is fine."""
    problem = interpreter_problem(python, project_root)
    if problem is None:
        return None
    own = f"{OWN_ENV}/bin/python"
    return ForgeError(f"{problem}; forge wired nothing",
                      f"python3 -m venv {OWN_ENV} && {own} -m pip install "
                      f"{shlex.quote(distribution.source())} && {own} -m forge_runtime "
                      f"{again.removeprefix('forge ')}",
                      rationale="installs forge into an environment of its own in your home "
                                "directory and wires that one")


def wire_hooks(project_root: Path, python: str = sys.executable) -> tuple[Path, bool]:
    """Merge forge's hooks into `<root>/.claude/settings.json`; return (path, changed)."""
    return _wire(project_root / ".claude" / "settings.json", pip_registrations(python))


def wire_codex_hooks(project_root: Path, python: str = sys.executable) -> tuple[Path, bool]:
    """Merge forge's hooks into `<root>/.codex/hooks.json`; return (path, changed)."""
    return _wire(project_root / CODEX_HOOKS_FILE, codex_registrations(python))


def _wire(path: Path, wiring: dict[str, list[dict]]) -> tuple[Path, bool]:
    settings = read_settings(path)
    updated = merged(settings, wiring)
    if updated == settings:
        return path, False
    write_atomically(path, (json.dumps(updated, indent=2) + "\n").encode("utf-8"))
    return path, True
