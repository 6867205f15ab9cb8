"""The guard's string scans give exactly what the regexes they replaced gave (kept here as
the reference), on generated text dense in the characters each one turns on: ASCII and
other scripts' word characters, digits of other scripts, `.` `-` `_`, quotes, newlines."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from forge_runtime.guard.shell import files, git, state, syntax, walk

# Word characters of re's `\w` beyond ASCII (letters, a decimal digit, a digit, a numeral),
# and characters that are not (a combining mark, punctuation, spaces of other kinds).
UNICODE = ["é", "ß", "Σ", "٣", "²", "Ⅻ", "_", "\u0300", "\u00b7", "\u2028", "\u00a0", "\x1c",
           "\u3000", "\0"]
ASCII = list("aZ09 \t\n.-_=+[]{}$@*\"'\\/~,:%!#()")


def made_of(*fragments: str, size: int = 30):
    pieces = st.one_of(st.sampled_from(list(fragments) + UNICODE + ASCII),
                       st.text(max_size=3))
    return st.lists(pieces, max_size=size).map("".join)


REFERENCE_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")
REFERENCE_ENTRY_POINTS = re.compile(
    r"\bmode\W{1,8}exit\b|\bledger\W{1,8}(?:activate|charge)\b|\bmodes\.leave\b")
REFERENCE_PROTECTED_DIRS = re.compile(r"(?:^|[^\w.-])\.(?:git|forge)(?![\w.-])")
REFERENCE_GIT_CODE_KEY = re.compile(
    r"^(?:core\.(?:fsmonitor|pager|editor|sshcommand|askpass|gitproxy|hookspath|worktree)|"
    r"sequence\.editor|diff\.external|(?:diff|filter|merge|pager|man|difftool|mergetool|"
    r"credential|remote|gpg|interactive|uploadpack|receive|alias|include|includeif)\..*|"
    r"protocol\..*\.allow|web\.browser|credential\.helper|gpg\.program)$")


def reference_positional(code: str, operands: list[str]) -> str:
    """files.positional as it was written with re and shlex."""
    import shlex

    if "$" not in code:
        return code

    def word(text: str) -> str:
        return text if re.match(r"^[\w./~+,:@%-]*$", text) else shlex.quote(text)

    def value(match: re.Match) -> str:
        name = next(group for group in match.groups() if group)
        if name in ("@", "*"):
            return " ".join(word(operand) for operand in operands[1:])
        index = int(name)
        return word(operands[index]) if index < len(operands) else ""

    code = re.sub(r'"\$([@*])"', value, code)
    return re.sub(r"\$(?:\{(\d)\}|([0-9@*]))", value, code)


@settings(max_examples=1000, deadline=None)
@given(made_of("A", "x_1", "[", "]", "+=", "=", "a[1]=", "[]", size=8))
@example("a[b]c=")
@example("a[]=")
@example("_=")
@example("a[x]+=1")
@example("é=1")
def test_assignment_as_the_regex(word):
    assert walk.is_assignment(word) is (REFERENCE_ASSIGNMENT.match(word) is not None)


@settings(max_examples=1500, deadline=None)
@given(made_of("mode", "modes", "exit", "exits", "ledger", "activate", "charge", "modes.leave",
               "', '", "  ", "........."))
@example("main(['mode', 'exit'])")
@example("mode.........exit")
@example("mode........exit")
@example("modeexit mode-exit")
@example("xmode exit")
@example("mode exit_")
@example("ledger  charge")
@example("é.modes.leave٣ modes.leave")
@example("mode\u0300exit")
def test_entry_points_as_the_regex(text):
    assert walk.names_entry_point(text) is \
        (REFERENCE_ENTRY_POINTS.search(text) is not None)


@settings(max_examples=1500, deadline=None)
@given(made_of(".git", ".forge", ".github", "x", "/", ".", "-", "git", size=20))
@example(".git")
@example("a/.git/b")
@example("x.git .gitignore -.git .git-x")
@example("é.git")
@example("\u00b7.forge")
@example("..git")
def test_protected_dirs_as_the_regex(text):
    assert state.names_protected_dir(text) is \
        (REFERENCE_PROTECTED_DIRS.search(text) is not None)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(
    made_of("core.", "pager", "alias.", "protocol.", ".allow", "include", "includeif.",
            "credential.helper", "gpg.program", "\n", "x", size=6),
    st.sampled_from(["core.pager", "core.pager\n", "core.pager\n\n", "alias.x\n", "alias.\n",
                     "alias.x\ny", "protocol..allow", "protocol.allow", "protocol.x.allow\n",
                     "protocol.a\nb.allow", "core.pagerx", "includeif.gitdir:x.path",
                     "web.browser", "sequence.editor"])))
def test_git_code_keys_as_the_regex(key):
    assert git.runs_code(key) is (REFERENCE_GIT_CODE_KEY.match(key) is not None)


@settings(max_examples=1000, deadline=None)
@given(made_of("$1", "$0", "$@", "$*", '"$@"', '"$*"', "${1}", "${٣}", "${12}", "$", "{",
               '"', "rm -rf ", size=12),
       st.lists(made_of(".git", "a b", "'", "\n", "$1", size=4), max_size=4))
@example('"$@"$@"', ["sh", ".git", "x y"])
@example('"$@""$*"', ["sh", "a"])
@example("rm ${٣} $3", ["sh", "a", "b", "c"])
@example("rm $1", ["sh", "a\n"])
@example("rm $1", ["sh", "a\n\n"])
@example("echo $1", ["sh", "$2", "x"])
def test_positional_as_the_regexes(code, operands):
    assert files.positional(code, operands) == reference_positional(code, operands)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # `\\.` is no escape to decode
@settings(max_examples=1000, deadline=None)
@given(st.lists(made_of("%s", "%b", "-e", "-n", "\\n", "\\0", "\\x2e", size=8), max_size=4))
@example(["a\x1cb\x1f c\u2028d\u0085e"])
def test_printed_words_as_the_regex(args):
    reference = [piece for arg in args
                 for piece in re.split(r"[\s\0]+", files._unescaped(arg)
                                       .replace("%s", " ").replace("%b", " "))
                 if piece and piece not in ("-e", "-n", "-E")]
    assert files._printed_words(args) == reference


@settings(max_examples=1000, deadline=None)
@given(made_of("\x01", "\x010\x01", "\x0112\x01", "0", "9", "٣", size=12))
@example("\x01\x0112\x01")
@example("\x0112\x0134\x01")
@example("\x01\x01")
def test_placeholders_as_the_regex(text):
    assert syntax.without_placeholders(text) == re.sub("\x01[0-9]+\x01", "''", text)
