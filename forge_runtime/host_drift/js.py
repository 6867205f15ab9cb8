"""Just enough of JavaScript to read a minified bundle: brackets, strings, object keys.

Names in a minified build change with every release (`u({...})` today, `Zt({...})`
tomorrow), so the anchors are shapes: an object literal holding certain keys, an array
literal of strings holding certain names. This module finds the bracket that closes
another, skipping string, template and regular-expression literals (a `}` inside one
closes nothing), and reads an object literal's own keys, or an array literal's strings.
Bytes in, text out; nothing here runs the code it reads.
"""

from __future__ import annotations

import re

OPENERS = {0x7B: 0x7D, 0x28: 0x29, 0x5B: 0x5D}  # { ( [
CLOSERS = frozenset(OPENERS.values())
QUOTES = frozenset(b"\"'`")
IDENTIFIER = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")
STRING = re.compile(rb'"((?:[^"\\]|\\.)*)"')
# After these a `/` starts a regular expression, not a division.
_REGEX_AFTER = frozenset(b"(,=:[!&|?{};+-*%<>~^")
_REGEX_WORDS = (b"return", b"typeof", b"case", b"in", b"of", b"delete", b"void", b"throw",
                b"new", b"else", b"do", b"yield", b"await")
# How far back an enclosing object is looked for: a schema is tens of kilobytes at most,
# a list of names a few.
LOOK_BACK = 400_000
ARRAY_REACH = 20_000


class Unreadable(ValueError):
    """The text at an anchor is not the JavaScript this reader expects."""


def _string_end(data: bytes, at: int) -> int:
    """The index after the string or template literal opening at `at`."""
    quote, index, size = data[at], at + 1, len(data)
    while index < size:
        byte = data[index]
        if byte == 0x5C:  # backslash
            index += 2
            continue
        if byte == quote:
            return index + 1
        if quote == 0x60 and byte == 0x24 and data[index + 1:index + 2] == b"{":
            index = closing(data, index + 1) + 1  # ${ ... } inside a template
            continue
        index += 1
    raise Unreadable(f"unterminated string literal at {at}")


def _regex_starts(data: bytes, at: int) -> bool:
    """Whether the `/` at `at` opens a regular-expression literal."""
    index = at - 1
    while index >= 0 and data[index] in b" \t\r\n":
        index -= 1
    if index < 0 or data[index] in _REGEX_AFTER:
        return True
    return any(data[max(index - len(word) + 1, 0):index + 1] == word and
               not (index - len(word) >= 0 and IDENTIFIER.match(data, index - len(word)))
               for word in _REGEX_WORDS)


def _regex_end(data: bytes, at: int) -> int:
    """The index after the regular-expression literal opening at `at` (and its flags)."""
    index, size, in_class = at + 1, len(data), False
    while index < size:
        byte = data[index]
        if byte == 0x5C:
            index += 2
            continue
        if byte == 0x0A:
            raise Unreadable(f"unterminated regular expression at {at}")
        if in_class:
            in_class = byte != 0x5D
        elif byte == 0x5B:
            in_class = True
        elif byte == 0x2F:
            index += 1
            while index < size and (data[index:index + 1].isalpha()):
                index += 1
            return index
        index += 1
    raise Unreadable(f"unterminated regular expression at {at}")


def skip(data: bytes, at: int) -> int:
    """The index after the literal (string, template, regex) or comment at `at`, or `at`
    itself when none starts there."""
    byte = data[at]
    if byte in QUOTES:
        return _string_end(data, at)
    if byte == 0x2F:
        following = data[at + 1:at + 2]
        if following == b"/":
            end = data.find(b"\n", at)
            return len(data) if end == -1 else end
        if following == b"*":
            end = data.find(b"*/", at + 2)
            if end == -1:
                raise Unreadable(f"unterminated comment at {at}")
            return end + 2
        if _regex_starts(data, at):
            return _regex_end(data, at)
    return at


def closing(data: bytes, at: int) -> int:
    """The index of the bracket that closes the one at `at`."""
    if data[at] not in OPENERS:
        raise Unreadable(f"no bracket at {at}")
    stack, index, size = [OPENERS[data[at]]], at + 1, len(data)
    while index < size:
        byte = data[index]
        if byte in QUOTES or byte == 0x2F:
            after = skip(data, index)
            if after != index:
                index = after
                continue
        elif byte in OPENERS:
            stack.append(OPENERS[byte])
        elif byte in CLOSERS:
            if byte != stack.pop():
                raise Unreadable(f"brackets do not match at {index}")
            if not stack:
                return index
        index += 1
    raise Unreadable(f"bracket at {at} is never closed")


def enclosing(data: bytes, at: int, opener: bytes = b"{", reach: int = LOOK_BACK) -> int:
    """The index of the innermost `opener` bracket whose literal holds position `at`,
    looked for up to `reach` bytes back."""
    floor = max(at - reach, 0)
    candidate = data.rfind(opener, floor, at)
    while candidate != -1:
        try:
            if closing(data, candidate) > at:
                return candidate
        except Unreadable:
            pass  # a bracket inside a string literal: not a real one
        candidate = data.rfind(opener, floor, candidate)
    raise Unreadable(f"no {opener.decode()} encloses {at}")


def members(data: bytes, at: int) -> list[tuple[str | None, int, int]]:
    """(key, start, end) of each member's value in the object literal opening at `at`: a
    shorthand `{a}` is keyed "a", a spread `...x` is keyed None."""
    end = closing(data, at)
    found: list[tuple[str | None, int, int]] = []
    index, key, start, expecting_key = at + 1, None, at + 1, True
    while index < end:
        byte = data[index]
        if expecting_key and byte not in b" \t\r\n":
            expecting_key = False
            start = index
            if data.startswith(b"...", index):
                key, start = None, index + 3
                index += 3
                continue
            if byte in b"\"'":
                after = _string_end(data, index)
                if data[after:after + 1] == b":":
                    key = data[index + 1:after - 1].decode("utf-8", "replace")
                    index = start = after + 1
                    continue
            word = IDENTIFIER.match(data, index)
            if word is not None:
                key = word.group().decode()
                if data[word.end():word.end() + 1] == b":":
                    index = start = word.end() + 1
                    continue
        if byte in QUOTES or byte == 0x2F:
            after = skip(data, index)
            if after != index:
                index = after
                continue
        if byte in OPENERS:
            index = closing(data, index) + 1
            continue
        if byte == 0x2C:  # ,
            found.append((key, start, index))
            expecting_key = True
        index += 1
    if not expecting_key:
        found.append((key, start, end))
    return found


def keys(data: bytes, at: int) -> list[str]:
    """The keys of the object literal opening at `at`, with those of any object literal a
    spread member holds (`...cond && {key: ...}`): every key the object can have."""
    found = []
    for key, start, end in members(data, at):
        if key is not None:
            found.append(key)
            continue
        brace = _top_level_object(data, start, end)
        if brace is not None:
            found += keys(data, brace)
    return found


def _top_level_object(data: bytes, start: int, end: int) -> int | None:
    """Where an object literal opens in `data[start:end]` outside any call or array
    (`cond && {...}`, not `f(a, {...})`), or None."""
    index = start
    while index < end:
        byte = data[index]
        if byte in QUOTES or byte == 0x2F:
            after = skip(data, index)
            if after != index:
                index = after
                continue
        if byte == 0x7B:
            return index
        if byte in OPENERS:
            index = closing(data, index) + 1
            continue
        index += 1
    return None


def value(data: bytes, at: int, key: str) -> tuple[int, int] | None:
    """(start, end) of the value of `key` in the object literal opening at `at`."""
    return next(((start, end) for name, start, end in members(data, at) if name == key),
                None)


def strings(data: bytes, at: int) -> list[str]:
    """The string literals of the array literal opening at `at` (other elements skipped)."""
    end = closing(data, at)
    return [match.group(1).decode("utf-8", "replace")
            for match in STRING.finditer(data, at + 1, end)]


PLAIN_ARRAY = re.compile(rb'\[(?:(?:"(?:[^"\\\n]|\\.)*"|\.\.\.(?:\[\]|[A-Za-z_$][\w$]*))'
                         rb'(?:,|(?=\])))*\]')
SPREAD_BEFORE = re.compile(rb"\.\.\.(?:\[\]|[A-Za-z_$][\w$]*)\Z")


def _plain_array_start(data: bytes, at: int) -> int | None:
    """Where the array literal of plain strings holding the string literal opening at `at`
    starts, walking back over `"...",` and `...spread,` elements; None when `at` is not in
    one."""
    floor = max(at - ARRAY_REACH, 0)
    while at > floor:
        before = data[at - 1:at]
        if before == b"[":
            return at - 1
        if before != b",":
            return None
        spread = SPREAD_BEFORE.search(data, max(at - 64, 0), at - 1)
        if spread is not None:
            at = spread.start()
            continue
        if data[at - 2:at - 1] != b'"':
            return None
        opening = data.rfind(b'"', floor, at - 2)
        while opening > floor and data[opening - 1:opening] == b"\\":
            opening = data.rfind(b'"', floor, opening - 1)
        if opening <= floor:
            return None
        at = opening
    return None


def string_arrays(data: bytes, *names: str) -> list[list[str]]:
    """Every array literal of plain strings (spreads such as `...[]` or `...names` allowed,
    and left out) that holds all of `names`, as its strings."""
    needle = f'"{max(names, key=len)}"'.encode()  # the longest: the rarest to search for
    found, seen = [], set()
    position = data.find(needle)
    while position != -1:
        start = _plain_array_start(data, position)
        if start is not None and start not in seen:
            seen.add(start)
            whole = PLAIN_ARRAY.match(data, start)
            listed = strings(data, start) if whole else []
            if all(name in listed for name in names):
                found.append(listed)
        position = data.find(needle, position + 1)
    return found
