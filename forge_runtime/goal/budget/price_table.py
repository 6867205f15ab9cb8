"""The price table forge's hooks price tokens with, compiled from `genai-prices`.

forge types no prices by hand: `genai-prices` (maintained, MIT, per-model cache and
long-context prices) is the source. Importing it costs a hook far more than its whole
budget (its data module is 1.6 MB of Python), so this module, run when forge-env is built
and on demand, compiles what the hosts' models need into one small JSON file that
goal/budget/pricing.py reads with the standard library alone:

    {"source": "genai-prices", "version": "0.2.3", "compiled": "2026-12-04",
     "models": [{"provider", "id", "family", "match", "prices", "tiers"}],
     "families": {family: prices}, "hosts": {provider: prices}}

Prices are integer picodollars per token (a dollar per million tokens is 10**6 of them),
so every sum is exact and a verify recomputes the same dollars. Each model keeps the price
in force on the day of compiling (genai-prices' dated variants) and its long-context
tiers. `families` and `hosts` hold, field by field, the dearest price any model of that
family (or provider) has at any size: what a model the table does not know is charged,
so an unknown model is never cheaper than a known one.

A goal never prices with this file directly: its activation seals a copy beside the ledger
under the table's digest (pricing.seal), and every charge of that tranche prices with the
sealed copy.
"""

from __future__ import annotations

import datetime
import os
import sys
from decimal import Decimal
from pathlib import Path

from forge_runtime.goal.budget.pricing import family_of

PROVIDERS = ("anthropic", "openai")  # Claude Code's models and Codex's
# genai-prices' price keys, by the usage field (goal/budget/usage.py) each prices
PRICE_KEYS = {"input": "input_mtok", "output": "output_mtok", "cache_read": "cache_read_mtok",
              "cache_creation": "cache_write_mtok", "cache_creation_1h": "cache_write_1h_mtok"}
PICO_PER_MTOK = 10**6  # $1 per million tokens = 10**6 picodollars per token
FILE_NAME = "forge-prices.json"


def compiled_path() -> Path:
    """Where the running interpreter's compiled table lives: beside the environment it was
    built in (forge-env under the plugin's data, out of the agent's reach), else the user's
    cache for an interpreter whose prefix is not forge's to write."""
    prefix = Path(sys.prefix) / "share" / "forge" / FILE_NAME
    if os.access(sys.prefix, os.W_OK) or prefix.exists():
        return prefix
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "forge" / FILE_NAME


def _picos(value) -> int:
    """Dollars per million tokens as integer picodollars per token."""
    return int(Decimal(str(value)) * PICO_PER_MTOK)


def _clause(clause) -> dict:
    """genai-prices' match clause as plain JSON (pricing.matches reads it)."""
    from genai_prices import types

    if isinstance(clause, types.ClauseOr):
        return {"or": [_clause(inner) for inner in clause.or_]}
    if isinstance(clause, types.ClauseAnd):
        return {"and": [_clause(inner) for inner in clause.and_]}
    for kind in ("equals", "starts_with", "ends_with", "contains", "regex"):
        value = getattr(clause, kind, None)
        if isinstance(value, str):
            return {kind: value, **(_regex_bounds(value) if kind == "regex" else {})}
    raise ValueError(f"a match clause forge cannot compile: {clause!r}")


def _regex_bounds(pattern: str) -> dict:
    """What every name a regex clause matches looks like, read from the stdlib's own parse
    of it, so pricing.matches rules most names out without importing `re` (about 4 ms of
    a hook, on every priced charge): the literal text a `^`-anchored pattern starts with
    (`prefix`), and, anchored at both ends, the lengths it can match (`lengths`; `$` also
    matches before a final newline, which pricing.matches allows for). Nothing for a
    pattern with flags or a shape this does not read: then only `re` decides."""
    import re
    from re import _constants, _parser

    try:
        parsed = _parser.parse(pattern)
    except re.error:
        return {}
    items = list(parsed)
    begins = (_constants.AT, _constants.AT_BEGINNING)
    if parsed.state.flags & ~re.UNICODE or not items or items[0] != begins:
        return {}
    prefix = []
    for op, value in items[1:]:
        if op is not _constants.LITERAL:
            break
        prefix.append(chr(value))
    bounds = {"prefix": "".join(prefix)}
    if items[-1] == (_constants.AT, _constants.AT_END):
        bounds["lengths"] = list(parsed.getwidth())
    return bounds


def _in_force(model, today: datetime.date):
    """The model's price on `today`: the latest dated variant that has started."""
    from genai_prices import types

    prices = model.prices
    if isinstance(prices, types.ModelPrice):
        return prices
    chosen = None
    for conditional in prices:
        constraint = conditional.constraint
        start = getattr(constraint, "start_date", None)
        if constraint is None or (start is not None and start <= today):
            chosen = conditional.prices
    return chosen


def _fields(price) -> tuple[dict, list]:
    """(base prices, tiers) of one genai-prices ModelPrice, in picodollars per token."""
    from genai_prices import types

    base, tiers = {}, {}
    for field, key in PRICE_KEYS.items():
        value = getattr(price, key, None)
        if value is None:
            continue
        if isinstance(value, types.TieredPrices):
            base[field] = _picos(value.base)
            for tier in value.tiers:
                tiers.setdefault(tier.start, {})[field] = _picos(tier.price)
        else:
            base[field] = _picos(value)
    return base, [{"above": start, "prices": {**base, **fields}}
                  for start, fields in sorted(tiers.items())]


def _effective(prices: dict) -> dict:
    """Every field's price as pricing.py charges it: a field a model leaves out costs what
    its fallback does (cache reads and writes fresh input, one-hour writes 5-minute ones)."""
    write = prices.get("cache_creation", prices["input"])
    return {"input": prices["input"], "output": prices["output"],
            "cache_read": prices.get("cache_read", prices["input"]),
            "cache_creation": write, "cache_creation_1h": prices.get("cache_creation_1h", write)}


def _dearest(entries: list[dict]) -> dict:
    """Field by field, the highest price any of `entries` charges at any size."""
    dearest: dict[str, int] = {}
    for entry in entries:
        for prices in [entry["prices"], *(tier["prices"] for tier in entry["tiers"])]:
            for field, value in _effective(prices).items():
                dearest[field] = max(dearest.get(field, 0), value)
    return dearest


def compile_table(today: datetime.date | None = None) -> dict:
    """The table, from the installed genai-prices' own snapshot (no network)."""
    import genai_prices
    from genai_prices import data_snapshot

    today = today or datetime.date.today()
    models = []
    for provider in data_snapshot.get_snapshot().providers:
        if provider.id not in PROVIDERS:
            continue
        for model in provider.models:
            price = _in_force(model, today)
            if price is None:
                continue
            base, tiers = _fields(price)
            if "input" not in base or "output" not in base:
                continue  # not a text model forge's hosts run
            models.append({"provider": provider.id, "id": model.id,
                           "family": family_of(model.id), "match": _clause(model.match),
                           "prices": base, "tiers": tiers})
    families: dict[str, list[dict]] = {}
    hosts: dict[str, list[dict]] = {}
    for entry in models:
        families.setdefault(f"{entry['provider']}/{entry['family']}", []).append(entry)
        hosts.setdefault(entry["provider"], []).append(entry)
    return {"source": "genai-prices", "version": genai_prices.__version__,
            "compiled": today.isoformat(), "models": models,
            "families": {name: _dearest(found) for name, found in sorted(families.items())},
            "hosts": {name: _dearest(found) for name, found in sorted(hosts.items())}}


def write(path: Path | None = None) -> Path:
    """Compile the table and write it (atomically) where this interpreter's hooks read it."""
    from forge_runtime import safeio
    from forge_runtime.goal.budget.pricing import encode

    path = path or compiled_path()
    safeio.replace(path, encode(compile_table()), create_dirs=True)
    return path


def main(argv: list[str] | None = None) -> int:
    """`python -m forge_runtime.goal.budget.price_table [PATH]`: compile the table (forge-env's
    build runs this once the environment has its packages)."""
    args = sys.argv[1:] if argv is None else argv
    written = write(Path(args[0]) if args else None)
    print(f"forge: price table compiled from genai-prices into {written}\nDone.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
