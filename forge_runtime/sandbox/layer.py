"""What `forge sandbox enable` adds to a settings file, and how `disable` takes exactly that out.

Added (merged; every other key stays as it was):
- `sandbox.enabled: true`, `sandbox.failIfUnavailable: true` (without it a missing bwrap or
  socat only warns and Bash runs unsandboxed) and `sandbox.allowUnsandboxedCommands: false`
  (without it the model's `dangerouslyDisableSandbox: true` walks out);
- `permissions.deny` rules `Edit(<path>)` (`_spell` says how a path is written) for the
  goal ledger, forge's guard directory (modes, rule cache), `.forge/guard.yaml`, the git
  `commondir` file (and a linked work tree's `.git` file) that would relocate both, the
  goal witness (`~/.local/state/forge/witness`), the person's forge settings
  (`~/.config/forge`: where a goal's end is sent), the plugins directory that holds forge's
  code, its data and its hook interpreter, the host files that can switch forge off
  (project and user `settings.json` / `settings.local.json`) and this record. With the
  sandbox on, each is a read-only bind for every Bash command (a path that does not exist
  yet included); without it, the rules still deny the Write and Edit tools in every
  permission mode;
- in the managed scope also `disableAllHooks: false`, which no other scope can override.

Beside the settings file, `<name>.forge-record` keeps what forge added to the file as it
found it, the bytes it found and the bytes it wrote. An `enable` that finds the file as
forge last wrote it adds to that record; one that finds it changed by anyone else starts
a new record from the file as found (an older record says nothing true about a file
someone has rewritten since). `disable` puts the found bytes back when the file is as
forge last wrote it (byte for byte); otherwise it removes only what the record says forge
added and still holds forge's value (a value the person changed since is theirs), leaves
a file holding nothing of forge's untouched, and leaves a file it cannot take its part out
of in place, with the record, saying how to see what changed (`forge sandbox diff`).
The ledger and guard directories are created first, so forge's own hooks (which run
outside the sandbox) find them as they expect.
"""

from __future__ import annotations

import os

from forge_runtime import safeio
from forge_runtime.digest import sha256_hex
from forge_runtime.errors import ForgeError
from forge_runtime.project import Project
from forge_runtime.protected import host_loaded, paths
from forge_runtime.roots import config_dir, witness_dir
from forge_runtime.sandbox import scopes

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations: pathlib loads where `enable` and `disable` need it
    from pathlib import Path

SANDBOX = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
MANAGED_TOP = {"disableAllHooks": False}
RECORD_SUFFIX = ".forge-record"
# How a project lets its goals run unsandboxed (posture.py reads it; `enable` offers it
# where no package makes the sandbox start).
OPT_OUT_LINE = "goal: {require_sandbox: false}"
OPT_OUT = f"mkdir -p .forge && echo '{OPT_OUT_LINE}' >> .forge/guard.yaml"


def witness_root() -> str:
    """The goal witness directory (`forge_runtime.goal.sync.witness`), as a deny-rule path:
    `~/...` under the home directory, else absolute."""
    return _home_spelled(witness_dir())


def config_root() -> str:
    """forge's folder of this user's settings (`roots.config_dir`: where a goal's end is
    sent, notify/config.py), as a deny-rule path."""
    return _home_spelled(config_dir())


def _home_spelled(path: str) -> str:
    root = os.path.realpath(path)
    home = os.path.realpath(scopes.home_dir())
    if root.startswith(home + os.sep):
        return "~/" + os.path.relpath(root, home)
    return "/" + root


# forge's code, its data and the interpreter its hooks run with (the plugin install).
PLUGINS_RULE = "Edit(~/.claude/plugins/**)"


def record_path(settings: Path) -> Path:
    return settings.with_name(settings.name + RECORD_SUFFIX)


def protected_dirs(project: Project) -> list[Path]:
    """The directories the deny rules bind read-only (created by `enable` if missing)."""
    from pathlib import Path

    return [Path(project.ledger_root), Path(paths.guard_dir(project))]


def _targets(project: Project) -> list[tuple[str, bool]]:
    """(path, whether the rule covers the tree under it) for every project path forge denies
    (strings: a person's `/goal` spells these rules, and pathlib costs it a bare start)."""
    found = [(os.fspath(project.ledger_root), True), (paths.guard_dir(project), True),
             (paths.rule_file(project), False),
             (os.path.join(project.root, ".forge", GATES_FILE), False)]
    if project.is_git:  # a written `commondir` (or a linked work tree's `.git` file) moves
        found.append((os.path.join(project.git_dir, "commondir"), False))  # ledger, modes
        dot_git = os.path.join(project.root, ".git")
        if os.path.isfile(dot_git):
            found.append((dot_git, False))
    claude = os.path.join(project.root, ".claude")
    return [*found, (os.path.join(claude, "settings.json"), False),
            (os.path.join(claude, "settings.local.json"), False)]


def _spell(project: Project, path: str | os.PathLike, tree: bool, relative: bool) -> str:
    """One rule. In the project's own settings a path inside the project is written from its
    root (`/.git/forge-goals/**`: the same for everyone who shares the file); elsewhere, and
    in every other scope, absolute (`//` then the path)."""
    real, root = os.path.realpath(path), os.path.realpath(project.root)
    if relative and real.startswith(root + os.sep):
        text = "/" + os.path.relpath(real, root)
    else:
        text = "/" + real
    return f"Edit({text}/**)" if tree else f"Edit({text})"


HOME_RULES = ("Edit(~/.claude/settings.json)", "Edit(~/.claude/settings.local.json)")
GATES_FILE = "gates.yaml"  # .forge/gates.yaml: the final gates a person's /goal records


def _loaded_targets(project: Project) -> tuple[list[tuple[str, bool]], list[str]]:
    """The files the hosts load as code that forge denies (protected/host_loaded.py): those
    in the project as (path, tree), spelled like `_targets`; the others as rules, `~/...`
    under the home directory, else absolute."""
    inside, outside = [], []
    home = os.path.realpath(scopes.home_dir())
    for row in host_loaded.kernel_rows():
        tree = host_loaded.is_tree(row)
        for base in host_loaded.bases(row.scope, os.fspath(project.root), os.environ):
            path = os.path.join(base, row.place) if row.place else base
            if row.scope == host_loaded.PROJECT:
                inside.append((path, tree))
                continue
            real = os.path.realpath(path)
            text = "~/" + os.path.relpath(real, home) if real.startswith(home + os.sep) \
                else "/" + real
            outside.append(f"Edit({text}/**)" if tree else f"Edit({text})")
    return inside, outside


def rule_forms(project: Project) -> list[frozenset[str]]:
    """Each rule forge needs in force, as the spellings that state it (either will do)."""
    inside, outside = _loaded_targets(project)
    forms = [frozenset({_spell(project, path, tree, True), _spell(project, path, tree, False)})
             for path, tree in [*_targets(project), *inside]]
    return [*forms, *(frozenset({rule}) for rule in
                      (f"Edit({witness_root()}/**)", f"Edit({config_root()}/**)",
                       PLUGINS_RULE, *HOME_RULES, *outside))]


def ledger_rules(project: Project) -> frozenset[str]:
    """The rule whose presence means the ledger is in the kernel layer, in either spelling."""
    return rule_forms(project)[0]


def deny_rules(project: Project, settings: Path, scope: str) -> list[str]:
    """Every `Edit(...)` rule forge adds for `project` when writing `settings` in `scope`."""
    relative = scope == scopes.PROJECT
    inside, outside = _loaded_targets(project)
    spelled = [_spell(project, path, tree, relative)
               for path, tree in [*_targets(project), *inside]]
    return [*spelled, f"Edit({witness_root()}/**)", f"Edit({config_root()}/**)",
            PLUGINS_RULE, *HOME_RULES, *outside,
            _spell(project, record_path(settings), False, relative)]


def _digest(data: bytes | None) -> str | None:
    return None if data is None else sha256_hex(data)


def _read_bytes(path: Path) -> bytes | None:
    """A host settings file's bytes (the person's links followed; no FIFO waited on)."""
    try:
        with safeio.reader(path, "rb", follow_links=True) as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return None


def _read_record(path: Path) -> dict | None:
    raw = _read_bytes(path)
    if raw is None:
        return None
    import json  # `enable` and `disable` only: a person's `/goal` reads the rules alone

    try:
        record = json.loads(raw)
        if not isinstance(record, dict) or not isinstance(record.get("added"), dict):
            raise ValueError("not a forge record")
    except ValueError:
        raise ForgeError(f"{path} is not a record forge wrote; forge left it untouched",
                         f"python3 -m json.tool {path}") from None
    return record


def _section(settings: dict, key: str, path: Path) -> dict:
    value = settings.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise scopes.broken(path, f"has a {key!r} that is not an object")
    return dict(value)


def _set(target: dict, key: str, value, previous: dict) -> None:
    """Set `target[key]`, remembering (once) what was there: `[True, old]` or `[False]`."""
    if key in target and target[key] == value:
        return
    previous.setdefault(key, [True, target[key]] if key in target else [False])
    target[key] = value


def merged(settings: dict, project: Project, scope: str, path: Path,
           added: dict) -> dict:
    """`settings` with forge's layer in; what it changed is noted in `added`."""
    updated = dict(settings)
    sandbox = _section(settings, "sandbox", path)
    for key, value in SANDBOX.items():
        _set(sandbox, key, value, added.setdefault("sandbox", {}))
    updated["sandbox"] = sandbox
    permissions = _section(settings, "permissions", path)
    deny = permissions.get("deny", [])
    if not isinstance(deny, list):
        raise scopes.broken(path, "has a \"permissions.deny\" that is not a list")
    new_rules = [rule for rule in deny_rules(project, path, scope) if rule not in deny]
    if new_rules and "deny" not in permissions:
        added["deny_created"] = True
    added.setdefault("deny", []).extend(r for r in new_rules if r not in added["deny"])
    permissions["deny"] = [*deny, *new_rules]
    added.setdefault("created", [])
    for name in ("sandbox", "permissions"):
        if name not in settings and name not in added["created"]:
            added["created"].append(name)
    updated["permissions"] = permissions
    if scope == scopes.MANAGED:
        for key, value in MANAGED_TOP.items():
            _set(updated, key, value, added.setdefault("top", {}))
    return updated


def _render(settings: dict) -> bytes:
    import json

    return (json.dumps(settings, indent=2) + "\n").encode("utf-8")


def enable(project: Project, scope: str) -> tuple[Path, bool]:
    """Merge forge's layer into the scope's settings file; (path, whether it changed)."""
    import base64
    import copy

    from forge_runtime.initializer import write_atomically
    from forge_runtime.sandbox import tools

    found = tools.find()
    if found.problem and found.installable:
        raise ForgeError(f"the host's sandbox cannot run here: {found.problem}", tools.INSTALL,
                         rationale="the sandbox needs bubblewrap >= 0.8.0 and socat; on other "
                                   "systems install them with the platform's package manager")
    if found.problem:
        raise ForgeError(f"the host's sandbox cannot run here: {found.problem}", OPT_OUT,
                         rationale="no package fixes this: let goals run unsandboxed in this "
                                   "project, or run forge where bubblewrap can start")
    path = scopes.settings_path(scope, project)
    record_file = record_path(path)
    record = _read_record(record_file)
    before = _read_bytes(path)
    # The record speaks for the file only while the file is what forge last wrote.
    current = record is not None and before is not None \
        and _digest(before) == record.get("written")
    settings = scopes.read(path) or {}
    added = copy.deepcopy(record["added"]) if current else {}
    updated = merged(settings, project, scope, path, added)
    for directory in protected_dirs(project):
        directory.mkdir(parents=True, exist_ok=True)
    if updated == settings:
        return path, False
    rendered = _render(updated)
    if current:
        original, mode = record["original"], record.get("mode")
    else:
        original = None if before is None else base64.b64encode(before).decode("ascii")
        mode = _mode(path)
    try:
        write_atomically(record_file, _render({
            "scope": scope, "original": original, "mode": mode, "written": _digest(rendered),
            "wrote": base64.b64encode(rendered).decode("ascii"), "added": added}), 0o644)
        write_atomically(path, rendered, mode or 0o644)
    except PermissionError:
        raise ForgeError(f"forge may not write {path} (the {scope} scope needs root)",
                         f"sudo forge sandbox enable --scope {scope}") from None
    return path, True


def _restore(target: dict, previous: dict, forge_values: dict) -> None:
    """Put back what was there before forge set each key, where the key still holds
    forge's value (a value changed since is the person's, and stays)."""
    for key, was in previous.items():
        if key not in target or target[key] != forge_values.get(key):
            continue
        if was[0]:
            target[key] = was[1]
        else:
            del target[key]


def _without_layer(settings: dict, added: dict) -> tuple[dict, str | None]:
    """`settings` minus what forge added, keeping every edit made since; or a reason why
    forge cannot tell its part from the rest (a section it merged into is no longer the
    object or list it left)."""
    updated = dict(settings)
    _restore(updated, added.get("top", {}), MANAGED_TOP)
    if added.get("sandbox") and "sandbox" in updated:
        if not isinstance(updated["sandbox"], dict):
            return settings, "its \"sandbox\" is no longer an object"
        sandbox = dict(updated["sandbox"])
        _restore(sandbox, added["sandbox"], SANDBOX)
        updated["sandbox"] = sandbox
    if added.get("deny") and "permissions" in updated:
        permissions = updated["permissions"]
        if not isinstance(permissions, dict) or not isinstance(permissions.get("deny", []),
                                                               list):
            return settings, "its \"permissions.deny\" is no longer a list"
        if "deny" in permissions:
            permissions = dict(permissions)
            permissions["deny"] = [r for r in permissions["deny"] if r not in added["deny"]]
            # an empty list forge made goes; one the person had stays
            if not permissions["deny"] and added.get("deny_created"):
                del permissions["deny"]
            updated["permissions"] = permissions
    for name in added.get("created", []):
        if updated.get(name) == {} and settings.get(name) != {}:
            del updated[name]
    return updated, None


def _unattributable(path: Path, scope: str, problem: str) -> ForgeError:
    return ForgeError(f"{path} changed since forge sandbox enable wrote it, and {problem}: "
                      "forge cannot tell its part from yours, so it left the file (and its "
                      "record) as they are", f"forge sandbox diff --scope {scope}",
                      rationale="shows what changed since forge wrote the file; take forge's "
                                "sandbox keys and Edit(...) deny rules out by hand, or repair "
                                f"the file and run forge sandbox disable --scope {scope} again")


def disable(project: Project, scope: str) -> tuple[Path, str]:
    """Undo `enable` in the scope: (path, "restored" | "removed" | "untouched" | "nothing")."""
    import base64

    from forge_runtime.initializer import write_atomically

    path = scopes.settings_path(scope, project)
    record_file = record_path(path)
    record = _read_record(record_file)
    if record is None:
        return path, "nothing"
    current = _read_bytes(path)
    original = record.get("original")
    try:
        if current is None:  # the file went away since: nothing of forge's is left in it
            outcome = "untouched"
        elif _digest(current) == record.get("written"):
            if original is None:
                path.unlink()
            else:
                write_atomically(path, base64.b64decode(original), record.get("mode"))
            outcome = "restored"
        else:
            try:
                settings = scopes.read(path) or {}
            except ForgeError:
                raise _unattributable(path, scope, "it is no longer a JSON object") from None
            updated, problem = _without_layer(settings, record["added"])
            if problem:
                raise _unattributable(path, scope, problem)
            if updated == settings:
                outcome = "untouched"
            else:
                write_atomically(path, _render(updated), _mode(path))
                outcome = "removed"
        record_file.unlink()
    except PermissionError:
        raise ForgeError(f"forge may not write {path} (the {scope} scope needs root)",
                         f"sudo forge sandbox disable --scope {scope}") from None
    return path, outcome


def left_in(project: Project, scope: str) -> list[str]:
    """The parts of forge's layer the scope's settings file still holds (after `disable`:
    ones the file had before the enable it undid, kept by someone who edited it)."""
    path = scopes.settings_path(scope, project)
    try:
        settings = scopes.read(path) or {}
    except ForgeError:
        return []
    sandbox = settings.get("sandbox") if isinstance(settings.get("sandbox"), dict) else {}
    found = [f"sandbox.{key}" for key, value in SANDBOX.items() if sandbox.get(key) == value]
    permissions = settings.get("permissions")
    deny = permissions.get("deny") if isinstance(permissions, dict) else None
    rules = set(deny_rules(project, path, scope)) if isinstance(deny, list) else set()
    found += [rule for rule in deny or [] if rule in rules]
    return found


def diff(project: Project, scope: str) -> tuple[Path, list[str]]:
    """What changed in the scope's settings file since forge last wrote it, as the lines
    of a unified diff (none when forge has no record of writing it)."""
    import base64
    import difflib

    path = scopes.settings_path(scope, project)
    record = _read_record(record_path(path))
    if record is None:
        return path, []
    wrote = base64.b64decode(record.get("wrote") or b"").decode("utf-8", "replace")
    now = (_read_bytes(path) or b"").decode("utf-8", "replace")
    return path, [line.rstrip("\n") for line in difflib.unified_diff(
        wrote.splitlines(keepends=True), now.splitlines(keepends=True),
        f"{path} (as forge sandbox enable wrote it)", f"{path} (now)")]
