"""How a Bash command's text becomes pipelines of simple commands, split as the shell would.

This is the syntax half of the guard's shell analysis (walk.py judges what the commands
do). It is shlex's posix splitting (`lexer`) plus what shlex does not know: command
substitutions (`$(...)`, backquotes, `<(...)`), which run wherever they stand and are
lifted out to be judged on their own; redirections, pipes and subshells; here-strings; the
reserved words that open compound commands; ANSI-C quoting (`$'\x2egit'` is `.git`); and
the operator that ends each pipeline (`;`, `&&`, `||`, `&`), since whether a `cd` or an
assignment before it holds for what follows depends on it. It is not a shell parser and
does not try to be one.
"""

from forge_runtime.guard.shell import lexer as shell_lexer

OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&", "|&>"})
INPUT_REDIRECTS = frozenset({"<", "<<", "<<<", "<&", "<<-"})
PIPES = frozenset({"|", "|&"})
# Words that open or close a compound command; what follows them is an ordinary command.
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                      "!", "{", "}", "esac"})
# What a lifted command substitution leaves in its word: a backquote, so the word reads as
# one whose value forge cannot know.
LIFTED = "`?`"
SUBSHELL_OPEN, SUBSHELL_CLOSE = "(", ")"


class Pipeline(list):
    """The simple commands of one pipeline, and the operator after it (`then`): `;`, `&&`,
    `||` or `&` (`;` also for a newline and the end of the text)."""

    __slots__ = ("then",)

    def __init__(self) -> None:
        super().__init__([Simple()])
        self.then = ";"


class Simple:
    """One simple command: its words, the files its redirections write (and whether each
    appends), its here-strings.

    A slotted class, not a dataclass: `dataclasses` imports `inspect`, about 5 ms a call.
    """

    __slots__ = ("words", "writes", "appends", "stdin", "reads")

    def __init__(self) -> None:
        self.words: list[str] = []
        self.writes: list[str] = []
        self.appends: list[bool] = []  # for each of `writes`: `>>` rather than `>`
        self.stdin: list[str] = []
        self.reads: list[str] = []  # files its `<` redirections read


def lift_substitutions(text: str) -> tuple[str, list[str]]:
    """`text` with each `$(...)`, backquoted and `<(...)`/`>(...)` command replaced by a
    placeholder, and the commands themselves (they run too, wherever they stand, even inside
    double quotes). Single-quoted text is left alone: the shell runs nothing in it."""
    if "`" not in text and "(" not in text:
        return text, []  # the common case, without a walk over every character
    out: list[str] = []
    bodies: list[str] = []
    position, quote = 0, None
    while position < len(text):
        char = text[position]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            out.append(text[position:position + 2])
            position += 2
            continue
        elif char == "'" and quote is None:
            quote = "'"
        elif char == '"':
            quote = None if quote == '"' else '"'
        elif char == "`" or text.startswith("$(", position) or (
                quote is None and text.startswith(("<(", ">("), position)):
            if char == "`":
                end = text.find("`", position + 1)
                end = len(text) if end == -1 else end
                bodies.append(text[position + 1:end])
            else:
                end = _closing_parenthesis(text, position + 2)
                bodies.append(text[position + 2:end])
            out.append(LIFTED)
            position = end + 1
            continue
        out.append(char)
        position += 1
    return "".join(out), bodies


def _closing_parenthesis(text: str, start: int) -> int:
    """Where the `(` just before `start` closes (quotes respected); the end when it does not."""
    depth, quote, position = 1, None, start
    while position < len(text):
        char = text[position]
        if quote:
            if char == quote:
                quote = None
            elif char == "\\" and quote == '"':
                position += 1
        elif char == "\\":
            position += 1
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position
        position += 1
    return len(text)


_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
              "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def normalise(text: str) -> str:
    """`text` rewritten so that shlex reads the words bash would: each `$'...'` becomes the
    single-quoted string it stands for (and `$"..."` is `"..."`); an unquoted newline ends
    a command (` ; `) and a backslash-newline joins lines; a heredoc's body becomes a
    here-string of the command that reads it (`cat <<EOF` ... `EOF` is `cat <<< '...'`),
    so its lines are not read as commands; an extglob group (`!(x)`, `@(x)`) is a word
    forge cannot know."""
    if not any(mark in text for mark in ("$'", '$"', "\n", "<<", "(")):
        return text
    out: list[str] = []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []  # heredocs opened on this line: delimiter, <<-
    position, quote = 0, None
    while position < len(text):
        char = text[position]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            if text.startswith("\\\n", position) and quote is None:
                position += 2
                continue
            out.append(text[position:position + 2])
            position += 2
            continue
        elif char == '"':
            quote = None if quote == '"' else '"'
        elif quote == '"':
            pass
        elif char == "\n":
            out.append(" ; ")
            position += 1
            for delimiter, strip_tabs in pending:
                body, position = _heredoc_body(text, position, delimiter, strip_tabs)
                bodies.append(body)
            pending.clear()
            continue
        elif text.startswith("<<<", position):
            out.append("<<<")
            position += 3
            continue
        elif text.startswith("<<", position):
            delimiter, strip_tabs, position = _heredoc_delimiter(text, position + 2)
            pending.append((delimiter, strip_tabs))
            out.append(f"<<< \x01{len(bodies) + len(pending) - 1}\x01 ")
            continue
        elif text.startswith('$"', position):
            position += 1
            continue
        elif text.startswith("$'", position):
            decoded, position = _ansi_c_body(text, position + 2)
            out.append("'" + decoded.replace("'", "'\"'\"'") + "'")
            continue
        elif char in "?*+@!" and text.startswith("(", position + 1):
            out.append(LIFTED)
            position = _closing_parenthesis(text, position + 2) + 1
            continue
        elif char == "'":
            quote = "'"
        out.append(char)
        position += 1
    normalised = "".join(out)
    for index, body in enumerate(bodies):
        normalised = normalised.replace(f"\x01{index}\x01", shell_lexer.quote(body), 1)
    return without_placeholders(normalised)  # a heredoc the text never ends


def without_placeholders(text: str) -> str:
    """`text` with each `\\x01<digits>\\x01` left in it (a heredoc's body, or one the text
    never ends) made `''`: left to right, as re.sub did with `\\x01[0-9]+\\x01`."""
    out: list[str] = []
    position = 0
    while (start := text.find("\x01", position)) != -1:
        end = start + 1
        while end < len(text) and text[end] in "0123456789":
            end += 1
        if end > start + 1 and text.startswith("\x01", end):
            out.append(text[position:start] + "''")
            position = end + 1
        else:
            out.append(text[position:start + 1])
            position = start + 1
    out.append(text[position:])
    return "".join(out)


def _heredoc_delimiter(text: str, position: int) -> tuple[str, bool, int]:
    strip_tabs = text.startswith("-", position)
    position += strip_tabs
    while position < len(text) and text[position] in " \t":
        position += 1
    end = position
    while end < len(text) and text[end] not in " \t\n;|&<>()":
        end += 1
    return text[position:end].replace("'", "").replace('"', "").replace("\\", ""), \
        strip_tabs, end


def _heredoc_body(text: str, position: int, delimiter: str,
                  strip_tabs: bool) -> tuple[str, int]:
    """The lines from `position` up to the delimiter line, and where the text goes on."""
    lines: list[str] = []
    while position < len(text):
        end = text.find("\n", position)
        end = len(text) if end == -1 else end
        line = text[position:end]
        position = end + 1
        if (line.lstrip("\t") if strip_tabs else line) == delimiter:
            break
        lines.append(line)
    return "\n".join(lines), position


def _ansi_c_body(text: str, position: int) -> tuple[str, int]:
    """The decoded text of a `$'...'` body starting at `position`, and where it ends."""
    out: list[str] = []
    while position < len(text) and text[position] != "'":
        char = text[position]
        position += 1
        if char != "\\" or position >= len(text):
            out.append(char)
            continue
        kind = text[position]
        position += 1
        if kind in _C_ESCAPES:
            out.append(_C_ESCAPES[kind])
        elif kind in "01234567":
            digits = kind
            while len(digits) < 3 and position < len(text) and text[position] in "01234567":
                digits += text[position]
                position += 1
            out.append(chr(int(digits, 8) & 0xFF))
        elif kind in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[kind]
            digits = ""
            while len(digits) < width and position < len(text) and \
                    text[position] in "0123456789abcdefABCDEF":
                digits += text[position]
                position += 1
            out.append(chr(min(int(digits, 16), 0x10FFFF)) if digits else "\\" + kind)
        elif kind == "c" and position < len(text):
            out.append(chr(ord(text[position]) & 0x1F))
            position += 1
        else:
            out.append("\\" + kind)
    decoded = "".join(out)
    return decoded.split("\0", 1)[0], position + 1  # bash ends the word at a NUL


def _tokens(command: str) -> list[str] | None:
    try:
        return shell_lexer.tokens(normalise(command))
    except ValueError:
        return None


def _is_operator(token: str) -> bool:
    return bool(token) and all(char in "();<>|&" for char in token)


def parse(command: str) -> list[Pipeline | str] | None:
    """The command as pipelines of simple commands, with `(` and `)` where a subshell opens
    and closes; None when its quotes or escapes do not close."""
    tokens = _tokens(command)
    if tokens is None:
        return None
    pipelines: list[Pipeline | str] = [Pipeline()]
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if not _is_operator(token):
            pipelines[-1][-1].words.append(token)
        elif token in OUTPUT_REDIRECTS or (">" in token and "<" not in token):
            target = tokens[position] if position < len(tokens) else ""
            position += 1
            if not (token.endswith("&") and (target.isdigit() or target == "-")):
                pipelines[-1][-1].writes.append(target)
                pipelines[-1][-1].appends.append(token.endswith(">>"))
        elif token in INPUT_REDIRECTS or token.startswith("<"):
            if token == "<<<" and position < len(tokens):
                pipelines[-1][-1].stdin.append(tokens[position])
            elif token == "<" and position < len(tokens):
                pipelines[-1][-1].reads.append(tokens[position])
            position += 1
        elif token in PIPES:
            pipelines[-1].append(Simple())
        else:
            connector = "".join(char for char in token if char not in "()")
            if connector and isinstance(pipelines[-1], Pipeline):
                pipelines[-1].then = connector if connector in ("&&", "||", "&") else ";"
            pipelines.extend(char for char in token if char in (SUBSHELL_OPEN, SUBSHELL_CLOSE))
            pipelines.append(Pipeline())
    found: list[Pipeline | str] = []
    for pipeline in pipelines:
        if isinstance(pipeline, str):
            found.append(pipeline)
            continue
        pipeline[:] = [simple for simple in pipeline if simple.words or simple.writes]
        if pipeline:
            found.append(pipeline)
    return found


def strip_reserved(words: list[str]) -> list[str]:
    """`if x`, `then rm ...`, `{ rm ...`, `function f { rm ...`: the command after the words
    that open a compound command or a function."""
    while words and (words[0] in RESERVED or words[0] == "function"):
        words = words[2:] if words[0] == "function" else words[1:]
    return words
