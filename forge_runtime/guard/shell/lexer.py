"""The guard's word splitter: the two `shlex` configurations it reads shell text with, and
`shlex.quote`, written out so that the hook imports neither `shlex` nor `re`.

Importing `re` alone (with the `enum`, `functools` and `collections` it brings) costs more
than half a bare interpreter start, on every Bash call of every session. What the guard
needs of `shlex` is small: posix mode, `whitespace_split`, no comment characters, and
either the shell's punctuation (`();<>|&`) as operator tokens (`tokens`) or none
(`split`, which is `shlex.split`). Those are written here as one scan, and
tests/test_guard_shell_lexer.py holds them to `shlex` itself on generated text: the same
words, and a ValueError wherever `shlex` raises one, so forge splits exactly as it did.

The rules, as `shlex` applies them (not bash's: `syntax.normalise` bridges those):
whitespace is space, tab, carriage return and newline; a backslash outside quotes takes
the next character as it is; single quotes take everything up to the next one; inside
double quotes a backslash escapes only `"` and `\\` and is kept before anything else; a
run of punctuation is one token, and punctuation ends a word.
"""

WHITESPACE = " \t\r\n"
PUNCTUATION = "();<>|&"
NO_CLOSING_QUOTE = "No closing quotation"
NO_ESCAPED_CHARACTER = "No escaped character"
# What `shlex.quote` leaves unquoted: ASCII letters, digits and `_@%+=:,./-`.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def tokens(text: str) -> list[str]:
    """`list(shlex.shlex(text, posix=True, punctuation_chars=True))` with `whitespace_split`
    on and no comment characters: words, and each run of `();<>|&` as one token."""
    return _scan(text, PUNCTUATION)


def split(text: str) -> list[str]:
    """`shlex.split(text)`: posix words, no comments; ValueError when a quote or an
    escape does not close."""
    return _scan(text, "")


def quote(word: str) -> str:
    """`shlex.quote(word)`: the word as one shell word, single-quoted unless it is safe."""
    if not word:
        return "''"
    if all(char in _SAFE for char in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def is_word_char(char: str) -> bool:
    """Is `char` one of re's `\\w` (for text): a letter, digit or numeral of any script, or
    `_`? The guard's searches of command text name words by it, as they did with re."""
    return char.isalnum() or char == "_"


def _scan(text: str, punctuation: str) -> list[str]:
    found: list[str] = []
    ends_word = frozenset(WHITESPACE + punctuation + "\\'\"")
    position, end = 0, len(text)
    while True:
        while position < end and text[position] in WHITESPACE:
            position += 1
        if position == end:
            return found
        if text[position] in punctuation:
            start = position
            while position < end and text[position] in punctuation:
                position += 1
            found.append(text[start:position])
            continue
        parts: list[str] = []
        while position < end:
            char = text[position]
            if char == "\\":
                if position + 1 == end:
                    raise ValueError(NO_ESCAPED_CHARACTER)
                parts.append(text[position + 1])
                position += 2
            elif char == "'":
                close = text.find("'", position + 1)
                if close == -1:
                    raise ValueError(NO_CLOSING_QUOTE)
                parts.append(text[position + 1:close])
                position = close + 1
            elif char == '"':
                position = _double_quoted(text, position + 1, parts)
            elif char in WHITESPACE or char in punctuation:
                break
            else:
                start = position
                while position < end and text[position] not in ends_word:
                    position += 1
                parts.append(text[start:position])
        found.append("".join(parts))


def _double_quoted(text: str, position: int, parts: list[str]) -> int:
    """Append the body of the double-quoted string starting at `position` to `parts`;
    where the text goes on after its closing quote."""
    end = len(text)
    quote_at = text.find('"', position)
    while True:
        if 0 <= quote_at < position:  # that quote was escaped: the next one may close
            quote_at = text.find('"', position)
        escape_at = text.find("\\", position, quote_at if quote_at != -1 else end)
        if escape_at == -1:
            if quote_at == -1:
                raise ValueError(NO_CLOSING_QUOTE)
            parts.append(text[position:quote_at])
            return quote_at + 1
        parts.append(text[position:escape_at])
        if escape_at + 1 == end:
            raise ValueError(NO_ESCAPED_CHARACTER)
        escaped = text[escape_at + 1]
        parts.append(escaped if escaped in '"\\' else "\\" + escaped)
        position = escape_at + 2
