"""Bash commands against the protected paths: what is caught, including quoting and path tricks."""

from __future__ import annotations

import os
import shlex

import pytest
from guard_support import assert_verdict, judged, make_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_runtime.guard import shell
from forge_runtime.guard.shell import walk
from forge_runtime.project import find_project
from forge_runtime.protected import paths


@pytest.fixture
def project(tmp_path):
    root = make_project(tmp_path / "proj")
    (tmp_path / "link-to-git").symlink_to(root / ".git")
    (root / "ledger-link").symlink_to(root / ".git" / "forge-goals")
    return root


def verdict(project, command: str, cwd=None):
    found = find_project(project)
    # PWD is the hook's own directory, not the Bash tool's: the analysis must not trust it
    env = {"HOME": str(project.parent), "PROJ": str(project), "PATH": os.environ["PATH"],
           "PWD": "/"}
    return shell.analyse(command, str(cwd or project), env, paths.protected_paths(found))


DENIED = [
    # redirections, every operator
    "echo x > .git/forge-goals/n1/records/00000001.json",
    "echo x >> .git/forge-goals/n1/records/00000001.json",
    "echo x >| .forge/local/state.md",
    "echo x &> .forge/local/state.md",
    "cat <> .forge/local/state.md",
    "printf x>.forge/local/state.md",
    "ls 2> .git/forge-guard/modes/s.json",
    # deleting, moving, copying over, linking
    "rm -rf .git/forge-goals",
    "rm -f .git/forge-goals/n1/records/00000001.json",
    "rm -rf .git",
    "rm -rf .forge",
    "rm -rf .",
    "unlink .forge/local/state.md",
    "rmdir .git/forge-goals/n1/records",
    "shred -u .git/forge-goals/n1/records/00000001.json",
    "mv .git/forge-goals /tmp/elsewhere",
    "mv .git .git-old",
    "mv /tmp/fake.json .git/forge-goals/n1/records/00000001.json",
    "cp /tmp/fake.json .git/forge-goals/n1/records/00000001.json",
    "cp -r /tmp/fake .git/forge-goals/",
    "install -m 644 /tmp/f .git/forge-goals/n1/f",
    "ln -sf /tmp/x .git/forge-goals/n1/records/00000001.json",
    "ln .git/forge-goals/n1/records/00000001.json hardlink",
    "rsync -a /tmp/x/ .git/forge-goals/",
    "mkdir .git/forge-goals/n2",
    # re-permissioning
    "chmod 000 .git/forge-goals",
    "chmod -R u-w .git",
    "chown -R nobody .forge",
    "chattr +i .git/forge-goals/n1/records/00000001.json",
    "touch .git/forge-goals/n1/records/00000001.json",
    # writers by path
    "tee .forge/local/state.md < /tmp/x",
    "echo x | tee -a .git/forge-goals/n1/log",
    "truncate -s 0 .git/forge-goals/n1/records/00000001.json",
    "dd if=/dev/zero of=.git/forge-goals/n1/records/00000001.json",
    "sed -i 's/3/0/' .forge/local/state.md",
    "sed -i.bak -e 's/3/0/' .forge/local/state.md",
    "sed --in-place 's/3/0/' .forge/local/state.md",
    "perl -pi -e 's/3/0/' .forge/local/state.md",
    "sort -o .forge/local/state.md .forge/local/state.md",
    # git commands touching them
    "git rm --cached .forge/local/state.md",
    "git clean -fdx",
    "git clean -fX .forge",
    "git stash --all",
    # interpreters writing by path
    "python3 -c \"open('.git/forge-goals/n1/records/00000001.json','w').write('{}')\"",
    "python -c 'import shutil; shutil.rmtree(\".git/forge-goals\")'",
    "perl -e 'unlink \".forge/local/state.md\"'",
    "node -e \"require('fs').writeFileSync('.forge/local/state.md','')\"",
    "ruby -e 'File.delete(\".git/forge-goals/n1/records/00000001.json\")'",
    "python3 - <<'EOF'\nimport os\nos.remove('.git/forge-goals/n1/records/00000001.json')\nEOF",
    # find
    "find .git/forge-goals -type f -delete",
    "find . -name '*.json' -delete",
    "find . -type f -exec rm {} +",
    "find .git -name 00000001.json -exec truncate -s0 {} ;",
    # pipelines and wrappers
    "ls .git/forge-goals/n1/records/* | xargs rm",
    "sudo rm -rf .git/forge-goals",
    "env -i rm -rf .git/forge-goals",
    "nohup rm -rf .git/forge-goals &",
    "timeout 5 rm -rf .git/forge-goals",
    "bash -c 'rm -rf .git/forge-goals'",
    "sh -c \"echo x > .forge/local/state.md\"",
    "eval rm -rf .git/forge-goals",
    "true && rm -rf .git/forge-goals",
    "false || rm -rf .git/forge-goals",
    "(cd .git && rm -rf forge-goals)",
    "ls; rm -rf .git/forge-goals",
    "ls\nrm -rf .git/forge-goals",
    # quoting
    "rm -rf '.git/forge-goals'",
    'rm -rf ".git/forge-goals"',
    "rm -rf .git/forge\\-goals",
    "rm -rf .git/'forge'\"-goals\"",
    # path tricks: relative, .., symlinks, ~, absolute, variables, globs, braces
    "rm -rf ./src/../.git/forge-goals",
    "rm -rf src/../.forge/local/state.md",
    "rm -rf ../link-to-git/forge-goals",
    "rm -rf ledger-link/n1",
    "rm -rf ~/proj/.git/forge-goals",
    "rm -rf $HOME/proj/.git/forge-goals",
    "rm -rf ${PROJ}/.forge/local/state.md",
    "D=.git/forge-goals; rm -rf $D",
    "rm -rf .git/forge-*",
    "rm -rf .git/forge-goal?",
    "rm -rf .gi[t]",
    "rm -rf .git/forge-{goals,other}",
    "cd .git && rm -rf forge-goals",
    "cd .git; cd forge-goals; rm -rf n1",
    "cd .forge/local && echo x > state.md",
    "cd .forge/local && python3 -c 'open(\"state.md\",\"w\")'",
    # unknowable targets
    "rm -rf $(git rev-parse --git-dir)",
    "rm -rf `git rev-parse --git-dir`",
    "rm -rf \"$(git rev-parse --git-common-dir)/forge-goals\"",
    "cat /tmp/x > $(echo .git/forge-goals/n1/head.json)",
    "cp /tmp/x \"$(git rev-parse --git-dir)/forge-goals/n1/head.json\"",
    "chmod 000 `git rev-parse --git-dir`",
    # a cd forge cannot follow, then a relative write
    'cd "$(git rev-parse --git-common-dir)" && rm -rf forge-*',
    "cd `git rev-parse --git-dir`; echo x > forge-goals/n1/head.json",
    "cd $NOWHERE && truncate -s0 records/00000001.json",
    # forge's own hook-side entry points
    "forge ledger charge --project .",
    "forge ledger activate --project . --state .forge/local/state.md",
    "python3 -m forge_runtime ledger charge",
    "forge mode exit --session sess-1",
    "forge goal publish --nonce 0123456789abcdef0123456789abcdef --restore",
    "forge goal publish --restore --nonce n1",
    "forge goal publish --nonce n1 --rest",
    "python3 -m forge_runtime goal publish --nonce n1 --restore",
    "forge init --force",
    "echo '{}' | python3 -m forge_runtime.hooks UserPromptSubmit",
    # forge's status line with forged input writes the plan's readings (goal/hosts/plan_readings.py)
    "python3 -c 'from forge_runtime.statusline import main; main()' < ../outside/limits.json",
    "python3 -m forge_runtime.statusline < ../outside/limits.json",
    ".forge/hooks/lib/goal-ledger.sh activate --project .",
    # unparseable but naming a protected path
    "rm -rf .git/forge-goals 'unbalanced",
    # shell grammar: reserved words, groups, functions, coprocesses
    "if true; then rm -rf .git; fi",
    "{ rm -rf .git; }",
    "! rm -rf .git",
    "while true; do rm -rf .git; done",
    "f() { rm -rf .git; }; f",
    "function f { rm -rf .git; }; f",
    "coproc rm -rf .git",
    "busybox rm -rf .git",
    # command substitutions wherever they stand: in quotes, backticks, process substitution
    'echo "$(rm -rf .git/forge-goals)"',
    "echo `rm -rf .git`",
    "cat <(rm -rf .git)",
    "ls > >(rm -rf .git)",
    # a command name forge cannot know, or one held in a variable
    "$(echo rm) -rf .git",
    "x=rm; $x -rf .git",
    "f=forge; $f mode exit",
    # variables set other ways, and the shell's own
    "export D=.git; rm -rf $D",
    "declare D=.git; rm -rf $D",
    "for d in .git; do rm -rf $d; done",
    "for d in src .forge; do rm -rf \"$d\"; done",
    "rm -rf $PWD/.git",
    "cd /; rm -rf $OLDPWD/.git",
    "rm -rf $UNSET.git",
    "rm -rf ${PWD%/}/.git",
    "rm -rf .git\0",
    # copies into a directory write the source's name there
    "cp -r /tmp/forge-goals .git/",
    "cp /tmp/state.md .forge/local/",
    "cp -t .forge/local /tmp/state.md",
    "install /tmp/state.md .forge/local/",
    "install -d .git/forge-goals/n2",
    "cp -rT /tmp/fake .git",
    "cp -r /tmp/backup/. .git/",
    "rsync -a --delete /tmp/empty/ .git/",
    "mkdir -p /tmp/b/.git && cp -r /tmp/b/.git .",
    # archives unpacked into a directory that holds a protected path
    "tar -xf /tmp/x.tar -C .git",
    "tar xf /tmp/x.tar --directory=.forge",
    "tar -C .git -xf /tmp/x.tar",
    "cd .git && tar xzf /tmp/x.tgz",
    "unzip -o /tmp/x.zip -d .git",
    # paths handed to xargs by the commands before it
    "find .git -name 'forge-*' | xargs rm -rf",
    "find . -name '*.json' | xargs rm -f",
    "ls .git | xargs rm -rf",
    # git subcommands that write where they are told
    "git stash push -a",
    "git stash save --all",
    "git init .git/forge-goals/n2",
    "git clone /tmp/r .git/forge-goals/n2",
    "git -C .git/forge-goals init",
    "git config --file .git/forge-goals/x a.b c",
    "git log --output=.forge/local/state.md",
    # re-permissioning a directory above a protected path
    "chmod 000 .git",
    # a symlink made earlier in the same command
    "ln -s . L && rm -rf L/.git",
    "ln -sfn .git G; chmod -R 000 G/",
    "ln -s .git L && rm -rf L/",
    'rm -rf "${NOT_SET:-.git}"',
    "rm -rf ${HOME:-x}/proj/.git",
    "mv /tmp/forge-goals .git/",
    "mv -t .forge/local /tmp/state.md",
    # where the shell really is: subshells, popd, CDPATH
    "(cd /tmp); rm -rf .git",
    "pushd /tmp; popd; rm -rf .git",
    "export CDPATH=.git; D=forge; cd $D-goals; rm -rf n1",
    # git told where its repository or work tree is
    "git --git-dir=.git/forge-goals/n1 init",
    "git --work-tree=.git/forge-goals checkout -- .",
    "git clean -fdx -e '!.forge'",
    "git ls-files -o --ignored --exclude-standard | xargs rm",
    # more wrappers that run the rest of the line
    "su -c 'rm -rf .git'",
    "runuser -u root -- rm -rf .git",
    "setsid rm -rf .git",
    "flock /tmp/l rm -rf .git",
    "strace -o /dev/null rm -rf .git",
    "watch -n1 rm -rf .git",
    "parallel rm -rf ::: .git",
    "at now <<< 'rm -rf .git'",
    "env -S 'rm -rf .git'",
    "env --split-string='rm -rf .git'",
    "env -S \"x'y\" .git",
    # a whole command held in a variable
    "x='rm -rf .git'; eval $x",
    "x='rm -rf .git'; $x",
    'x="rm -rf"; $x .git',
    "sh -c 'rm -rf \"$1\"' _ .git",
    "bash -c 'rm -rf \"$@\"' _ src .git",
    "sh -c 'rm -rf \"$1/forge-g\"*' _ .git",
    # code handed to a shell on its input, and forge's entry points hidden in a script
    "echo 'rm -rf .git' | sh",
    "X=1 echo 'rm -rf .git' | sh",
    "if true; then echo 'rm -rf .git' | sh; fi",
    "printf 'cd .git\\nrm -rf forge-goals\\n' | bash",
    "bash <<< 'rm -rf .git'",
    "echo 'forge mode exit --session sess-1' > /tmp/x.sh && sh /tmp/x.sh",
    "echo mode exit | xargs forge",
    "python3 -c \"from forge_runtime.cli.main import main; main(['mode', 'exit'])\"",
    "python3 -c 'from forge_runtime.guard import modes; modes.leave(d, s)'",
]

ALLOWED = [
    "ls -la",
    "cat .forge/local/state.md",
    "cat .git/forge-goals/n1/records/00000001.json | jq .",
    "grep -r turn_count .forge/local/state.md",
    "ls .git/forge-goals/n1/records | wc -l",
    "sha256sum .git/forge-goals/n1/records/*",
    "git status && git diff",
    "git log --oneline -5 > /tmp/log.txt",
    "git add src/app.py && git commit -m 'change'",
    "git clean -fd",
    "echo hello > hello.txt",
    "echo hello >> src/app.py",
    "rm -rf build dist",
    "rm -rf ./*",
    "find . -name '*.pyc' -delete",
    "find src -type f -delete",
    "chmod +x src/app.py",
    "sed -n 1,5p .forge/local/state.md",
    "cp .forge/local/state.md /tmp/state-copy.md",
    "python3 -m pytest -q",
    "npm test && cat .forge/local/state.md",
    "forge goal publish --nonce 0123456789abcdef0123456789abcdef",
    "forge goal status",
    "forge goal verify --json",
    "forge mode enter clarifier --session sess-1",
    "forge guard roles",
    "echo $UNKNOWN > out.txt",
    "ls 2>&1 | head",
    "make build 2>/dev/null",
    "mv src/app.py src/main.py",
    "rm -rf \"$TMPDIR/scratch\"",
    "rm ledger-link",
    "cd \"$(mktemp -d)\" && git clone /tmp/repo && make",
    "cd $NOWHERE && ls -la && echo hi > /tmp/out.txt",
    "cd $NOWHERE; cd /tmp && rm -rf scratch",
    "kill $(pgrep -f server)",
    "docker run --rm $(cat image.txt)",
    "cp -r .git/forge-goals /tmp/ledger-backup",
    "",
    "if [ -d build ]; then rm -rf build; fi",
    "for f in *.pyc; do rm -f \"$f\"; done",
    "export NODE_ENV=test && npm test",
    'echo "$(date)" > build.log',
    "grep -n '$(' src/app.py",
    "diff <(sort a.txt) <(sort b.txt)",
    "find . -name '*.pyc' | xargs rm -f",
    "git ls-files -z | xargs -0 wc -l",
    "git stash push -m wip",
    "git init /tmp/other-repo",
    "git log --output=/tmp/log.txt",
    "cp -r src /tmp/backup/",
    "cp /tmp/a.txt src/",
    "cp -r /tmp/x .",
    "rsync -a --delete build/ /tmp/site/",
    "tar -czf /tmp/out.tgz .",
    "unzip -o /tmp/x.zip -d vendor",
    "chmod 755 src",
    "ln -s src/app.py app.py && cat app.py",
    "rm -rf ~/scratch",
    "echo 'print(1)' | python3",
    "echo ls | sh",
    "git commit -m 'docs: how a person runs forge mode exit'",
    "mv src/app.py ..",
    "(cd src && ls); rm -rf build",
    "pushd src && make && popd",
    "git clean -fdx src -e '*.keep'",
    "git ls-files -o --exclude-standard | xargs rm",
    "flock /tmp/l make",
    "parallel gzip ::: src/*.py",
]


@pytest.mark.parametrize("command, refused", judged(DENIED, ALLOWED))
def test_writes_to_protected_paths_are_caught_and_ordinary_commands_pass(project, command,
                                                                         refused):
    assert_verdict(verdict(project, command), refused)


def test_the_finding_names_what_is_protected(project):
    finding = verdict(project, "rm -rf .git/forge-goals")
    assert finding.entry.label == "the goal ledger"
    assert "deletes the goal ledger" in finding.message
    above = verdict(project, "rm -rf .git")
    assert "holds the goal ledger" in above.message


def test_a_home_named_by_user_is_expanded(project):
    import pwd

    home = pwd.getpwuid(os.getuid())
    assert paths.expand(f"~{home.pw_name}/x", "/tmp", {"HOME": "/elsewhere"}) == \
        os.path.realpath(os.path.join(home.pw_dir, "x"))


def test_paths_are_resolved_from_the_working_directory(project):
    assert verdict(project, "rm -rf ../.git", cwd=project / "src") is not None
    assert verdict(project, "rm -rf ../.git", cwd=project) is None


def test_a_symlink_made_outside_the_project_still_leads_to_the_ledger(project, tmp_path):
    (tmp_path / "innocent").symlink_to(project / ".git" / "forge-goals" / "n1")
    assert verdict(project, f"rm -rf {tmp_path}/innocent/records") is not None


def test_outside_git_the_fallback_ledger_is_protected(tmp_path):
    root = tmp_path / "plain"
    (root / ".forge" / "local" / "goals" / "n1").mkdir(parents=True)
    found = find_project(root)
    protected = paths.protected_paths(found)
    assert shell.analyse("rm -rf .forge/local/goals", str(root), {}, protected) is not None
    assert shell.analyse("rm -rf src", str(root), {}, protected) is None


def test_deeply_nested_shells_are_refused_rather_than_followed(project):
    command = "rm -rf x"
    for _ in range(9):
        command = f"bash -c {shlex.quote(command)}"
    assert "too deeply" in verdict(project, command).message


def test_a_command_too_long_to_read_in_time_is_refused_unread(project):
    harmless = "echo hi > /tmp/x; " * (walk.MAX_COMMAND // 18)
    assert len(harmless) <= walk.MAX_COMMAND
    assert verdict(project, harmless) is None
    assert "more than forge reads" in verdict(project, harmless + "ls; " * 10).message


@pytest.mark.parametrize("command", [
    "rm -rf " + "{a,b}" * 24 + " .git/forge-goals",
    "rm -rf " + "{a,b}" * 24 + "/../.git",
    "rm -rf /*/*/*/*/*/*/*/*/zzz .git",
])
def test_a_command_built_to_outlast_the_hook_timeout_is_refused_quickly(project, command):
    """The host lets a PreToolUse hook that times out (10 s) through: expansion bombs must
    be refused, not expanded."""
    import time

    started = time.monotonic()
    assert verdict(project, command) is not None
    assert time.monotonic() - started < 3


shell_words = st.sampled_from(["rm", "-rf", ".git", "forge-goals", "cd", "..", "&&", "|", ";",
                               ">", ">>", "<<", "EOF", "$(", ")", "`", "'", '"', "*", "{a,b}",
                               "~", "$HOME", "find", "-delete", "git", "clean", "-fdx", "sed",
                               "-i", "xargs", "bash", "-c", "forge", "mode", "exit", "\n"])


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.lists(shell_words | st.text(max_size=6), max_size=14).map(" ".join))
def test_any_command_text_gets_an_answer_not_an_exception(project, command):
    finding = verdict(project, command)
    assert finding is None or finding.message


def test_a_linked_worktree_reaches_the_shared_ledger_only_through_refusals(tmp_path):
    """The ledger lives in the git common dir, outside a linked worktree's own tree."""
    import subprocess

    from forge_runtime.hostkit.projects import add_worktree

    main = make_project(tmp_path / "main")
    subprocess.run(["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"],
                   check=True, env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL":
                                    "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL":
                                    "t@t"})
    linked = add_worktree(main, tmp_path / "linked")
    protected = paths.protected_paths(find_project(linked))
    env = {"HOME": str(tmp_path)}
    for command in ("rm -rf ../main/.git/forge-goals", f"rm -rf {main}/.git",
                    "rm -rf $(git rev-parse --git-common-dir)/forge-goals",
                    "cd ../main && rm -rf .git/forge-*"):
        assert shell.analyse(command, str(linked), env, protected) is not None, command
    assert shell.analyse("rm -rf build && git status", str(linked), env, protected) is None


@pytest.mark.parametrize("command", [
    "echo '- [ ] step 3' >> .forge/local/state.md",
    "printf '%s\\n' '- [x] read' >> .forge/local/state.md",
    "tee -a .forge/local/state.md <<< '- [ ] more'",
    "cat >> .forge/local/state.md <<'EOF'\n- [ ] write tests\nEOF",
    "touch .forge/local/state.md",
    "touch .forge/local/notes.md && mkdir -p .forge/local/scratch",
    "cd .forge/local && echo x > notes.md && rm notes.md",
])
def test_the_checklist_and_other_local_files_stay_the_agents(project, command):
    assert verdict(project, command) is None


def test_an_append_is_refused_when_it_could_reach_into_the_front_matter(project):
    """A state.md whose front matter is not closed by a newline: appended text would join
    the goal fields."""
    (project / ".forge" / "local" / "state.md").write_text("---\ngoal: null\n---")
    assert verdict(project, "echo '- [ ] x' >> .forge/local/state.md") is not None
    (project / ".forge" / "local" / "state.md").write_text("no front matter\n")
    assert verdict(project, "echo '---' >> .forge/local/state.md") is not None


def test_the_files_that_say_where_the_ledger_is_are_protected(project, tmp_path,
                                                              monkeypatch):
    assert "commondir" in verdict(project, "echo /tmp > .git/commondir").message
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    protected = paths.protected_paths(find_project(project))
    finding = shell.analyse(f"rm -rf {tmp_path}/state/forge", str(project), {}, protected)
    assert finding.entry.label == paths.WITNESS_LABEL


@pytest.mark.parametrize("command", [
    "rm -rf .git/forge-goals", "mv .git/forge-goals ../gone", "rm -rf .git",
    "echo x > .git/forge-goals/n1/records/00000001.json", "rm .git/commondir",
    "echo ../.. > .git/commondir", "rm -rf .git/forge-guard"])
def test_a_commondir_rewritten_from_outside_moves_nothing_the_guard_protects(project,
                                                                            tmp_path, command):
    """With `.git/commondir` already pointing elsewhere (written by another process), the
    ledger forge keeps, and so the one the guard protects, is still the layout's."""
    (tmp_path / "elsewhere").mkdir()
    (project / ".git" / "commondir").write_text(f"{tmp_path / 'elsewhere'}\n")
    assert find_project(project).ledger_root == project / ".git" / "forge-goals"
    assert verdict(project, command) is not None, command


def test_every_linked_work_trees_pointers_are_protected_from_any_work_tree(tmp_path):
    from forge_runtime.hostkit.projects import add_worktree, init_git_project

    main = init_git_project(tmp_path / "main")
    add_worktree(main, tmp_path / "linked")
    admin = main / ".git" / "worktrees" / "linked"
    for where, command in [
            (main, "echo 'gitdir: /tmp/x' > ../linked/.git"),
            (main, f"echo /tmp > {admin}/commondir"),
            (main, f"rm {admin}/gitdir"),
            (tmp_path / "linked", "echo 'gitdir: /tmp/x' > .git"),
            (tmp_path / "linked", f"rm -rf {main}/.git/forge-goals"),
            (tmp_path / "linked", f"rm {admin}/commondir")]:
        assert verdict(where, command) is not None, (where, command)
    assert verdict(main, "cat ../linked/.git") is None
    assert verdict(tmp_path / "linked", "git status") is None


def test_the_hooks_own_environment_is_not_the_bash_tools(project):
    """The launcher sets PYTHONPATH for the hook only: a word built on it is unknown."""
    env = {"PYTHONPATH": "/plugin", "HOME": str(project.parent), "CLAUDE_PROJECT_DIR": "/x"}
    protected = paths.protected_paths(find_project(project))
    for command in ("rm -rf ${PYTHONPATH}.git", "rm -rf ${CLAUDE_PROJECT_DIR:-.}/.git"):
        assert shell.analyse(command, str(project), env, protected) is not None, command
    assert shell.analyse("rm -rf ~/scratch", str(project), env, protected) is None


@pytest.mark.parametrize("command", [
    "rm -rf {" + ",".join(["/*/*/*/*"] * 200) + "} .git",
    "ls " + " ".join(["/usr/*/*/*"] * 3000),
    "echo " + "`" * 50001,
    "rm -rf " + "${a-" * 3000,
    "ls # " + "{a," * 2000 + "}" * 2000,
    "echo '" + "," * 100000 + "'",
])
def test_expansions_are_bounded_before_they_run(project, command):
    """Each of these once kept the hook busy past the host's timeout; now each expansion
    stops at its size cap (the answer is a deny or an allow, never a long walk)."""
    finding = verdict(project, command)
    assert finding is None or finding.message
