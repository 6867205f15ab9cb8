"""What one shell word can become before globbing: braces, sequences, `~` and parameters.

This is the valuing half of the guard's shell analysis: `syntax` splits a command
into words, the walk judges what they do, and this module says which strings a word stands
for, in the order bash expands them (braces, then `~`, then `$NAME` and `${NAME-word}`).

Every expansion is bounded before it runs, because the host lets a hook that overruns its
timeout through: the number of variants a word's braces and sequences make is counted
first (a linear scan, no backtracking regex), and a word that would make more than
`VARIANTS_LIMIT`, or nests parameters or braces deeper than forge follows, is unknown.
"Unknown" (None) is an answer, not an error: the caller decides what it may not do with
a word whose value forge cannot know.

A variable's value is whatever the caller's `env` holds for it; a name not in `env`, or
one whose value holds a backquote (what a lifted `$(...)` leaves), is unknown. `$$` and
`$BASHPID` become `SELF`, so `/proc/$$/cwd` can be recognised as the shell's own cwd.
"""

VARIANTS_LIMIT = 256
WORD_LIMIT = 4096  # PATH_MAX: a longer word names no path the kernel would take
_NESTING_LIMIT = 16
SELF = "\0self\0"  # the shell's own process id; NUL never survives into a real word
# A shell variable name: an ASCII letter or `_`, then those or digits.
NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
NAME_CHARS = NAME_START + "0123456789"
_SPECIAL = "@*#?-!0123456789"


def unknown(value: str | None) -> bool:
    """A value forge cannot know: None, or text holding what a substitution left behind."""
    return value is None or "`" in value


def values(word: str, env: dict[str, str | None]) -> list[str | None]:
    """Every string `word` can become; [None] when it cannot be known or is too wide."""
    if len(word) > WORD_LIMIT:
        return [None]
    variants = braces(word)
    if variants is None:
        return [None]
    return [value(variant, env) for variant in variants]


def value(word: str, env: dict[str, str | None]) -> str | None:
    """`word` after `~` and parameter expansion (no braces, no globs); None if unknowable."""
    word = _tilde(word, env)
    if word is None:
        return None
    if "$" in word:
        word = _parameters(word, env, 0)
    return None if unknown(word) else word


def _tilde(word: str, env: dict[str, str | None]) -> str | None:
    if not word.startswith("~"):
        return word
    head, slash, tail = word.partition("/")
    if head == "~":
        base = env.get("HOME")
    elif head == "~+":
        base = env.get("PWD")
    elif head == "~-":
        base = env.get("OLDPWD")
    else:
        import os

        base = os.path.expanduser(head)  # `~user`: that user's home, as the shell does
        base = None if base == head else base
    return None if base is None else base + slash + tail


def _parameters(word: str, env: dict[str, str | None], depth: int) -> str | None:
    """`$NAME`, `${NAME}`, `${NAME:-word}` and friends replaced; None for anything else."""
    if depth > _NESTING_LIMIT:
        return None
    out: list[str] = []
    position = 0
    while position < len(word):
        char = word[position]
        if char != "$" or position + 1 == len(word):
            out.append(char)
            position += 1
            continue
        following = word[position + 1]
        if following == "{":
            end = _closing_brace(word, position + 2)
            if end is None:
                return None
            found = _braced(word[position + 2:end], env, depth)
            position = end + 1
        elif following in NAME_START:
            end = position + 1
            while end < len(word) and word[end] in NAME_CHARS:
                end += 1
            found = _lookup(word[position + 1:end], env)
            position = end
        elif following == "$":
            found, position = SELF, position + 2
        elif following in _SPECIAL:
            return None  # positional and special parameters: set by code forge does not run
        else:
            out.append(char)
            position += 1
            continue
        if found is None:
            return None
        out.append(found)
    return "".join(out)


def _closing_brace(word: str, start: int) -> int | None:
    depth = 1
    for position in range(start, len(word)):
        if word[position] == "{":
            depth += 1
        elif word[position] == "}":
            depth -= 1
            if depth == 0:
                return position
    return None


def _lookup(name: str, env: dict[str, str | None]) -> str | None:
    """A variable's value: None when unknown; a name the command unset (held as None) is
    empty."""
    if name == "BASHPID":
        return SELF
    if name not in env:
        return None
    found = env[name]
    if found is None:
        return ""
    return None if unknown(found) else found


def _braced(body: str, env: dict[str, str | None], depth: int) -> str | None:
    """The inside of `${...}`: a name, optionally with `-`, `=`, `+` (and `:` forms)."""
    end = 0
    while end < len(body) and body[end] in NAME_CHARS:
        end += 1
    name, rest = body[:end], body[end:]
    if not name or name[0] not in NAME_START:
        return None  # `${#x}`, `${!x}`, `${1}`: lengths, indirection, positionals
    if not rest:
        return _lookup(name, env)
    colon = rest.startswith(":")
    operator, operand = (rest[1:2], rest[2:]) if colon else (rest[:1], rest[1:])
    if operator not in ("-", "=", "+"):
        return None  # `${x%y}`, `${x/y/z}`, `${x:1}`: forge does not evaluate these
    if name not in env:
        return None  # unknown: it may be set or unset in the Bash tool
    current = env[name]
    if current is not None and unknown(current):
        return None
    is_set = current is not None and not (colon and current == "")
    if operator == "+":
        return _parameters(operand, env, depth + 1) if is_set else ""
    return current if is_set else _parameters(operand, env, depth + 1)


def braces(word: str) -> list[str] | None:
    """`word` after brace expansion (`{a,b}`, `{1..9}`, `{a..e..2}`, nested), counted before
    it is expanded; None when it makes more than VARIANTS_LIMIT words or nests too deep."""
    if "{" not in word:
        return [word]
    pairs = _brace_pairs(word)
    if pairs is None:
        return None
    if not pairs:
        return [word]
    if _count(word, 0, len(word), pairs) > VARIANTS_LIMIT:
        return None
    return [part for part in _expand(word, 0, len(word), pairs) if part != ""] or [""]


class _Brace:
    """One `{...}` that expands: its end, the positions of its top-level commas, or a range."""

    __slots__ = ("end", "commas", "sequence")

    def __init__(self, end: int, commas: list[int], sequence: list[str] | None) -> None:
        self.end, self.commas, self.sequence = end, commas, sequence


def _brace_pairs(word: str) -> dict[int, _Brace] | None:
    """Every expanding brace of `word` by its opening position, found in one pass."""
    stack: list[tuple[int, list[int]]] = []
    pairs: dict[int, _Brace] = {}
    for position, char in enumerate(word):
        if char == "{" and not (position and word[position - 1] == "$"):
            stack.append((position, []))
            if len(stack) > _NESTING_LIMIT:
                return None
        elif char == "," and stack:
            stack[-1][1].append(position)
        elif char == "}" and stack:
            start, commas = stack.pop()
            sequence = None if commas else _sequence(word[start + 1:position])
            if commas or sequence is not None:
                pairs[start] = _Brace(position, commas, sequence)
    return pairs


def _sequence(body: str) -> list[str] | None:
    """`1..5`, `05..10..5`, `a..e`: the words of a sequence expression (None if it is not
    one); its length is known before the list is made, and a long one is cut to the limit
    plus one so that counting refuses it."""
    parts = body.split("..")
    if len(parts) not in (2, 3) or not all(parts):
        return None
    step_text = parts[2] if len(parts) == 3 else "1"
    if not _is_integer(step_text):
        return None
    step = abs(int(step_text)) or 1
    first, last = parts[0], parts[1]
    if _is_integer(first) and _is_integer(last):
        low, high = int(first), int(last)
        padded = any(len(end.lstrip("-")) > 1 and end.lstrip("-").startswith("0")
                     for end in (first, last))
        width = max(len(first), len(last)) if padded else 0
        direction = 1 if high >= low else -1
        length = abs(high - low) // step + 1
        return [str(low + direction * step * index).zfill(width)
                for index in range(min(length, VARIANTS_LIMIT + 1))]
    if len(first) == 1 and len(last) == 1 and first.isascii() and last.isascii():
        low, high = ord(first), ord(last)
        direction = 1 if high >= low else -1
        return [chr(code) for code in range(low, high + direction, direction * step)]
    return None


def _is_integer(text: str) -> bool:
    return text.lstrip("-").isdigit() and len(text) < 19


def _count(word: str, start: int, end: int, pairs: dict[int, _Brace]) -> int:
    """How many words `word[start:end]` expands to, without expanding it."""
    total = 1
    position = start
    while position < end:
        brace = pairs.get(position)
        if brace is None:
            position += 1
            continue
        if brace.sequence is not None:
            options = len(brace.sequence)
        else:
            bounds = [position, *brace.commas, brace.end]
            options = sum(_count(word, low + 1, high, pairs)
                          for low, high in zip(bounds, bounds[1:], strict=False))
        total *= options
        if total > VARIANTS_LIMIT:
            return total
        position = brace.end + 1
    return total


def _expand(word: str, start: int, end: int, pairs: dict[int, _Brace]) -> list[str]:
    results = [""]
    literal_from = start
    position = start
    while position < end:
        brace = pairs.get(position)
        if brace is None:
            position += 1
            continue
        prefix = word[literal_from:position]
        if brace.sequence is not None:
            options = brace.sequence
        else:
            bounds = [position, *brace.commas, brace.end]
            options = [text for low, high in zip(bounds, bounds[1:], strict=False)
                       for text in _expand(word, low + 1, high, pairs)]
        results = [done + prefix + option for done in results for option in options]
        position = literal_from = brace.end + 1
    return [done + word[literal_from:end] for done in results]


def fields(text: str, ifs: str | None) -> list[str]:
    """`text` split into fields as an unquoted expansion is (`IFS`, default whitespace)."""
    if ifs is None:
        return text.split()
    if ifs == "":
        return [text]
    out, current = [], []
    for char in text:
        if char in ifs:
            if current or not char.isspace():
                out.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        out.append("".join(current))
    return [field for field in out if field != ""]


def literal(word: str) -> str:
    """The parts of `word` that no expansion changes: what it says whatever its variables."""
    out, position = [], 0
    while position < len(word):
        if word[position] == "$" and position + 1 < len(word):
            if word[position + 1] == "{":
                end = _closing_brace(word, position + 2)
                position = len(word) if end is None else end + 1
            else:
                position += 1
                while position < len(word) and word[position] in NAME_CHARS:
                    position += 1
            out.append(" ")
            continue
        out.append(word[position])
        position += 1
    return "".join(out)
