"""`forge doctor`: is this install and this project ready for forge, and if not, what fixes it.

Each check answers one question and, when the answer is no, carries the one full command
that repairs it. The checks only read: doctor never changes anything it inspects.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from forge_runtime import (
    bootstrap,
    command_path,
    distribution,
    hook_python,
    hook_settings,
    resources,
    statusline_settings,
)
from forge_runtime.claude_binary import ClaudeNotFound, find_claude
from forge_runtime.errors import ForgeError
from forge_runtime.hook_settings import LAUNCHER_NAME
from forge_runtime.hooks.dispatch import EVENT_MODULES
from forge_runtime.host_contract import claude_code, newer_than, version_key
from forge_runtime.host_version import running_claude
from forge_runtime.hosts.codex import codex_home
from forge_runtime.notify import config, outbox
from forge_runtime.project import Project
from forge_runtime.sandbox import posture, scopes, tools

MIN_PYTHON = (3, 11)
# The events the plugin or settings must register: every one the dispatcher routes.
HOOK_EVENTS = tuple(EVENT_MODULES)
VERSION_TIMEOUT_SECONDS = 20


@dataclass(frozen=True)
class Check:
    """One question about the install: its answer, and the command that fixes a "no"."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _python_command() -> str:
    return shlex.quote(sys.executable)


def check_python() -> Check:
    found = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] >= MIN_PYTHON:
        return Check("python", True, f"Python {found} at {sys.executable}")
    wanted = ".".join(map(str, MIN_PYTHON))
    return Check("python", False, f"Python {found} is older than {wanted}",
                 distribution.pip_install(f"python{wanted}"))


def check_dependencies() -> Check:
    missing = hook_python.missing_modules()
    if not missing:
        return Check("dependencies", True,
                     f"hook dependencies importable: {', '.join(bootstrap.HOOK_MODULES)}")
    return Check("dependencies", False, f"cannot import {', '.join(missing)}",
                 bootstrap.pip_fallback())


def _restore(root: Path, relative: str) -> str:
    """How to get a shipped plugin file back: from git in a checkout, else a reinstall."""
    if (root / ".git").exists():
        return f"git -C {shlex.quote(str(root))} checkout -- {shlex.quote(relative)}"
    return distribution.pip_install(_python_command(), reinstall=True)


def _plugin_problem(root: Path) -> tuple[str, str] | None:
    """The first thing wrong with the plugin bundle at `root`, with its fix; None if sound."""
    manifest = ".claude-plugin/plugin.json"
    try:
        if json.loads((root / manifest).read_text(encoding="utf-8")).get("name") != "forge":
            return f"{manifest} does not name the plugin forge", _restore(root, manifest)
    except (OSError, ValueError, AttributeError):
        return f"{manifest} is missing or not a JSON object", _restore(root, manifest)
    hooks_file = "hooks/hooks.json"
    try:
        events = json.loads((root / hooks_file).read_text(encoding="utf-8"))["hooks"]
        absent = [event for event in HOOK_EVENTS if event not in events]
    except (OSError, ValueError, KeyError, TypeError):
        return f"{hooks_file} is missing or unreadable", _restore(root, hooks_file)
    if absent:
        return f"{hooks_file} does not register {', '.join(absent)}", _restore(root, hooks_file)
    launcher = root / "hooks" / "forge-hook"
    if not (launcher.is_file() and os.access(launcher, os.X_OK)):
        return "hooks/forge-hook is missing or not executable", \
            f"chmod +x {shlex.quote(str(launcher))}"
    return None


def check_hook_wiring(project: Project) -> Check:
    """The plugin bundle when forge runs from one; otherwise `.claude/settings.json`."""
    root = resources.plugin_root()
    if root is not None:
        problem = _plugin_problem(root)
        if problem:
            return Check("plugin", False, problem[0], problem[1])
        return Check("plugin", True, f"plugin bundle at {root}: manifest, hooks, launcher")
    settings_path = project.root / ".claude" / "settings.json"
    try:
        settings = hook_settings.read_settings(settings_path)
    except ForgeError as exc:
        return Check("hooks", False, exc.message, exc.fix)
    wired = {event for event, groups in (settings.get("hooks") or {}).items()
             for group in groups for hook in group.get("hooks", [])
             if hook_settings.is_forge_hook(hook)}
    absent = [event for event in HOOK_EVENTS if event not in wired]
    if absent:
        return Check("hooks", False, f".claude/settings.json does not run forge for "
                                     f"{', '.join(absent)}", "forge init --hooks")
    stale = _stale_matchers(settings)
    if stale:
        return Check("hooks", False, f".claude/settings.json starts forge's {', '.join(stale)} "
                                     "for other tools than this forge registers (an older "
                                     "forge's wiring), so some calls escape the guard or a "
                                     "goal's budget", "forge init --hooks")
    return Check("hooks", True, ".claude/settings.json runs forge's hooks")


def _stale_matchers(settings: dict) -> list[str]:
    """The events whose forge hooks in `settings` start on other matchers or conditions
    (`if`) than the ones hooks/hooks.json declares: a wiring an older forge wrote."""
    def starts(groups: list) -> list:
        return sorted(json.dumps([group.get("matcher"), hook.get("if")])
                      for group in groups for hook in group.get("hooks", [])
                      if hook_settings.is_forge_hook(hook))

    declared = hook_settings.pip_registrations()
    wired = settings.get("hooks") or {}
    return [event for event in HOOK_EVENTS
            if starts(wired.get(event, [])) != starts(declared.get(event, []))]


def _interpreter_of(hook: dict) -> str | None:
    """The Python a hook entry of forge's runs, or None for the plugin's launcher."""
    command = str(hook.get("command", ""))
    if "args" in hook:
        return command
    try:
        words = shlex.split(command)
    except ValueError:
        words = [command]
    if not words or words[0].endswith(f"/{LAUNCHER_NAME}"):
        return None
    return words[0]


def _wired_interpreters(project: Project) -> list[tuple[str, str, str]]:
    """(interpreter, where, the command that wires it) for every forge hook and status line
    a settings file of this project wires, and FORGE_PYTHON when this environment sets it
    (the plugin's launcher runs that)."""
    found = []
    for relative in (".claude/settings.json", ".claude/settings.local.json",
                     hook_settings.CODEX_HOOKS_FILE.as_posix()):
        try:
            groups = hook_settings.read_settings(project.root / relative).get("hooks") or {}
        except ForgeError:
            continue  # the hooks check reports an unreadable file
        for listed in groups.values():
            for group in listed:
                for hook in group.get("hooks", []):
                    python = _interpreter_of(hook) if hook_settings.is_forge_hook(hook) \
                        else None
                    if python is not None:
                        found.append((python, relative, "forge init --host codex"
                                      if relative.startswith(".codex") else
                                      "forge init --hooks"))
    found += _status_line_interpreters(project)
    if os.environ.get("FORGE_PYTHON"):
        found.append((os.environ["FORGE_PYTHON"], "FORGE_PYTHON", "forge init --hooks"))
    return list(dict.fromkeys(found))


def _status_line_interpreters(project: Project) -> list[tuple[str, str, str]]:
    """(interpreter, file) for forge's status line in each file `--statusline` writes."""
    found = []
    for scope in statusline_settings.SCOPES:
        path = statusline_settings.settings_path(scope, project.root)
        try:
            entry = hook_settings.read_settings(path).get(statusline_settings.KEY)
        except ForgeError:
            continue
        command = entry.get("command") if isinstance(entry, dict) else None
        if not statusline_settings.is_forge(command):
            continue
        words = [word for word in shlex.split(command) if "=" not in word.split("/")[0]]
        if words:
            found.append((words[0], str(path), f"forge init --statusline --scope {scope}"))
    return found


def check_hook_interpreter(project: Project) -> Check:
    """No hook of forge's runs a Python from a directory the agent can write."""
    wired = _wired_interpreters(project)
    for python, where, again in wired:
        problem = hook_settings.interpreter_problem(python, project.root)
        if problem:
            refused = hook_settings.interpreter_refused(python, project.root, again)
            return Check("hook interpreter", False, f"{problem} ({where})", refused.fix)
    if not wired:
        return Check("hook interpreter", True, "no Python wired by hand: the plugin's "
                                               "launcher picks one outside the project")
    return Check("hook interpreter", True, "forge's hooks run "
                 + ", ".join(sorted({python for python, _, _ in wired}))
                 + ": outside the project and its temp directories")


def codex_installed(project: Project) -> bool:
    """Whether forge was installed for Codex here (`forge init --host codex`)."""
    return (project.root / ".codex" / "hooks.json").is_file() or \
        (project.root / ".agents" / "skills" / "forge-status").is_dir()


def _trust_key(hooks_file: Path, event: str, group: int, hook: int) -> str:
    """Codex's key for one hook's trust in config.toml's `[hooks.state]` (measured)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in event).lstrip("_")
    return f"{hooks_file}:{snake}:{group}:{hook}"


TRUST_STEP = "codex"
TRUST_WHY = ("start Codex in this project and answer its `Hooks need review` screen with "
             "`Trust all and continue` (later: /hooks); untrusted hooks are skipped silently")


def check_codex(project: Project) -> Check:
    """Codex: forge's hooks in `.codex/hooks.json`, the project trusted, each hook trusted."""
    hooks_file = project.root / hook_settings.CODEX_HOOKS_FILE
    try:
        groups = hook_settings.read_settings(hooks_file).get("hooks") or {}
    except ForgeError as exc:
        return Check("codex", False, exc.message, exc.fix)
    found = {event: (g, h) for event, listed in groups.items()
             for g, group in enumerate(listed) for h, hook in enumerate(group.get("hooks", []))
             if hook_settings.is_forge_hook(hook)}
    absent = [event for event in hook_settings.CODEX_EVENTS if event not in found]
    if absent:
        return Check("codex", False, f".codex/hooks.json does not run forge for "
                                     f"{', '.join(absent)}", "forge init --host codex")
    config_path = codex_home(None) / "config.toml"
    try:
        config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        config = {}
    trusted_project = ((config.get("projects") or {}).get(str(project.root)) or {}) \
        .get("trust_level") == "trusted"
    states = (config.get("hooks") or {}).get("state") or {}
    untrusted = [event for event, (g, h) in found.items()
                 if not (states.get(_trust_key(hooks_file, event, g, h)) or {})
                 .get("trusted_hash")]
    if not trusted_project or untrusted:
        what = "the project is not trusted by Codex" if not trusted_project else \
            f"Codex has not trusted forge's {', '.join(untrusted)} hook(s)"
        return Check("codex", False, f"{what} ({config_path}): {TRUST_WHY}", TRUST_STEP)
    return Check("codex", True, f".codex/hooks.json runs forge's {len(found)} hooks; Codex "
                                f"trusts them ({config_path})")


def check_project(project: Project) -> Check:
    if not (project.forge_dir / "installed.json").is_file():
        return Check("project", False, f"forge is not installed in {project.root}", "forge init")
    state = project.state_path
    shown = state.relative_to(project.root).as_posix()
    if not state.is_file():
        return Check("project", False, f"{shown} is missing", "forge init")
    try:
        # lazy: the state file needs yaml; without it the check says so
        from forge_runtime.goal.store import state_file as state_file

        state_file.validate(state, state_file.read(state))
    except ImportError:
        return Check("project", False, "cannot read the state file without its dependencies",
                     bootstrap.pip_fallback())
    except ForgeError as exc:
        # goal sync rebuilds an active goal's fields; a file that does not parse needs a
        # fresh template (the broken one is kept beside it, and the ledger still holds
        # any goal, failing closed until it is synced).
        aside = shlex.quote(f"{shown}.broken")
        return Check("project", False, exc.message.replace(str(state), shown),
                     f"mv {shlex.quote(shown)} {aside} && forge init")
    return Check("project", True, f".forge/ installed in {project.root}; {shown} parses")


def check_host_binary() -> Check:
    try:
        binary = find_claude()
    except ClaudeNotFound as exc:
        return Check("host", False, str(exc),
                     f"{_python_command()} -m pip install claude-agent-sdk")
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("host", False, f"{binary} --version failed: {exc}",
                     f"{_python_command()} -m pip install --force-reinstall claude-agent-sdk")
    version = done.stdout.strip()
    if done.returncode != 0 or not version:
        return Check("host", False, f"{binary} --version exited {done.returncode}",
                     f"{_python_command()} -m pip install --force-reinstall claude-agent-sdk")
    return Check("host", True, f"Claude Code {version} at {binary}")


def _running_claude() -> tuple[str | None, str]:
    """(version, executable) of the Claude Code this runs under, else of the one forge
    finds (None when there is none, or it does not say)."""
    running = running_claude()
    if running is not None:
        return running
    try:
        binary = find_claude()
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_SECONDS, check=False)
    except ClaudeNotFound:
        return None, "no Claude Code found"
    except (OSError, subprocess.SubprocessError):
        return None, str(binary)
    return (done.stdout.split() or [None])[0], str(binary)


def check_host_version() -> Check:
    """Whether the host is a version forge's host contract was measured on: a newer one
    may read, write or start turns in ways forge does not know (the drift check says)."""
    version, where = _running_claude()
    measured = ", ".join(claude_code.MEASURED)
    if version_key(version) is None:
        return Check("host version", True, f"cannot tell the Claude Code version ({where}); "
                                           f"forge was measured on {measured}")
    if newer_than(version, claude_code.MEASURED):
        return Check("host version", False,
                     f"Claude Code {version} ({where}) is newer than {claude_code.MEASURED[-1]}"
                     f", the newest version forge's host contract was measured on: forge may "
                     "not know what it reads, writes or starts",
                     f"{_python_command()} -m forge_runtime.host_drift --claude "
                     f"{shlex.quote(where)}")
    return Check("host version", True, f"Claude Code {version} ({where}); forge's host "
                                       f"contract was measured on {measured}")


def check_kernel_layer(project: Project) -> Check:
    """The same reading as `forge sandbox status`, without asking the host binary.

    Settings that switch forge off (`disableAllHooks`, an `env` naming the hooks' program)
    or a sandbox that cannot run fail the check; a sandbox that is merely off passes, with
    the command that adds it, since the guard still stands.
    """
    found = posture.gaps(posture.read(project), project, tools.find())
    serious = [gap for gap in found if gap.rank < 3]
    if serious:
        return Check("sandbox", False, serious[0].message, serious[0].fix)
    if found:
        return Check("sandbox", True, f"{found[0].message} (add it: {found[0].fix})")
    return Check("sandbox", True, "the host's kernel sandbox protects the ledger, forge's "
                                  "guard files and the settings that could switch forge off")


def check_command() -> Check:
    """Which `forge` a shell with this PATH runs: another program of that name first on PATH
    would take every `Next: forge ...` hint forge prints."""
    found = command_path.first_on_path()
    if found is None:
        return Check("command", True, "no `forge` on this PATH (inside Claude Code forge's "
                                      "SessionStart puts the plugin's cli/ on it)")
    if command_path.is_ours(found):
        return Check("command", True, f"`forge` on PATH is this forge ({found})")
    ours = command_path.plugin_cli_dir() or os.path.dirname(os.path.abspath(sys.argv[0]))
    return Check("command", False, f"the `forge` on PATH is {found}, another program: forge's "
                                   "hints would run it",
                 f'export PATH={shlex.quote(ours)}:"$PATH"')


# Measured with bench/worktree_sandbox.py on Claude Code 2.1.337 (docs/guard.md): Bash
# calls the host's sandbox failed to start, sessions running at once in linked work trees
# of one repository, against the same sessions in separate clones.
TREES_MEASURED = ("4 sessions: 25 of 620 calls (about 1 in 25), 2 sessions: 1 of 170; "
                  "in separate clones, 4 sessions: 0 of 280")


def linked_trees(project: Project) -> int:
    """How many work trees share this project's git dir (1: none linked)."""
    if project.git_common_dir is None:
        return 1
    try:
        names = os.listdir(os.path.join(project.git_common_dir, "worktrees"))
    except OSError:
        return 1
    return 1 + sum(os.path.isdir(os.path.join(project.git_common_dir, "worktrees", name))
                   for name in names)


def check_linked_trees(project: Project) -> Check:
    """Sessions at once in linked work trees, with the host's sandbox on, share the git
    dir's `config.lock`, where the sandbox makes and removes a mount point around each
    command: one session's call then fails to start when another's mount point goes (the
    host's race; no setting forge can write avoids it, docs/guard.md)."""
    trees = linked_trees(project)
    return Check("work trees", True, (
        f"this repository has {trees} work trees (git worktree) and the host's Bash sandbox "
        "is on: sessions running at once in them share the git dir's config.lock, where "
        "Claude Code's sandbox makes and removes a mount point around each command, so some "
        "Bash calls fail to start (`bwrap: Can't find source path .../.git/config.lock`, "
        f"measured {TREES_MEASURED}); such a call never ran, and running it again is safe; "
        "goals meant to run at once are better in separate clones"))


PLUGINS_FILE = ("plugins", "installed_plugins.json")
KNOWN_MARKETPLACES = ("plugins", "known_marketplaces.json")


def _forge_marketplaces(project: Project) -> dict[str, str]:
    """{marketplace: the settings file enabling `forge@<marketplace>`} over the settings
    files the host reads for this project."""
    found = {}
    for _, path in scopes.files_in_force(project):
        try:
            settings = scopes.read(path) or {}
        except ForgeError:
            continue
        enabled = settings.get("enabledPlugins")
        for key, on in (enabled.items() if isinstance(enabled, dict) else ()):
            if isinstance(key, str) and key.startswith("forge@") and on is True:
                found.setdefault(key.split("@", 1)[1], str(path))
    return found


def _marketplace_source(project: Project, name: str) -> str | None:
    """The kind of source (`directory`, `github`, `git`, ...) the host has, or the settings
    declare, for marketplace `name`; None when neither says."""
    claude = os.path.join(scopes.home_dir(), ".claude")
    try:
        known = json.loads(Path(claude, *KNOWN_MARKETPLACES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    declared = [known.get(name) if isinstance(known, dict) else None]
    for _, path in scopes.files_in_force(project):
        try:
            extra = (scopes.read(path) or {}).get("extraKnownMarketplaces")
        except ForgeError:
            continue
        declared.append(extra.get(name) if isinstance(extra, dict) else None)
    for entry in declared:
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, dict) and isinstance(source.get("source"), str):
            return source["source"]
    return None


def _installed(project: Project, plugin: str) -> bool:
    """Whether the host's install records hold `plugin` for this project."""
    try:
        records = json.loads(Path(scopes.home_dir(), ".claude", *PLUGINS_FILE)
                             .read_text(encoding="utf-8"))["plugins"][plugin]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if not isinstance(records, list):
        return False
    root = os.path.realpath(project.root)
    return any(isinstance(record, dict) and (
        record.get("scope") in ("user", "managed") or
        (isinstance(record.get("projectPath"), str) and
         os.path.realpath(record["projectPath"]) == root)) for record in records)


def check_plugin_fetched(project: Project) -> Check | None:
    """forge enabled from a marketplace the host fetches (git, GitHub) but not installed
    yet: the next start fetches it, and a headless one (`claude -p`, the Agent SDK) runs
    without forge's hooks (measured, Claude Code 2.1.337: three `-p` starts in a row ran
    none; `claude plugin install` then made the next one run them). None when no settings
    file enables forge from a marketplace."""
    found = _forge_marketplaces(project)
    if not found:
        return None
    for marketplace, where in sorted(found.items()):
        plugin = f"forge@{marketplace}"
        if _marketplace_source(project, marketplace) != "directory" and \
                not _installed(project, plugin):
            return Check("plugin fetch", False, (
                f"{where} enables {plugin}, which Claude Code has not installed yet: a "
                "headless start (`claude -p`, the Agent SDK) fetches it in the background "
                "and runs without forge's hooks, so no guard and no goal budget, until a "
                "later start"), f"claude plugin install {plugin}")
    return Check("plugin fetch", True, ", ".join(f"forge@{name}" for name in sorted(found))
                 + ": installed, or loaded in place from a local directory: a headless start "
                   "runs forge's hooks from its first prompt")


def check_notify(project: Project) -> Check | None:
    """The channels a goal's end is sent through (notify/config.py) and the messages that
    did not reach them; None when no channel is configured and nothing failed."""
    failures = outbox.unanswered(project.ledger_root)
    if not config.present(project.root) and not failures:
        return None
    try:
        channels = config.load(project.root)
    except ForgeError as exc:
        return Check("notify", False, exc.message, exc.fix)
    if failures:
        return Check("notify", False, f"{len(failures)} message(s) about goals did not reach "
                     f"every channel since the last that did: "
                     f"{outbox.failure_words(failures[-1])}", "forge notify test")
    if not channels:
        return Check("notify", True, "no channel configured: a goal's end is told in its "
                                     "session only")
    return Check("notify", True, "a goal's end is sent to "
                 + ", ".join(channel.label for channel in channels))


def run_checks(project: Project) -> list[Check]:
    """Every check, in the order a person would fix them."""
    checks: list[Callable[[], Check]] = [
        check_python, check_dependencies, lambda: check_hook_wiring(project),
        lambda: check_hook_interpreter(project),
        lambda: check_project(project), check_host_binary, check_host_version,
        lambda: check_kernel_layer(project),
        check_command,
    ]
    if codex_installed(project):
        checks.insert(4, lambda: check_codex(project))
    fetched = check_plugin_fetched(project)
    if fetched is not None:
        checks.insert(3, lambda: fetched)
    if linked_trees(project) > 1 and _sandbox_on(project):
        checks.append(lambda: check_linked_trees(project))
    notify = check_notify(project)
    if notify is not None:
        checks.append(lambda: notify)
    return [check() for check in checks]


def _sandbox_on(project: Project) -> bool:
    return posture.read(project).value("enabled") is True
