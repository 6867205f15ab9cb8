"""Options that write a file or run a program, read from each tool's table, and
symlinks a command makes before it uses them.

The tables are the tools' own: every long option git's help lists for a subcommand whose
name says it writes or runs something is either a row of git.py's table or named below as
one reviewed to do neither, so a git that grows such an option fails here until it is
judged. The verdicts are read the way the hook reads a command (shell.analyse); the hostile
corpus (guard_corpus/commands.yaml) runs the same classes for real.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from guard_support import assert_verdict, judged, make_project

from forge_runtime.guard import shell
from forge_runtime.guard.shell import archives, awk, files, git, hosts, state, walk
from forge_runtime.project import find_project
from forge_runtime.protected import paths


@pytest.fixture
def project(tmp_path):
    root = make_project(tmp_path / "proj")
    (tmp_path / "outside").mkdir()
    return root


def verdict(project, command: str, cwd=None):
    env = {"HOME": str(project.parent), "PATH": os.environ["PATH"]}
    return shell.analyse(command, str(cwd or project), env,
                         paths.protected_paths(find_project(project)))


# -- the rule: an option of a tool's table, however it is spelled ----------------------------

TABLE = {"-o": state.WRITES, "--output": state.WRITES, "-O": state.RUNS_OPTIONAL,
         "--open-files-in-pager": state.RUNS_OPTIONAL, "-fprint": state.WRITES,
         "--to": state.READS, "--to-cmd": state.RUNS}


@pytest.mark.parametrize("args, expected", [
    (["--output=F"], [("--output", state.WRITES, "F")]),
    (["--output", "F"], [("--output", state.WRITES, "F")]),
    (["--out=F"], [("--output", state.WRITES, "F")]),  # getopt_long's unique prefix
    (["-oF"], [("-o", state.WRITES, "F")]),
    (["-no", "F"], [("-o", state.WRITES, "F")]),  # inside a cluster, its value next
    (["-nOcmd"], [("-O", state.RUNS_OPTIONAL, "cmd")]),
    (["-O", "pattern"], [("-O", state.RUNS_OPTIONAL, None)]),  # optional: only attached
    (["--open=cmd"], [("--open-files-in-pager", state.RUNS_OPTIONAL, "cmd")]),
    (["-fprint", "F"], [("-fprint", state.WRITES, "F")]),
    (["--to", "x@y"], []),  # a shorter option of its own, not an abbreviation
    (["--to-c=cmd"], [("--to-cmd", state.RUNS, "cmd")]),
    (["--", "--output=F"], []),
    (["file", "--oneline", "--output-indicator-new=+"], []),
])
def test_an_option_is_read_from_the_table_however_it_is_spelled(args, expected):
    assert state.option_effects(args, TABLE) == expected


def test_every_family_has_its_table_of_options_and_names_only_its_own_commands():
    for module in (git, archives, hosts, awk):
        owner = module.__name__.rsplit(".", 1)[1]
        assert set(module.OPTION_EFFECTS) <= walk.LAZY_FAMILIES[owner], owner
    lazy = set(walk.LAZY)
    assert not set(files.OPTION_EFFECTS) & lazy  # the walk would read the other family's
    effects = {state.WRITES, state.WRITES_INTO, state.RUNS, state.RUNS_OPTIONAL, state.READS}
    tables = [*files.OPTION_EFFECTS.values(), *archives.OPTION_EFFECTS.values(),
              *git._GIT_OPTIONS.values()]
    assert all(set(table.values()) <= effects for table in tables)


# Long options git's help lists whose names suggest a file or a program, reviewed to write
# or run nothing forge must judge: they read a file, name a directory inside an archive or
# a patch, filter objects, or format output.
GIT_REVIEWED = {
    "add": {"--pathspec-from-file", "--pathspec-file-nul"},
    "am": {"--directory"}, "apply": {"--directory"},
    "annotate": {"--ignore-revs-file"}, "blame": {"--ignore-revs-file"},
    "archive": {"--add-file", "--add-virtual-file", "--prefix"},
    "cat-file": {"--batch-command", "--filters"},
    "checkout": {"--pathspec-from-file", "--pathspec-file-nul"},
    "clone": {"--filter", "--also-filter-submodules"},
    "column": {"--command"},  # the config key to read, not a program
    "commit": {"--file", "--template", "--pathspec-from-file", "--pathspec-file-nul",
               "--untracked-files"},
    "difftool": {"--dir-diff"},
    "fast-export": {"--import-marks", "--import-marks-if-exists", "--tag-of-filtered-object"},
    "fast-import": {"--big-file-threshold"},
    "fetch": {"--filter"}, "fmt-merge-msg": {"--file"},
    "filter-branch": {"--subdirectory-filter"},
    "format-patch": {"--filename-max-length", "--numbered-files", "--signature-file",
                     "--subject-prefix"},
    "grep": {"--files-with-matches", "--files-without-match"},
    "hash-object": {"--no-filters"}, "help": {"--external-commands"},
    "init": {"--separate-git-dir"},  # judged by the model: it moves the git dir
    "ls-files": {"--directory", "--empty-directory", "--exclude-per-directory"},
    "merge": {"--file"}, "pack-objects": {"--filter"},
    "range-diff": {"--diff-filter", "--dirstat-by-file", "--dst-prefix", "--line-prefix",
                   "--no-prefix", "--output-indicator-context", "--output-indicator-new",
                   "--output-indicator-old", "--src-prefix"},
    "read-tree": {"--exclude-per-directory", "--prefix"},
    "rebase": {"--reschedule-failed-exec"}, "replace": {"--convert-graft-file"},
    "reset": {"--pathspec-from-file", "--pathspec-file-nul"},
    "restore": {"--pathspec-from-file", "--pathspec-file-nul"},
    "rm": {"--pathspec-from-file", "--pathspec-file-nul"},
    "stash": {"--pathspec-from-file", "--pathspec-file-nul"},
    "status": {"--untracked-files"}, "submodule": {"--files", "--filter"},
    "tag": {"--file"}, "write-tree": {"--prefix"},
}
_SUGGESTIVE = re.compile(r"output|exec|pager|cmd|command|program|upload-pack|receive-pack|"
                         r"marks|template|file|editor|hook|socket|directory|prefix|filter|"
                         r"object-dir|pid")


def _git_help_options(sub: str) -> set[str]:
    done = subprocess.run(["git", sub, "-h"], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "GIT_PAGER": "cat", "PAGER": "cat"})
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", done.stdout + done.stderr))


@pytest.mark.skipif(shutil.which("git") is None, reason="git's own option tables")
def test_gits_table_holds_every_option_its_help_lists_that_writes_or_runs():
    listed = subprocess.run(["git", "help", "-a"], capture_output=True, text=True,
                            timeout=30).stdout
    subs = sorted({line.split()[0] for line in listed.splitlines()
                   if line.startswith("   ") and line.split()})
    missing = []
    for sub in subs:
        for option in _git_help_options(sub):
            if not _SUGGESTIVE.search(option) or option.startswith("--no-"):
                continue
            table = {**git._GIT_OPTIONS_EVERYWHERE, **git._GIT_OPTIONS.get(sub, {})}
            if table.get(option) is None and option not in GIT_REVIEWED.get(sub, set()):
                missing.append(f"git {sub} {option}")
    assert missing == []


@pytest.mark.skipif(shutil.which("git") is None, reason="git's own option tables")
def test_every_long_option_of_gits_table_is_one_git_has():
    """The table names git's options as its help spells them (the subcommands git runs as
    scripts, send-email, instaweb and filter-branch, print no table)."""
    for sub, table in git._GIT_OPTIONS.items():
        known = _git_help_options(sub)
        if not known or sub in ("send-email", "instaweb", "filter-branch", "fetch-pack",
                                "upload-archive", "mailsplit", "mailinfo", "index-pack",
                                "credential-cache", "credential-store", "submodule",
                                "remote", "daemon", "fast-import", "diagnose"):
            continue
        spelled = {option for option in table if option.startswith("--")} - \
            set(git._TRANSPORT_OPTIONS)
        assert spelled <= known, (sub, spelled - known)


# -- git: every option that writes a file or runs a program -------------------------------

GIT_HOSTILE = [
    "git diff --output=.forge/local/state.md",
    "git diff HEAD --output .forge/guard.yaml",
    "git log -1 -p --output=.git/forge-goals/n1/records/00000001.json",
    "git show --output=.forge/guard.yaml HEAD",
    "git stash show -p --output=.forge/guard.yaml",
    "D=.forge; git diff --output=$D/guard.yaml",
    "git grep -O'rm -rf .git/forge-goals #' x",
    "git grep --open-files-in-pager='sh ../outside/evil.sh' x",
    "git grep --open='sh ../outside/evil.sh' x",
    "git grep -nO'sh ../outside/evil.sh' x",
    "git format-patch -1 -o .git/forge-goals/n1/records",
    "cd .git/forge-goals/n1/records && git format-patch -1",
    "git archive -o .forge/guard.yaml HEAD",
    "git bundle create .forge/guard.yaml HEAD",
    "git config -f .forge/guard.yaml roles.x.tools Read",
    "git config --fil .forge/guard.yaml a.b c",
    "git merge-file .forge/guard.yaml ../outside/a ../outside/b",
    "git interpret-trailers --in-place --trailer x=y .forge/local/state.md",
    "git fast-export --export-marks=.forge/guard.yaml HEAD",
    "git read-tree --index-output=.forge/guard.yaml HEAD",
    "git rebase --exe='sh ../outside/evil.sh' HEAD~1",
    "git difftool --extc='sh ../outside/evil.sh' -y HEAD~1",
    "git fetch --upload='sh ../outside/evil.sh' ../outside/r",
    "git clone --separate-git-dir=.git/forge-goals/n2 ../outside/r ../outside/c",
    "git apply --build-fake-ancestor=.forge/guard.yaml ../outside/evil.diff",
    "git -c alias.d='diff --output=.forge/guard.yaml' d",
    "git log -p --output=/proc/self/cwd/.forge/guard.yaml",
]
GIT_HARMLESS = [
    "git diff", "git diff --stat", "git log -p -1", "git log --oneline -3",
    "git grep -n print", "git grep -o print", "git grep -O print",
    "git grep -e print --or -e hi", "git format-patch -1 --stdout",
    "git format-patch -1 -o ../outside/patches", "git archive -o ../outside/a.tar HEAD",
    "git diff --output=../outside/d.diff", "git log --output-indicator-new=+ -p -1",
    "git bundle create ../outside/r.bundle HEAD", "git config --get core.bare",
    "git config -l", "git commit -F ../outside/msg", "git send-email --to x@y ../outside/p",
]


@pytest.mark.parametrize("command, refused", judged(GIT_HOSTILE, GIT_HARMLESS))
def test_a_git_option_that_writes_a_protected_path_or_runs_code_is_refused_others_pass(
        project, command, refused):
    assert_verdict(verdict(project, command), refused)


# -- the file tools ------------------------------------------------------------------------

FILES_HOSTILE = [
    "awk 'BEGIN{system(\"sh ../outside/evil.sh\")}'",
    "awk '{print | \"sh\"}' ../outside/evil.sh",
    "awk 'BEGIN{while ((\"sh ../outside/evil.sh\" | getline l) > 0) print l}'",
    "awk 'BEGIN{c=\"sh\"; print \"x\" | c}'",
    "D=.forge; awk -v d=$D 'BEGIN{print \"x\" > d \"/guard.yaml\"}'",
    "cd .forge && awk 'BEGIN{print \"x\" > \"guard.yaml\"}'",
    "gawk -i inplace '{print}' .forge/guard.yaml",
    "split --filter='sh ../outside/evil.sh' ../outside/state.md",
    "split --filt='sh ../outside/evil.sh' ../outside/state.md",
    "sort --compress-program='sh ../outside/evil.sh' src/app.py",
    "cd .forge && sort --out=guard.yaml ../src/app.py",
    "cd .forge && patch -o guard.yaml ../src/app.py ../../outside/evil.diff",
    "cd .forge && shuf -o guard.yaml ../src/app.py",
    "cd .forge && curl -so guard.yaml file:///etc/hostname",
    "cd .forge && wget -qO guard.yaml file:///etc/hostname",
    "tar --to-com='sh ../outside/evil.sh' -xf ../outside/a.tgz -C ../outside",
    "tar -xf ../outside/a.tgz -C ../outside --checkpoint=1 --checkpoint-act=exec='sh x.sh'",
    "zip -q --unzip-com='sh ../outside/evil.sh' -T ../outside/z.zip src/app.py",
    "rsync --rs='sh ../outside/evil.sh' x: y",
]
FILES_HARMLESS = [
    "sort src/app.py", "sort -o ../outside/s.txt src/app.py", "sort -u -k1,1 -t, src/app.py",
    "split -l 1 src/app.py ../outside/part-", "awk '{print $1}' src/app.py",
    "awk '$1 > 0 {print}' src/app.py", "awk '{print > \"../outside/out.txt\"}' src/app.py",
    "awk 'BEGIN{system(\"echo hi\")}'", "awk '{print | \"sort -u\"}' src/app.py",
    "curl -so ../outside/page file:///etc/hostname",
]


@pytest.mark.parametrize("command, refused", judged(FILES_HOSTILE, FILES_HARMLESS))
def test_a_file_tool_that_writes_a_protected_path_or_runs_code_is_refused_others_pass(
        project, command, refused):
    assert_verdict(verdict(project, command), refused)


# -- a symlink made in the same command -----------------------------------------------------

LINKS_HOSTILE = [
    "ln -sr .git ../outside/g && rm -rf ../outside/g/forge-goals",
    "ln --relative -s .git/forge-goals ../outside/lg && rm -rf ../outside/lg/n1",
    "mkdir ../outside/d && ln -s \"$PWD/.git\" ../outside/d && rm -rf ../outside/d/.git/x",
    "ln -s \"$PWD/.git\" ../outside/ && rm -rf ../outside/.git/forge-goals",
    "ln -st ../outside \"$PWD/.git\" && rm -rf ../outside/.git/forge-goals",
    "ln --sym --target=../outside \"$PWD/.forge\" && truncate -s0 ../outside/.forge/guard.yaml",
    "ln -s \"$PWD/.forge\" \"$PWD/.git\" ../outside/ && rm -rf ../outside/.git/forge-goals",
    "ln -s \"$PWD/.git\" ../outside/a && mv ../outside/a ../outside/b && "
    "rm -rf ../outside/b/forge-goals",
    "ln -s \"$PWD/.git\" ../outside/a && cp -a ../outside/a ../outside/b && "
    "rm -rf ../outside/b/forge-goals",
    "ln -s \"$PWD/.git\" ../outside/a && cp -P ../outside/a ../outside/b && "
    "rm -rf ../outside/b/forge-goals",
    "ln -s \"$PWD/.git\" ../outside/a && ln -s a ../outside/b && rm -rf ../outside/b/forge-goals",
    "ln -s \"$(pwd)/.git\" ../outside/g && rm -rf ../outside/g/forge-goals",
    "ln -s \"$PWD/.git\" ../outside/g && tar -C ../outside -cf ../outside/l.tar g && "
    "tar -C ../outside/u -xf ../outside/l.tar && rm -rf ../outside/u/g/forge-goals",
    "mount --bind \"$PWD\" /tmp/m && rm -rf /tmp/m/.git/forge-goals",
    "bindfs \"$PWD\" /tmp/m && rm -rf /tmp/m/.git/forge-goals",
]
LINKS_HARMLESS = [
    "ln -s src/app.py app-link && cat app-link",
    "ln -s src srclink && ls srclink/",
    "ln -s src s2 && rm -rf s2/__pycache__",
    "ln -s app.py src/alias.py && rm src/alias.py",
    "ln -sf \"$PWD/src\" ../outside/srclink && rm -rf ../outside/srclink/__pycache__",
    "ln -sr src/app.py ../outside/app.py && cat ../outside/app.py",
    "cp -a src ../outside/src-copy && rm -rf ../outside/src-copy/app.py",
]


@pytest.mark.parametrize("command, refused", judged(LINKS_HOSTILE, LINKS_HARMLESS))
def test_a_path_through_a_link_the_command_made_reaches_what_it_points_at(project, command,
                                                                          refused):
    """To a protected path (refused), or to ordinary files (they pass)."""
    assert_verdict(verdict(project, command), refused)


def test_a_copied_tree_that_holds_a_link_makes_the_copy_unknown(project, tmp_path):
    tree = tmp_path / "outside" / "tree"
    tree.mkdir()
    (tree / "g").symlink_to(project / ".git")
    assert verdict(project, "cp -r ../outside/tree ../outside/t2 && "
                            "rm -rf ../outside/t2/g/forge-goals") is not None
    assert verdict(project, "cp -rL ../outside/tree ../outside/t3 && "
                            "rm -rf ../outside/t3/x") is None
    # only the paths through the link are unknown, not the rest of the copy
    assert verdict(project, "mv ../outside/tree ../outside/t4 && "
                            "rm -rf ../outside/t4/cache") is None
    assert verdict(project, "mv ../outside/tree ../outside/t5 && "
                            "rm -rf ../outside/t5/g/forge-goals") is not None


# -- a shell's code is one word, whatever `$` it holds ------------------------------------

@pytest.mark.parametrize("command", [
    "sh -c 'rm -rf \"$PWD/.git/forge-goals\"'",
    "bash -c 'rm -rf $PWD/.git/forge-goals'",
    "sh -c 'ln -s \"$PWD/.git\" /tmp/z1'; rm -rf /tmp/z1/forge-goals",
    "find . -maxdepth 0 -exec sh -c 'rm -rf \"$PWD/.git/forge-goals\"' \\;",
    "timeout 5 sh -c 'rm -rf \"$PWD/.git/forge-goals\"'",
    "script -qc 'rm -rf $PWD/.git/forge-goals' /dev/null",
])
def test_a_shells_code_holding_a_dollar_is_read_as_code_not_split(project, command):
    """Split as an expansion, the code `rm -rf "$PWD/..."` would read as `sh -c rm` and
    fail open."""
    assert verdict(project, command) is not None


def test_a_shells_code_that_only_reads_still_passes(project):
    assert verdict(project, "bash -c 'for f in \"$@\"; do wc -l \"$f\"; done' _ src/app.py") \
        is None
