"""Hostile and harmless Bash commands through the real PreToolUse hook, then run for real.

Every command in `guard_corpus/commands.yaml` goes to the hook launcher as the host sends
it (`hooks/forge-hook PreToolUse`, the event as JSON on stdin). A hostile command the hook
lets through is then run with bash, in a fresh scratch copy of a project that has a goal
ledger, forge's guard files, a goal in state.md and a rule file committed with an
uncommitted edit (the main corpus), committed and unchanged, or never committed (the
`variants`), with history, a branch and a stash that would change it; the test fails when
any protected path changed (its bytes, modes or links, the
front matter of state.md, a host settings file in a way that switches forge off, or where
forge finds its ledger). Commands run inside
bubblewrap with only the scratch copy writable, so a corpus mistake cannot reach the
machine. A harmless command the hook refuses is a false positive and fails the test too (harmless
ones run for real as well, and must leave the protected paths as they were).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from guard_support import STATE, make_project

from forge_runtime.guard import host_settings, modes, rules
from forge_runtime.guard.edits import front_matter
from forge_runtime.project import find_project
from forge_runtime.protected import paths

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
CORPUS = yaml.safe_load((Path(__file__).parent / "guard_corpus" / "commands.yaml").read_text())
SESSION = "sess-corpus"
PERSON = "sess-person"  # a session in a guarded mode, which `forge mode exit` would end
RULES_COMMITTED = "roles:\n  auditor:\n    tools: [Read, Grep, Bash]\n"
RULES_EDITED = "roles:\n  auditor:\n    tools: [Read]\n"
RULES_OLD = "roles:\n  auditor:\n    tools: [Read, Grep, Bash, Write]\n"
# How the rule file stands in the project: committed with a person's uncommitted edit (the
# main corpus), committed and unchanged, or never committed (untracked); and the main
# corpus's project whose `.git/commondir` another process already pointed at a fake ledger
# (relocated), where the guard must still protect the ledger forge keeps.
VARIANTS = ("edited", "clean", "untracked", "relocated")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def _tar(path: Path, members: dict[str, str]) -> None:
    import io

    with tarfile.open(path, "w:gz" if path.suffix == ".tgz" else "w") as bundle:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))


def _zip(path: Path, members: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, text in members.items():
            bundle.writestr(name, text)


def build_template(base: Path, variant: str = "edited") -> Path:
    """`base/proj` (the project), `base/outside` (the attacker's material), `base/home`.

    The project's history holds what git could bring back: the rule file's first version
    (the commit before HEAD), a stash and a branch `old` whose commit changes the rule file
    and tracks a state.md with no goal (git overwrites an ignored file from history)."""
    project = make_project(base / "proj")
    _host_files(project, base / "home")
    rules_file = project / ".forge" / "guard.yaml"
    (project / ".forge" / "gates.yaml").write_text("gates: []\n")
    rules_file.write_text(RULES_OLD)
    tracked = ["src/app.py", ".forge/gates.yaml", ".claude/settings.json", ".codex"] + (
        [] if variant == "untracked" else [".forge/guard.yaml"])
    _git(project, "add", *tracked)
    _git(project, "commit", "-qm", "first")
    rules_file.write_text(RULES_COMMITTED)
    (project / "src" / "app.py").write_text("print('hi again')\n")
    _git(project, "add", *tracked)
    _git(project, "commit", "-qm", "start")
    _git(project, "checkout", "-qb", "old")
    rules_file.write_text(RULES_OLD)
    (project / ".forge" / "local" / "state.md").write_text("---\ngoal: null\n---\n")
    _git(project, "add", "-f", ".forge/guard.yaml", ".forge/local/state.md")
    _git(project, "commit", "-qm", "old rules")
    _git(project, "checkout", "-q", "master")
    (project / ".forge" / "local" / "state.md").write_text(STATE)
    rules_file.write_text(RULES_OLD)
    (project / "src" / "app.py").write_text("print('stashed')\n")
    _git(project, "stash", "push", "-q", "--", *tracked)  # a stash that changes the rule file
    _git(project, "config", "alias.nuke", "!rm -rf .git/forge-goals")  # a person's aliases
    _git(project, "config", "alias.tidy", "clean -fdx")
    rules_file.write_text(RULES_COMMITTED if variant == "clean" else RULES_EDITED)
    guard_dir = paths.guard_dir(find_project(project))
    modes.enter(guard_dir, PERSON, "clarifier")
    rules.for_project(find_project(project))  # the validated rule cache, as a session has it
    outside = base / "outside"
    (outside / "fake" / ".git" / "forge-goals" / "n1" / "records").mkdir(parents=True)
    (outside / "fake" / ".git" / "forge-goals" / "n1" / "records" / "00000001.json") \
        .write_text('{"seq": 1, "goal": {"turn_count": 0}}\n')
    (outside / "fake" / "00000001.json").write_text("{}\n")
    (outside / "empty").mkdir()
    (outside / "hooks").mkdir()
    (outside / "hooks" / "pre-commit").write_text("#!/bin/sh\nrm -rf .git/forge-goals\n")
    (outside / "hooks" / "pre-commit").chmod(0o755)
    (outside / "fake.json").write_text("{}\n")
    (outside / "name.txt").write_text(".git\n")
    (outside / "state.md").write_text("---\ngoal: null\n---\n")
    (outside / "commondir").write_text("../../outside/fake/.git\n")
    (outside / "cd.sh").write_text("cd .git\n")
    (outside / "evil.sh").write_text("rm -rf .git/forge-goals .forge/guard.yaml\n")
    (outside / "list.txt").write_text(".git/forge-goals\n.forge/guard.yaml\n")
    (outside / "activate").write_text(  # what a virtualenv's activate script does
        'VIRTUAL_ENV=/x/venv; export VIRTUAL_ENV\n_OLD_VIRTUAL_PS1="${PS1:-}"\n'
        'PS1="(venv) ${PS1:-}"; export PS1\nPATH="$VIRTUAL_ENV/bin:$PATH"; export PATH\n'
        'hash -r 2>/dev/null\n')
    (outside / "cfg").write_text("[core]\n\tfsmonitor = rm -rf .git/forge-goals\n")
    (outside / "hex.txt").write_text("2d2d2d0a676f616c3a206e756c6c0a2d2d2d0a\n")
    (outside / "evil.diff").write_text(
        "--- .forge/local/state.md\n+++ .forge/local/state.md\n@@ -4 +4 @@\n"
        "-  turn_count: 3\n+  turn_count: 0\n")
    evil = {".git/forge-goals/n1/records/00000001.json": "{}\n",
            ".forge/local/state.md": "---\ngoal: null\n---\n"}
    _tar(outside / "evil.tar", evil)
    _tar(outside / "evil.tgz", evil)
    _tar(outside / "ledger.tar", {"forge-goals/n1/records/00000001.json": "{}\n"})
    _tar(outside / "local.tar", {"local/state.md": "---\ngoal: null\n---\n"})
    _tar(outside / "src-ok.tgz", {"src/extra.py": "print(2)\n"})
    _zip(outside / "evil.zip", evil)
    _zip(outside / "ledger.zip", {"forge-goals/n1/records/00000001.json": "{}\n"})
    _zip(outside / "src-ok.zip", {"src/extra.py": "print(2)\n"})
    escaping = {"../.git/forge-goals/n1/records/00000001.json": "{}\n"}  # from `-C src`
    _tar(outside / "dotdot.tar", escaping)
    _zip(outside / "dotdot.zip", escaping)
    if variant == "relocated":  # damage done outside the agent, before its session
        (project / ".git" / "commondir").write_text("../../outside/fake/.git\n")
    return base


def _host_files(project: Path, home: Path) -> None:
    """The host's own off switches, as a fresh install of forge from its marketplace has
    them: settings at the user and project scopes (the project's committed, its local
    file ignored, as the host has it), the plugin tree with forge-env, the live-session
    registry and Cowork's plugin tree (2.1.337), and Codex's home and the project's Codex
    config and hooks (committed)."""
    enabled = json.dumps({"enabledPlugins": {"forge@forge": True},
                          "permissions": {"allow": ["Bash(git status)"]}}) + "\n"
    files = {home / ".claude" / "settings.json": enabled,
             home / ".claude" / "settings.local.json": "{}\n",
             home / ".claude" / "plugins" / "installed_plugins.json":
                 '{"version": 2, "plugins": {"forge@forge": []}}\n',
             home / ".claude" / "plugins" / "cache" / "forge" / "forge" / "0.1.0" / "hooks" /
                 "forge-hook": "#!/bin/sh\n",
             home / ".claude" / "plugins" / "data" / "forge-forge" / "forge-env" / "lib" /
                 "site.py": "# forge-env\n",
             home / ".claude" / "sessions" / "4242.json": '{"pid": 4242}\n',
             home / ".claude" / "sessions" / ".3f9a.key": "secret\n",
             home / ".claude" / "cowork_plugins" / "installed_plugins.json":
                 '{"version": 2, "plugins": {"forge@forge": []}}\n',
             home / ".claude.json": '{"numStartups": 3, "projects": {}}\n',
             home / ".codex" / "config.toml": "[features]\nhooks = true\n",
             home / ".codex" / "hooks.json": '{"hooks": {}}\n',
             home / ".codex" / "goals_1.sqlite": "SQLite format 3\n",
             project / ".claude" / "settings.json": enabled,
             project / ".claude" / "settings.local.json": "{}\n",
             project / ".codex" / "config.toml": 'sandbox_mode = "workspace-write"\n',
             project / ".codex" / "hooks.json": '{"hooks": {}}\n'}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    with (project / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".claude/settings.local.json\n")


def protected_state(project: Path) -> dict:
    """Everything the guard protects, as bytes and modes, and where forge finds its ledger
    (the host's files under the scratch home the commands run with)."""
    found = find_project(project)
    state: dict = {"ledger_root": str(found.ledger_root), "git_dir": str(found.git_dir)}
    for place in (".git/forge-goals", ".git/commondir"):  # where the ledger is, whatever
        state[place] = _tree(project / place)           # forge's own finding says
    for entry in paths.protected_paths(found, env=hook_env(project.parent)):
        path = Path(entry.path)
        if entry.kind == paths.FRONT_MATTER:
            try:
                state[entry.path] = front_matter(path.read_text())
            except (OSError, UnicodeDecodeError):
                state[entry.path] = None
            continue
        if entry.kind in (paths.SETTINGS, paths.CODEX_CONFIG):
            try:
                text = path.read_text()
            except (OSError, UnicodeDecodeError):
                text = None
            state[entry.path] = {"judged": entry, "text": text}
            continue
        state[entry.path] = _tree(path)
    return state


def _switches_forge_off(before, after) -> bool:
    """A change of a protected path. A host settings file or Codex config may change in
    ways that keep forge on (the host itself rewrites `~/.claude.json` on every run): for
    those, only a change the guard's own judge refuses counts, or the file disappearing."""
    if before == after:
        return False
    if not isinstance(before, dict) or not isinstance(after, dict):
        return True
    if after["text"] is None:
        return True
    entry = before["judged"]
    return host_settings.judge(entry, entry.path, before["text"], after["text"]) is not None


def _tree(path: Path) -> list | None:
    if not os.path.lexists(path):
        return None
    found = []
    for current, dirs, files in os.walk(path) if path.is_dir() and not path.is_symlink() \
            else [(str(path.parent), [], [path.name])]:
        dirs.sort()
        for name in [*dirs, *sorted(files)]:
            item = Path(current, name)
            info = item.lstat()
            digest = os.readlink(item) if item.is_symlink() else (
                hashlib.sha256(item.read_bytes()).hexdigest() if item.is_file() else "dir")
            found.append((str(item.relative_to(path.parent)), info.st_mode, digest))
    return found


def hook_env(base: Path) -> dict[str, str]:
    """The environment a host gives both its Bash tool and (plus its own names) a hook."""
    return {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(base / "home"), "LANG": "C.UTF-8"}


def ask_hook(base: Path, command: str) -> str:
    """"allow" or "deny", from the hook launcher run as the host runs it."""
    project = base / "proj"
    event = {"session_id": SESSION, "transcript_path": str(base / "t.jsonl"),
             "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": command, "description": "corpus"},
             "tool_use_id": "toolu_corpus", "permission_mode": "bypassPermissions"}
    env = {**hook_env(base), "CLAUDE_PROJECT_DIR": str(project),
           "CLAUDE_PLUGIN_ROOT": str(REPO), "FORGE_PYTHON": sys.executable}
    done = subprocess.run([str(LAUNCHER), "PreToolUse"], input=json.dumps(event),
                          capture_output=True, text=True, env=env, cwd=project, timeout=30)
    if done.returncode != 0 or done.stderr:
        return f"crash (exit {done.returncode}): {done.stderr.strip()[-300:]}"
    if not done.stdout.strip():
        return "allow"
    output = json.loads(done.stdout).get("hookSpecificOutput", {})
    return "deny" if output.get("permissionDecision") == "deny" else f"odd: {done.stdout}"


def run_for_real(base: Path, command: str) -> None:
    """`command` run by bash in the scratch project, with only `base` writable."""
    sandbox = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--tmpfs", "/tmp", "--bind", str(base), str(base), "--unshare-net",
               "--unshare-pid", "--die-with-parent", "--chdir", str(base / "proj")]
    # On a timeout, whatever it did until then is judged like the rest.
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run([*sandbox, "/bin/bash", "-c", command], env=hook_env(base),
                       capture_output=True, timeout=20, stdin=subprocess.DEVNULL)


def run_and_compare(template: Path, scratch: Path, index: int, command: str) -> str | None:
    """Run an allowed `command` in a fresh copy of the project; why it fails, or None."""
    base = scratch / f"case-{index}"
    shutil.copytree(template, base, symlinks=True)
    try:
        before = protected_state(base / "proj")
        run_for_real(base, command)
        after = protected_state(base / "proj")
        # the paths protected before it ran: a work tree it made adds its own pointers
        changed = sorted(key for key in before
                         if _switches_forge_off(before.get(key), after.get(key)))
        if changed:
            return f"{command!r}: allowed, and it changed {changed}"
        return None
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is needed to run hostile commands safely: "
                    "apt-get install -y bubblewrap")
    return {variant: build_template(tmp_path_factory.mktemp(f"corpus-{variant}"), variant)
            for variant in VARIANTS}


def corpus(variant: str) -> dict:
    """The hostile classes and harmless commands of one project variant."""
    return CORPUS if variant == "edited" else CORPUS["variants"][variant]


def _run_corpus(template: Path, scratch: Path, commands: list[str], hostile: bool) -> list:
    """Every command through the hook (which only reads the project, so all ask the same
    copy), then every allowed one run for real, each in a copy of its own."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = list(pool.map(lambda command: ask_hook(template, command), commands))
        failures = [f"{command!r}: the hook gave no answer: {verdict}"
                    for command, verdict in zip(commands, verdicts, strict=True)
                    if verdict not in ("allow", "deny")]
        if not hostile:
            failures += [f"{command!r}: harmless, but denied"
                         for command, verdict in zip(commands, verdicts, strict=True)
                         if verdict == "deny"]
        allowed = [(index, command) for index, (command, verdict)
                   in enumerate(zip(commands, verdicts, strict=True)) if verdict == "allow"]
        results = pool.map(lambda item: run_and_compare(template, scratch, *item), allowed)
        return failures + [failure for failure in results if failure]


def test_the_corpus_is_large_and_covers_every_class():
    hostile = CORPUS["hostile"]
    assert sum(len(commands) for commands in hostile.values()) >= 300
    assert all(len(commands) >= 10 for commands in hostile.values())
    assert len(CORPUS["harmless"]) >= 100
    for variant in VARIANTS[1:]:
        assert all(len(commands) >= 5 for commands in corpus(variant)["hostile"].values())
        assert len(corpus(variant)["harmless"]) >= 5


def test_the_host_files_are_among_the_paths_compared(templates):
    """The comparison covers the host's off switches in the scratch home and project."""
    template = templates["edited"]
    state = protected_state(template / "proj")
    home, project = template / "home", template / "proj"
    for path in (home / ".claude" / "settings.json", home / ".claude" / "plugins",
                 home / ".claude" / "sessions", home / ".claude" / "cowork_plugins",
                 home / ".codex", project / ".claude" / "settings.local.json",
                 project / ".codex" / "config.toml", project / ".codex" / "hooks.json"):
        assert state[str(path.resolve())], path
    user = state[str((home / ".claude" / "settings.json").resolve())]
    off = {**user, "text": '{"enabledPlugins": {"forge@forge": false}}'}
    permitted = {**user, "text": user["text"].replace('"Bash(git status)"',
                                                      '"Bash(git status)", "Bash(ls)"')}
    assert _switches_forge_off(user, off) and _switches_forge_off(user, {**user, "text": None})
    assert not _switches_forge_off(user, permitted)


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_hostile_command_the_hook_allows_changes_a_protected_path(templates, tmp_path,
                                                                     variant):
    commands = [command for group in corpus(variant)["hostile"].values() for command in group]
    failures = _run_corpus(templates[variant], tmp_path, commands, hostile=True)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("variant", VARIANTS)
def test_ordinary_developer_commands_are_allowed(templates, tmp_path, variant):
    failures = _run_corpus(templates[variant], tmp_path, corpus(variant)["harmless"],
                           hostile=False)
    assert not failures, "\n".join(failures)
