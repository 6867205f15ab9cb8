"""JSON for the hooks' hot path: the C scanner and encoder of `_json`, without `import json`.

Every hook reads one JSON object on stdin and may write one back. `import json` costs a
lean interpreter about 8 ms, almost all of it `re` (and `enum`, `functools`, ...), which
`json.decoder` imports for its pure-Python fallback and whitespace patterns: more than
everything else a hook of a session without a goal does. `_json` is the C accelerator
`json` itself uses, built into CPython; this module drives it directly, with the same
settings `json.loads()` / `json.dumps()` use by default, so the results are the same
objects and the same bytes (tests/test_fastjson.py compares them with `json`).

Anything that is not JSON raises `ValueError`, as `json.loads` does (its JSONDecodeError is
a ValueError); only the message is terser.
"""

import _json

_WHITESPACE = " \t\n\r"


def _parse_constant(name: str) -> float:
    return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


class _Context:
    """The attributes `_json.make_scanner` reads from a `json.JSONDecoder`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_parse_constant)
    memo: dict = {}


_SCAN = _json.make_scanner(_Context())


def loads(data: bytes | str):
    """The value of one JSON document (UTF-8 bytes or text), like `json.loads`."""
    text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
    if text.startswith("\ufeff"):
        raise ValueError("unexpected UTF-8 BOM")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _SCAN(text, start)
    except StopIteration as exc:
        raise ValueError(f"expecting a value at character {exc.value}") from None
    finally:
        _Context.memo.clear()
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data at character {end}")
    return value


def _unsupported(value):
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


# One C encoder per set of settings, made when first asked for.
_ENCODERS: dict = {}


def dumps(value, *, sort_keys: bool = False, separators: tuple[str, str] = (", ", ": "),
          ensure_ascii: bool = True) -> str:
    """`json.dumps(value)` with these settings, byte for byte (the defaults are json's:
    ASCII output, ", " and ": " separators, keys in insertion order, NaN allowed)."""
    settings = (sort_keys, separators, ensure_ascii)
    encode = _ENCODERS.get(settings)
    if encode is None:
        item, key = separators
        escape = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
        encode = _ENCODERS[settings] = _json.make_encoder(None, _unsupported, escape, None,
                                                          key, item, sort_keys, False, True)
    return "".join(encode(value, 0))
