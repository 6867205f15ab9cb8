"""What protects forge right now: every settings file the host reads, the tools, the host.

The posture is read from the files, in the host's precedence order, and each way it falls
short is a gap with the one full command that closes it. Worst first:
0. a settings file that does not parse, or `disableAllHooks: true` (no forge hook runs);
1. a settings `env` naming the program forge's hooks run (FORGE_PYTHON, PATH,
   CLAUDE_PLUGIN_DATA): whatever it names runs outside any sandbox;
2. the sandbox on without bubblewrap >= 0.8.0 and socat;
3. the sandbox off, or on without `failIfUnavailable`, with `allowUnsandboxedCommands`, or
   without forge's deny rules: the ledger then rests on the guard's shell analysis alone.
"""

from __future__ import annotations

import os

from forge_runtime import hints
from forge_runtime.errors import ForgeError
from forge_runtime.project import Project
from forge_runtime.records import record
from forge_runtime.sandbox import layer, scopes

ENV_SWITCHES = ("FORGE_PYTHON", "PATH", "CLAUDE_PLUGIN_DATA")
KEYS = ("enabled", "failIfUnavailable", "allowUnsandboxedCommands")
HOST_TIMEOUT_SECONDS = 20
UNSANDBOXED = "FORGE_GOAL_UNSANDBOXED"
TOLD_DIR = "unsandboxed-told"
ENABLE = "forge sandbox enable"


# Records (records.py) rather than named tuples, and `subprocess`, `shlex` and `json` only
# where the CLI needs them: a person's `/goal` reads the posture from the settings files.
class Gap(record("Gap", "rank message fix rationale alternatives", defaults=(None, ()))):
    """One way the posture falls short, and the full command that closes it."""

    __slots__ = ()


class Posture(record("Posture", "files effective deny env")):
    """`files`: (scope, path, problem or None) per file read; `effective`: key -> (value,
    path) after precedence; `deny`: every deny rule in force; `env`: (path, name, value)."""

    __slots__ = ()

    def value(self, key: str):
        return self.effective.get(key, (None, None))[0]


def read(project: Project) -> Posture:
    files, effective, deny, env = [], {}, set(), []
    for scope, path in scopes.files_in_force(project):
        try:
            settings = scopes.read(path)
        except ForgeError as exc:
            files.append((scope, path, exc.message))
            continue
        if settings is None:
            continue
        files.append((scope, path, None))
        sandbox = settings.get("sandbox") if isinstance(settings.get("sandbox"), dict) else {}
        for key in KEYS:
            if key in sandbox:
                effective[key] = (sandbox[key], path)
        if "disableAllHooks" in settings:
            effective["disableAllHooks"] = (settings["disableAllHooks"], path)
        permissions = settings.get("permissions")
        rules = permissions.get("deny") if isinstance(permissions, dict) else None
        deny.update(rule for rule in rules or [] if isinstance(rule, str))
        variables = settings.get("env") if isinstance(settings.get("env"), dict) else {}
        env += [(path, name, str(variables[name])) for name in ENV_SWITCHES
                if name in variables]
    return Posture(files, effective, deny, env)


def missing_rules(posture: Posture, project: Project) -> list[str]:
    """forge's deny rules not in force, each in its project-settings spelling."""
    return [sorted(forms)[0] for forms in layer.rule_forms(project)
            if not forms & posture.deny]


def sandbox_holes(posture: Posture, project: Project) -> list[str]:
    """Why the sandbox does not protect the ledger, in words; empty when it does."""
    holes = []
    if posture.value("enabled") is not True:
        holes.append("the host's Bash sandbox is off")
    if posture.value("failIfUnavailable") is not True:
        holes.append("failIfUnavailable is not true (a missing bwrap lets Bash run "
                     "unsandboxed)")
    if posture.value("allowUnsandboxedCommands") is not False:
        holes.append("allowUnsandboxedCommands is not false (dangerouslyDisableSandbox "
                     "walks out)")
    missing = missing_rules(posture, project)
    if missing:
        holes.append(f"{len(missing)} of forge's deny rules are missing ({missing[0]}, ...)")
    return holes


def ledger_protected(project: Project) -> bool:
    """True when the kernel layer keeps every Bash command and file tool off the ledger."""
    posture = read(project)
    return posture.value("enabled") is True and posture.value("failIfUnavailable") is True \
        and posture.value("allowUnsandboxedCommands") is False \
        and bool(layer.ledger_rules(project) & posture.deny)


def _drop_key(path: str | os.PathLike, expression: str) -> str:
    """A full command that deletes one key of a JSON settings file, keeping the rest."""
    import shlex

    code = (f"import json, sys; p = sys.argv[1]; d = json.load(open(p)); {expression}; "
            "open(p, 'w').write(json.dumps(d, indent=2) + chr(10))")
    return f"python3 -c {shlex.quote(code)} {shlex.quote(str(path))}"


def gaps(posture: Posture, project: Project, tools) -> list[Gap]:
    found = [Gap(0, f"settings file {path} {problem}", f"python3 -m json.tool {path}")
             for _, path, problem in posture.files if problem]
    hooks_off, where = posture.effective.get("disableAllHooks", (None, None))
    if hooks_off is True:
        found.append(Gap(
            0, f"disableAllHooks is true in {where}: the host runs none of forge's hooks "
               "(no guard, no goal budget)", _drop_key(where, "d.pop('disableAllHooks')"),
            "removes that one key; managed settings' disableAllHooks: false outranks it",
            (f"sudo {ENABLE} --scope managed",)))
    for path, name, value in posture.env:
        found.append(Gap(
            1, f"{path} sets env {name}={value}: forge's hooks run the program it names, "
               "outside any sandbox", _drop_key(path, f"d['env'].pop({name!r})"),
            "removes that one variable; forge finds its own interpreter"))
    holes = sandbox_holes(posture, project)
    if tools.problem and posture.value("enabled") is True:
        from forge_runtime.sandbox.tools import INSTALL

        found.append(Gap(2, f"the sandbox is on but {tools.problem}", INSTALL))
    if holes:
        found.append(Gap(3, "the ledger rests on the guard's shell analysis alone: "
                            + "; ".join(holes), ENABLE,
                         "adds the host's kernel sandbox and deny rules to "
                         ".claude/settings.json, keeping every other setting"))
    return sorted(found, key=lambda gap: gap.rank)


def host_status(project: Project) -> dict | None:
    """What the host itself says (`claude sandbox status`), or None without a binary."""
    import json
    import shutil
    import subprocess

    binary = shutil.which("claude")
    if binary is None:
        from forge_runtime.hostkit.binary import ClaudeNotFound, find_claude

        try:
            binary = str(find_claude())
        except ClaudeNotFound:
            return None
    try:
        done = subprocess.run([binary, "sandbox", "status"], cwd=project.root,
                              capture_output=True, text=True, timeout=HOST_TIMEOUT_SECONDS,
                              check=False)
        status = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {"error": "claude sandbox status gave no JSON"}
    return status if isinstance(status, dict) else {"error": "not a JSON object"}


def final_hint(found: list[Gap]):
    if not found:
        return hints.done("the kernel layer protects the ledger, forge's guard files and "
                          "the settings that could switch forge off")
    worst = found[0]
    return hints.error(worst.message, worst.fix, worst.rationale,
                       or_=list(worst.alternatives))


def goal_notice_once(project: Project, session_id: str) -> str | None:
    """At a person's `/goal`: the FORGE_GOAL_UNSANDBOXED notice, the first time in a session
    whose ledger is not kernel-protected; None otherwise.

    Raises ForgeError (the /goal is refused) when `.forge/guard.yaml` sets
    `goal: {require_sandbox: true}`, or is broken (it might have said so).
    """
    from forge_runtime.guard import paths, rules

    if ledger_protected(project):
        return None
    require = rules.for_project(project).goal.get("require_sandbox") is True
    notice = goal_notice(project, require)
    told = os.path.join(paths.guard_dir(project), TOLD_DIR, _safe_name(session_id))
    if os.path.exists(told):
        return None
    os.makedirs(os.path.dirname(told), exist_ok=True)
    with open(told, "a"):  # as Path.touch: create it, keep it if a racing /goal did
        pass
    return notice


def _safe_name(session_id: str) -> str:
    from forge_runtime.digest import sha256_hex

    return sha256_hex(session_id.encode("utf-8"))[:32]


def goal_notice(project: Project, require: bool) -> str:
    """The notice for a /goal whose ledger is not kernel-protected; ForgeError if required."""
    holes = "; ".join(sandbox_holes(read(project), project))
    message = (f"{UNSANDBOXED}: this goal's ledger is not protected by the host's kernel "
               f"sandbox ({holes}); only the guard's shell analysis keeps an agent off it")
    if require:
        from forge_runtime.errors import EXIT_REFUSED

        raise ForgeError(message + ", and .forge/guard.yaml sets goal.require_sandbox",
                         ENABLE, exit_code=EXIT_REFUSED,
                         rationale="then type the /goal again")
    return f"{message}\n" + hints.next_(ENABLE, "the goal runs anyway; this adds the kernel "
                                                "layer").render()
