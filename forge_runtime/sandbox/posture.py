"""What protects forge right now: every settings file the host reads, the tools, the host.

The posture is read from the files, in the host's precedence order, and each way it falls
short is a gap with the one full command that closes it. Worst first:
0. a settings file that does not parse, or `disableAllHooks: true` (no forge hook runs);
1. a settings `env` naming the program forge's hooks run (FORGE_PYTHON, PATH,
   CLAUDE_PLUGIN_DATA): whatever it names runs outside any sandbox;
2. the sandbox on without bubblewrap >= 0.8.0 and socat;
3. the sandbox off, or on without `failIfUnavailable`, with `allowUnsandboxedCommands`, or
   without forge's deny rules: the ledger then rests on the guard's shell analysis alone.

A person's `/goal` runs only with the kernel layer in force, or with the project's opt-out
in `.forge/guard.yaml` (`for_goal`); `would_be` says which, in one line.
"""

from __future__ import annotations

import os

from forge_runtime import hints, safeio
from forge_runtime.digest import sha256_hex
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.project import Project
from forge_runtime.protected import paths
from forge_runtime.records import record
from forge_runtime.roots import root_of_forge_path
from forge_runtime.sandbox import layer, scopes
from forge_runtime.sandbox.layer import OPT_OUT, OPT_OUT_LINE

ENV_SWITCHES = ("FORGE_PYTHON", "PATH", "CLAUDE_PLUGIN_DATA")
KEYS = ("enabled", "failIfUnavailable", "allowUnsandboxedCommands")
HOST_TIMEOUT_SECONDS = 20
UNSANDBOXED = "FORGE_GOAL_UNSANDBOXED"
TOLD_DIR = "unsandboxed-told"
ENABLE = "forge sandbox enable"
ENABLE_USER = "forge sandbox enable --scope user"
SANDBOXED, OPTED_OUT = "sandboxed", "unsandboxed"  # a goal's `sandbox` field in the ledger
CODEX_FIX = "codex --sandbox workspace-write"


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
        from forge_runtime.claude_binary import ClaudeNotFound, find_claude

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


# -- what a person's /goal gets -----------------------------------------------------------

def for_goal(project: Project, codex: dict | None = None) -> str:
    """The posture a person's `/goal` gets here now: SANDBOXED when the host's kernel layer
    keeps the ledger (Claude Code: forge's sandbox layer in force; Codex, `codex` being its
    `codex_sandbox_posture`: its own sandbox), OPTED_OUT when `.forge/guard.yaml` says
    `goal: {require_sandbox: false}` in so many words.

    Anything else raises the FORGE_GOAL_UNSANDBOXED refusal; a broken guard.yaml raises its
    own error (it might have said either, so it fails closed). Settings are trusted as they
    are on macOS, where the host sandboxes with Seatbelt and needs no bubblewrap.
    """
    protected = codex["ledger_kernel_protected"] if codex is not None \
        else ledger_protected(project)
    if protected:
        return SANDBOXED
    from forge_runtime.protected.guard_file import goal_settings

    if goal_settings(project).get("require_sandbox") is False:
        return OPTED_OUT
    raise refusal(project, codex)


def refusal(project: Project, codex: dict | None = None) -> ForgeError:
    """FORGE_GOAL_UNSANDBOXED for a /goal without the kernel layer: what is missing, and
    both ways on (the layer, or the project's opt-out)."""
    why = _why_refused(project, codex)
    return ForgeError(f"a /goal runs only inside the host's kernel sandbox, and {why.detail}; "
                      f"to run goals without it, .forge/guard.yaml says {OPT_OUT_LINE}",
                      why.fix, exit_code=EXIT_REFUSED, code=UNSANDBOXED,
                      rationale=why.rationale, or_=[*why.others, OPT_OUT])


class _Why(record("_Why", "short detail fix rationale others", defaults=((),))):
    """Why a /goal is refused: in a few words (`would_be`), in full (the refusal), and the
    way on."""

    __slots__ = ()


def _why_refused(project: Project, codex: dict | None) -> _Why:
    if codex is not None:
        mode = f"Codex's sandbox_mode is {codex['sandbox_mode']}"
        return _Why(mode, f"{mode} ({codex['source']})", CODEX_FIX,
                    "a new Codex session in its workspace-write sandbox (.git read-only), "
                    "then type the /goal again; or set sandbox_mode = \"workspace-write\" "
                    "in config.toml")
    from forge_runtime.sandbox import tools

    found = tools.find()
    if found.problem:
        short = f"this machine cannot sandbox: {found.problem}"
        if found.installable:
            return _Why(short, short, tools.INSTALL, f"then {ENABLE} and type the /goal again")
        return _Why(short, short, OPT_OUT, "opts this project out (where bubblewrap can "
                                           f"start, {ENABLE} instead)")
    holes = "; ".join(sandbox_holes(read(project), project))
    return _Why("no sandbox layer", f"forge's sandbox layer is not in force ({holes})", ENABLE,
                f"for this project, then type the /goal again; `{ENABLE_USER}` once covers "
                "every project of this machine", (ENABLE_USER,))


def would_be(project: Project, codex: dict | None = None) -> str:
    """The posture a /goal would get now, in a few words, as `forge doctor` and `forge
    sandbox status` print it first."""
    try:
        got = for_goal(project, codex)
    except ForgeError as exc:
        if exc.code != UNSANDBOXED:
            return f"refused ({exc.code or 'error'}: {exc.message})"
        why = _why_refused(project, codex)
        ways = f"Fix: {why.fix}, or opt out" if why.fix != OPT_OUT else "Fix: opt out"
        return f"refused ({why.short}; {ways}: {OPT_OUT_LINE} in .forge/guard.yaml)"
    if got == OPTED_OUT:
        return f"unsandboxed by opt-out (.forge/guard.yaml: {OPT_OUT_LINE})"
    return "sandboxed"


def goal_line(project: Project, codex: dict | None = None) -> str:
    """`a /goal here would be: ...` for Claude Code, and for Codex too when forge is wired
    for it (`codex`: its `codex_sandbox_posture`)."""
    line = f"a /goal here would be: {would_be(project)}"
    if codex is not None:
        line += f"; on Codex: {would_be(project, codex)}"
    return line


def goal_notice_once(project: Project, session_id: str, codex: dict | None = None) -> str | None:
    """At a person's `/goal`: None when it runs sandboxed; the FORGE_GOAL_UNSANDBOXED
    notice the first time in a session that runs one by the project's opt-out; raises the
    refusal (ForgeError) otherwise (see `for_goal`)."""
    if for_goal(project, codex) == SANDBOXED:
        return None
    told = os.path.join(paths.guard_dir(project), TOLD_DIR, _safe_name(session_id))
    if os.path.exists(told):
        return None
    # as Path.touch: create it, keep it if a racing /goal did; never through a link
    safeio.append(told, b"", root_of_forge_path(told), create_dirs=True)
    fix = CODEX_FIX if codex is not None else ENABLE
    return (f"{UNSANDBOXED}: this goal runs unsandboxed: .forge/guard.yaml opts out "
            f"({OPT_OUT_LINE}), so only the guard's shell analysis keeps an agent off its "
            "ledger and off forge's switches\n"
            + hints.next_(fix, "the goal runs anyway; this adds the kernel layer").render())


def _safe_name(session_id: str) -> str:
    return sha256_hex(session_id.encode("utf-8"))[:32]
