"""The guard's own splitter reads shell text exactly as the `shlex` configurations it
replaces: the same words, and a ValueError wherever shlex raises one, on generated text
dense in quotes, escapes, punctuation, comments and line ends."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from forge_runtime.guard.shell import lexer as shell_lexer

# Characters the splitter treats specially, the ones bash does (`#`, `$`, backquote), other
# whitespace shlex does not split on, and letters shlex's posix mode names as word chars.
SPECIAL = list(" \t\r\n\v\f'\"\\();<>|&#$`{}[]*?~=-./!") + ["\0", "é", "ß", "ÿ", "\u2028",
                                                              "\u00a0", "\x1c", "\ud800"]
FRAGMENTS = ["'", '"', "\\", "\\\n", "\\\"", "\\\\", "''", '""', "'a b'", '"a \\" b"',
             "&&", "||", ";;", ">>", "2>&1", "<<<", "|&", "$(x)", "# c", "\n", "\r\n"]
shell_text = st.lists(st.one_of(st.sampled_from(SPECIAL), st.sampled_from(FRAGMENTS),
                                st.text(max_size=4), st.sampled_from("abcxyz019")),
                      max_size=40).map("".join)


def shlex_tokens(text: str) -> list[str]:
    """The configuration shell/syntax.py reads commands with."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def outcome(split, text: str):
    try:
        return split(text)
    except ValueError as error:
        return ("ValueError", str(error))


@settings(max_examples=1500, deadline=None)
@given(shell_text)
@example("echo 'unterminated")
@example('echo "a\\')
@example("echo \\")
@example("a&&b||c;d|e>f<g (h) >>i 2>&1 &")
@example('"\\x\\"\\\\"')
def test_tokens_equal_shlex_with_punctuation(text):
    assert outcome(shell_lexer.tokens, text) == outcome(shlex_tokens, text)


@settings(max_examples=1500, deadline=None)
@given(shell_text)
@example("sh -c 'rm -rf x' _ ''")
@example("a\\ b 'c\"d' \"e'f\" # not a comment")
def test_split_equals_shlex_split(text):
    assert outcome(shell_lexer.split, text) == outcome(shlex.split, text)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(shell_text, st.text()))
@example("")
@example("a-z_0.9/@%+=:,")
@example("é")
def test_quote_equals_shlex_quote_and_splits_back(word):
    assert shell_lexer.quote(word) == shlex.quote(word)
    assert shell_lexer.split(shell_lexer.quote(word)) == [word]


@pytest.mark.parametrize("text, words", [
    ("git status --short && grep -rn TODO . | head -20 > notes.txt",
     ["git", "status", "--short", "&&", "grep", "-rn", "TODO", ".", "|", "head", "-20",
      ">", "notes.txt"]),
    ("rm -rf .git/forge-goals", ["rm", "-rf", ".git/forge-goals"]),
    ("a;(b)", ["a", ";(", "b", ")"]),
    ("echo 'x;y' \"$HOME\"\\;z", ["echo", "x;y", "$HOME;z"]),
])
def test_tokens_of_ordinary_commands(text, words):
    assert shell_lexer.tokens(text) == words


@pytest.mark.parametrize("text, message", [
    ("echo 'open", "No closing quotation"),
    ('echo "open \\"', "No closing quotation"),
    ("echo \\", "No escaped character"),
    ('echo "open \\', "No escaped character"),
])
def test_unclosed_quotes_and_escapes_raise_like_shlex(text, message):
    with pytest.raises(ValueError, match=message):
        shell_lexer.tokens(text)
