"""What an awk program writes and runs: the files its prints redirect to, the commands its
`system()` and pipes run, gawk's `-i inplace`.

A family of its own (see the table in walk.py): imported only when awk runs, so the other
Bash calls do not load it.
"""

from forge_runtime.guard.shell.state import (
    Context,
    check_write,
    options,
    run_for_you,
    touches,
)
from forge_runtime.guard.shell.syntax import LIFTED
from forge_runtime.protected.paths import Finding


def check_awk(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """awk's program writes where a `print`/`printf` redirects (`> FILE`, `>> FILE`) and
    runs what `system(...)` and a pipe (`print | CMD`, `CMD | getline`) name: a string forge
    can read is judged as that write or that code, anything else as code it cannot read;
    gawk's `-i inplace` writes its files. A program in a file (`-f`) is code forge does
    not read."""
    operands, found = options(args, "fvFiE", frozenset({"--file", "--assign",
                                                        "--field-separator", "--include"}))
    names = {option for option, _ in found}
    if names & {"-f", "--file", "-E"} or any(
            option in ("-i", "--include") and value != "inplace" for option, value in found):
        return False, touches(operands, ctx)
    if not operands:
        return True, False
    program, files_read = operands[0], operands[1:]
    effects = _awk_effects(program)
    if effects is None:
        return run_for_you(LIFTED, ctx, f"{name}'s program") or (False, False)
    writes, runs = effects
    if any(value == "inplace" for option, value in found if option in ("-i", "--include")):
        writes = writes + files_read
    for word in writes:
        finding = check_write(word, ctx, verb=f"runs {name} writing")
        if finding:
            return finding
    for code in runs:
        finding = run_for_you(code, ctx, f"{name}'s program")
        if finding:
            return finding
    return True, touches(files_read, ctx)


def _awk_effects(program: str) -> tuple[list[str], list[str]] | None:
    """The files an awk program's prints redirect to and the commands it runs, when each is
    a plain string; None when one is not (a variable, an expression)."""
    writes: list[str] = []
    runs: list[str] = []
    position, printing, depth = 0, False, 0
    while position < len(program):
        char = program[position]
        if char == '"':
            end = _awk_string_end(program, position)
            position = end + 1
            continue
        if char.isalpha() or char == "_":
            end = position
            while end < len(program) and (program[end].isalnum() or program[end] == "_"):
                end += 1
            word = program[position:end]
            if word in ("print", "printf"):
                printing, depth = True, 0
            elif word == "system":
                code = _awk_literal(program, end, opening="(")
                if code is None:
                    return None
                runs.append(code)
            position = end
            continue
        if char in ";}\n":
            printing = False
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and program[position + 1:position + 2] == "|":
            position += 2
            continue
        elif char == "|":
            code = _awk_literal(program, position + 1 + (program[position + 1:position + 2]
                                                           == "&"))
            before = program[:position].rstrip()
            if code is None and before.endswith('"'):  # `"CMD" | getline`
                start = before.rfind('"', 0, len(before) - 1)
                code = before[start + 1:-1] if start != -1 else None
            if code is None:
                return None
            runs.append(code)
        elif char == ">" and printing and depth <= 0:
            position += 1 + (program[position + 1:position + 2] == ">")
            target = _awk_literal(program, position)
            if target is None:
                return None
            writes.append(target)
            continue
        position += 1
    return writes, runs


def _awk_literal(program: str, position: int, *, opening: str = "") -> str | None:
    """The plain string at `position` (after blanks, and `opening` if given), None if what
    is there is not one."""
    rest = program[position:].lstrip(" \t")
    if opening:
        if not rest.startswith(opening):
            return None
        rest = rest[1:].lstrip(" \t")
    if not rest.startswith('"'):
        return None
    end = _awk_string_end(rest, 0)
    text = rest[1:end]
    after = rest[end + 1:].lstrip(" \t")[:1]
    if "\\" in text or after not in ((")",) if opening else (";", "}", "\n", "")):
        return None  # an escape or a concatenation: not the plain string it looks like
    return text


def _awk_string_end(text: str, start: int) -> int:
    position = start + 1
    while position < len(text) and text[position] != '"':
        position += 2 if text[position] == "\\" else 1
    return position


# This family's models, by command (see the table in walk.py); its programs' effects are
# read from the program text, not from options.
MODELS = dict.fromkeys(("awk", "gawk", "mawk", "nawk"), check_awk)
OPTION_EFFECTS: dict = {}
