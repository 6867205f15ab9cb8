"""Dollars of a goal's tokens, priced with the table its activation sealed.

The table (goal/budget/price_table.py compiles it from genai-prices) is sealed at each
activation: its bytes are copied beside the ledger as `prices/<sha256>.json` and the
activation record names the digest (`goal["prices"]`). Every charge of that tranche prices
its responses with that copy, read only after its bytes hash to the digest the chain
carries, so a verify later recomputes the same dollars, and a table changed on disk fails
closed like the ledger (`Unsealed`).

Prices are integer picodollars per token; a response is priced on its own, since a
long-context tier applies when one request's input (fresh, cache reads and cache writes
together) passes the tier's threshold. A model the table does not know is priced as the
dearest model of its family (`claude-opus-9` as the dearest Opus) or, failing that, of its
host; the charge names it (`estimated`), and status says so.

Standard library only, and nothing until a goal with a sealed table charges: this runs in
the Stop and, for a goal with a dollar ceiling, before every tool call.
"""

from __future__ import annotations

import os

from forge_runtime import fastjson
from forge_runtime.digest import sha256_hex
from forge_runtime.goal.store.layout import sealed_prices_file

HOST_PROVIDER = {"claude": "anthropic", "codex": "openai"}
PICO = 10**12  # picodollars in a dollar


class Unsealed(Exception):
    """The sealed table is missing or its bytes are not the ones the activation sealed."""


def family_of(model_id: str) -> str:
    """A model's family: its name without the parts that are only digits, dots or dates."""
    kept = [part for part in model_id.lower().replace("_", "-").split("-")
            if part and part != "latest"
            and not part.replace(".", "").replace("@", "").isdigit()]
    return "-".join(kept) or model_id


def matches(clause: dict, name: str) -> bool:
    """genai-prices' match clause (as price_table compiled it) against a model name."""
    if "or" in clause:
        return any(matches(inner, name) for inner in clause["or"])
    if "and" in clause:
        return all(matches(inner, name) for inner in clause["and"])
    if "equals" in clause:
        return name == clause["equals"]
    if "starts_with" in clause:
        return name.startswith(clause["starts_with"])
    if "ends_with" in clause:
        return name.endswith(clause["ends_with"])
    if "contains" in clause:
        return clause["contains"] in name
    if "regex" in clause:
        if not name.startswith(clause.get("prefix", "")):
            return False  # price_table's bounds of what it can match: most names, no `re`
        lengths = clause.get("lengths")
        if lengths and not lengths[0] <= len(name) <= lengths[1] + 1:
            return False
        import re

        return re.search(clause["regex"], name) is not None
    return False


class PriceTable:
    """One sealed table: which prices a model name gets, and what a response costs."""

    def __init__(self, table: dict, digest: str) -> None:
        self.table, self.digest = table, digest
        self._resolved: dict[tuple[str, str | None], tuple[dict, list, str | None]] = {}

    @property
    def version(self) -> str:
        return f"{self.table.get('source')} {self.table.get('version')}"

    def resolve(self, model: str, host: str | None = None) -> tuple[dict, list, str | None]:
        """(base prices, tiers, estimate) for `model`: its own entry, else the dearest of
        its family, else of the host's provider (`estimate` says which, None when known)."""
        found = self._resolved.get((model, host))  # one name, other hosts: other guesses
        if found is not None:
            return found
        name = model.lower()
        provider = HOST_PROVIDER.get(host or "")
        entries = [entry for entry in self.table["models"] if matches(entry["match"], name)]
        entries.sort(key=lambda entry: entry["provider"] != provider)
        if entries:
            found = (entries[0]["prices"], entries[0]["tiers"], None)
        else:
            families = self.table["families"]
            family = family_of(name)
            keys = [f"{p}/{family}" for p in ([provider] if provider else [])
                    + sorted(self.table["hosts"]) if f"{p}/{family}" in families]
            if keys:
                found = (families[keys[0]], [], f"as the dearest {keys[0]}")
            else:
                hosts = self.table["hosts"]
                guess = provider if provider in hosts else _provider_of(name, hosts)
                found = (hosts[guess], [], f"as the dearest {guess} model")
        self._resolved[model, host] = found
        return found

    def picos(self, model: str, spent: dict, host: str | None = None) -> int:
        """One response's cost in picodollars (usage.py's fields)."""
        prices, tiers, _ = self.resolve(model, host)
        whole_input = (spent.get("input", 0) + spent.get("cache_read", 0)
                       + spent.get("cache_creation", 0))
        for tier in reversed(tiers):
            if whole_input > tier["above"]:
                prices = tier["prices"]
                break
        hour = min(spent.get("cache_creation_1h", 0), spent.get("cache_creation", 0))
        write_5m = prices.get("cache_creation", prices["input"])
        write_1h = prices.get("cache_creation_1h", write_5m)
        return (spent.get("input", 0) * prices["input"]
                + spent.get("output", 0) * prices["output"]
                + spent.get("cache_read", 0) * prices.get("cache_read", prices["input"])
                + (spent.get("cache_creation", 0) - hour) * write_5m
                + hour * write_1h)

    def estimate(self, model: str, host: str | None = None) -> str | None:
        """How an unknown model is priced (`as the dearest anthropic/claude-opus`), else None."""
        return self.resolve(model, host)[2]


def _provider_of(name: str, hosts: dict) -> str:
    """The provider an unknown model most likely runs at, with no host to say: the dearest
    of all when nothing in its name tells."""
    if name.startswith("claude") and "anthropic" in hosts:
        return "anthropic"
    if name.startswith(("gpt", "o1", "o3", "o4", "codex")) and "openai" in hosts:
        return "openai"
    return max(hosts, key=lambda provider: hosts[provider].get("output", 0))


def encode(table: dict) -> bytes:
    """A table's bytes: canonical, so one table always has one digest."""
    return fastjson.dumps(table, sort_keys=True, separators=(",", ":")).encode()


def digest_of(data: bytes) -> str:
    return sha256_hex(data)


def seal(ledger_root: str | os.PathLike, data: bytes) -> dict:
    """Keep a table's bytes beside the ledger under their digest; what the activation
    record names (`goal["prices"]`)."""
    table = fastjson.loads(data)
    data = encode(table)  # canonical bytes, whatever file they came from
    digest = digest_of(data)
    path = sealed_prices_file(ledger_root, digest)
    if not os.path.exists(path):
        from forge_runtime import safeio

        safeio.replace(path, data, create_dirs=True)  # whole or not at all, never followed
    return {"digest": digest, "version": f"{table.get('source')} {table.get('version')}"}


_loaded: dict[str, PriceTable] = {}


def sealed(ledger_root: str | os.PathLike, prices: dict) -> PriceTable:
    """The table a goal's activation sealed (`goal["prices"]`), its bytes checked."""
    digest = prices.get("digest") if isinstance(prices, dict) else None
    if not isinstance(digest, str) or len(digest) != 64:
        raise Unsealed("the goal names no sealed price table")
    if digest in _loaded:
        return _loaded[digest]
    path = sealed_prices_file(ledger_root, digest)
    from forge_runtime import safeio

    try:  # beside the ledger: a FIFO or a link there is refused, never waited on
        data = safeio.read_bytes(path)
    except OSError:
        raise Unsealed(f"the sealed price table {digest[:12]} is missing") from None
    if digest_of(data) != digest:
        raise Unsealed(f"the sealed price table {digest[:12]} was changed")
    try:
        table = PriceTable(fastjson.loads(data), digest)
        table.table["models"], table.table["hosts"]  # noqa: B018 - the shape it needs
    except (ValueError, KeyError, TypeError):
        raise Unsealed(f"the sealed price table {digest[:12]} is not a price table") from None
    _loaded[digest] = table
    return table


def pricer_for(ledger_root: str | os.PathLike, goal: dict | None):
    """What prices a goal's responses (`usage.price_with`): its sealed table's, or None for
    a goal whose activation sealed none."""
    prices = (goal or {}).get("prices")
    return None if prices is None else sealed(ledger_root, prices).picos


def dollars(picos: int) -> str:
    """Picodollars for a person: $0.004, $1.20, $312."""
    value = picos / PICO
    if value and value < 0.01:
        return f"${value:.3f}"
    return f"${value:,.2f}" if value < 1000 else f"${value:,.0f}"
