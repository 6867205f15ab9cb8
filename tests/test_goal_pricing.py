"""The dollars of a goal's tokens: the compiled table prices every response exactly as
genai-prices itself does, unknown models never come out cheaper, and the sealed copy a
goal prices with cannot be changed without the goal failing closed."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_runtime.goal.budget import price_table, pricing
from forge_runtime.goal.store import layout

TODAY = datetime.date.today()


@pytest.fixture(scope="module")
def table() -> pricing.PriceTable:
    compiled = price_table.compile_table(TODAY)
    data = pricing.encode(compiled)
    return pricing.PriceTable(json.loads(data), pricing.digest_of(data))


def independent(model: str, provider: str, spent: dict) -> Decimal:
    """genai-prices' own price of one response (its input counts the cached tokens)."""
    whole_input = spent["input"] + spent["cache_read"] + spent["cache_creation"]
    usage = Usage(input_tokens=whole_input, output_tokens=spent["output"],
                  cache_read_tokens=spent["cache_read"],
                  cache_write_tokens=spent["cache_creation"],
                  cache_write_1h_tokens=spent.get("cache_creation_1h", 0))
    return calc_price(usage, model, provider_id=provider,
                      genai_request_timestamp=datetime.datetime.now()).total_price


responses = st.fixed_dictionaries({
    "input": st.integers(0, 400_000), "output": st.integers(0, 64_000),
    "cache_read": st.integers(0, 400_000), "cache_creation": st.integers(0, 100_000)})


@settings(max_examples=60, deadline=None)
@given(spent=responses, pick=st.integers(0, 10_000), hour_share=st.integers(0, 100))
def test_a_response_costs_what_genai_prices_says(table, spent, pick, hour_share):
    entry = table.table["models"][pick % len(table.table["models"])]
    if entry["provider"] == "anthropic":
        spent = {**spent, "cache_creation_1h": spent["cache_creation"] * hour_share // 100}
    name = entry["id"]
    if not pricing.matches(entry["match"], name):
        return  # a name genai-prices only matches with a suffix (ft:gpt-4o:org:...)
    assert table.estimate(name) is None
    mine = Decimal(table.picos(name, spent)) / pricing.PICO
    assert mine == independent(name, entry["provider"], spent)


def test_the_long_context_tier_is_one_requests_input(table):
    small = {"input": 150_000, "output": 1_000, "cache_read": 0, "cache_creation": 0}
    large = {**small, "cache_read": 60_000}  # 210k in all: past the 200k tier
    per_token_small = table.picos("claude-sonnet-4-5", small) - 1_000 * 15 * 10**6
    assert per_token_small == 150_000 * 3 * 10**6
    assert table.picos("claude-sonnet-4-5", large) == \
        150_000 * 6 * 10**6 + 60_000 * 6 * 10**5 + 1_000 * 22_500_000


def test_one_hour_cache_writes_cost_their_own_price(table):
    five = {"input": 0, "output": 0, "cache_read": 0, "cache_creation": 1_000_000}
    hour = {**five, "cache_creation_1h": 1_000_000}
    assert table.picos("claude-opus-4-5", five) == 6_250_000 * 10**6
    assert table.picos("claude-opus-4-5", hour) == 10 * 10**12


@settings(max_examples=80, deadline=None)
@given(spent=responses, version=st.sampled_from(["9", "9-9", "10-20291231", "5-9"]),
       family=st.sampled_from(["claude-opus", "claude-sonnet", "claude-haiku",
                               "gpt-codex", "gpt-mini", "claude-unheard", "gpt-unheard",
                               "mystery"]))
def test_an_unknown_model_is_never_cheaper_than_a_known_one_of_its_family(
        table, spent, version, family):
    name = f"{family}-{version}"
    if table.estimate(name) is None:
        return  # the name happens to match a real model
    cost = table.picos(name, spent)
    peers = [entry for entry in table.table["models"]
             if pricing.family_of(entry["id"]) == family] or table.table["models"]
    if family.startswith("claude"):
        peers = [entry for entry in peers if entry["provider"] == "anthropic"]
    elif family.startswith("gpt"):
        peers = [entry for entry in peers if entry["provider"] == "openai"]
    for entry in peers:
        assert cost >= table.picos(entry["id"], spent), entry["id"]
    assert cost > 0 or not any(spent.values())


def test_an_unknown_model_says_how_it_was_priced(table):
    assert table.estimate("claude-opus-9") == "as the dearest anthropic/claude-opus"
    assert table.estimate("gpt-9-codex", host="codex") == "as the dearest openai/gpt-codex"
    assert table.estimate("unheard-of") is not None
    assert table.estimate("claude-sonnet-4-5-20250929") is None


def test_the_sealed_copy_is_what_a_goal_prices_with(tmp_path, table):
    prices = pricing.seal(tmp_path, pricing.encode(table.table))
    assert prices["digest"] == table.digest
    pricing._loaded.clear()
    sealed = pricing.sealed(tmp_path, prices)
    spent = {"input": 10, "output": 10, "cache_read": 0, "cache_creation": 0}
    assert sealed.picos("claude-opus-4-5", spent) == table.picos("claude-opus-4-5", spent)


@pytest.mark.parametrize("damage", ["cheaper", "missing", "garbage"])
def test_a_changed_or_missing_sealed_table_fails_closed(tmp_path, table, damage):
    prices = pricing.seal(tmp_path, pricing.encode(table.table))
    pricing._loaded.clear()
    path = tmp_path / layout.PRICES_DIR / f"{prices['digest']}.json"
    if damage == "cheaper":
        changed = json.loads(path.read_bytes())
        for entry in changed["models"]:
            entry["prices"] = dict.fromkeys(entry["prices"], 0)
        path.write_bytes(pricing.encode(changed))
    elif damage == "missing":
        path.unlink()
    else:
        path.write_bytes(b"\x00")
    with pytest.raises(pricing.Unsealed):
        pricing.sealed(tmp_path, prices)


def test_dollars_read_like_money():
    assert pricing.dollars(0) == "$0.00"
    assert pricing.dollars(4 * 10**9) == "$0.004"
    assert pricing.dollars(1_200_000_000_000) == "$1.20"
    assert pricing.dollars(5 * 10**15) == "$5,000"


def test_the_table_says_what_it_was_compiled_from(table):
    import genai_prices

    assert table.table["source"] == "genai-prices"
    assert table.table["version"] == genai_prices.__version__
    assert table.version == f"genai-prices {genai_prices.__version__}"
    assert {entry["provider"] for entry in table.table["models"]} == {"anthropic", "openai"}


def test_building_forge_env_compiles_the_table_into_it(tmp_path):
    """bootstrap.compile_prices runs in the environment it builds: an interpreter with
    genai-prices leaves the table where that interpreter's hooks read it."""
    import subprocess
    import sys

    from forge_runtime import bootstrap

    target = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.append("
                             f"{str(price_table.Path(__file__).resolve().parents[1])!r}); "
                             "from forge_runtime.goal.budget import price_table; "
                             "print(price_table.compiled_path())"],
                            capture_output=True, text=True, check=True).stdout.strip()
    before = price_table.Path(target).stat().st_mtime_ns if price_table.Path(target).exists() \
        else 0
    assert bootstrap.compile_prices(price_table.Path(sys.executable), tmp_path) is True
    written = price_table.Path(target)
    assert written.stat().st_mtime_ns > before
    assert json.loads(written.read_bytes())["source"] == "genai-prices"
    missing = tmp_path / "no-python"
    assert bootstrap.compile_prices(missing, tmp_path) is False


# -- an unknown model is never cheaper: every family, every kind of token, every tier -------

HOST_OF = {"anthropic": "claude", "openai": "codex"}
KINDS = ("input", "output", "cache_read", "cache_creation", "cache_creation_1h")


def _usages(table: pricing.PriceTable) -> list[dict]:
    """One usage per kind of token alone, and each again on top of an input that passes
    each long-context threshold the table has (so every tier of every model is priced)."""
    thresholds = sorted({tier["above"] for entry in table.table["models"]
                         for tier in entry["tiers"]})
    found = []
    for kind in KINDS:
        alone = dict.fromkeys(pricing_fields := ("input", "output", "cache_read",
                                                 "cache_creation"), 0)
        alone["cache_creation" if kind == "cache_creation_1h" else kind] = 1_000
        if kind == "cache_creation_1h":
            alone["cache_creation_1h"] = 1_000
        found.append(alone)
        found += [{**alone, "input": alone["input"] + above} for above in thresholds]
    assert set(pricing_fields) <= set(found[0])
    return found


def _unknown_of(table: pricing.PriceTable, key: str) -> str | None:
    """A model name of family `key` (provider/family) that the table does not know."""
    provider, family = key.split("/", 1)
    for name in (f"{family}-99", f"{family}-99-20991231", f"{family}-0.99"):
        if table.estimate(name, HOST_OF[provider]) == f"as the dearest {key}":
            return name
    return None


def _known(table: pricing.PriceTable, provider: str | None = None, family: str | None = None):
    """The table's models (priced under their own name) of a provider and family."""
    return [entry for entry in table.table["models"]
            if (provider is None or entry["provider"] == provider)
            and (family is None or pricing.family_of(entry["id"]) == family)
            and pricing.matches(entry["match"], entry["id"])
            and table.estimate(entry["id"], HOST_OF[entry["provider"]]) is None]


def test_every_family_prices_an_unknown_member_at_least_as_dear_as_each_known_one(table):
    usages, tested = _usages(table), 0
    for key in table.table["families"]:
        provider, family = key.split("/", 1)
        name = _unknown_of(table, key)
        if name is None:
            continue  # every name of the family's shape is a model the table knows
        host = HOST_OF[provider]
        for entry in _known(table, provider, family):
            for spent in usages:
                assert table.picos(name, spent, host) >= \
                    table.picos(entry["id"], spent, host), (name, entry["id"], spent)
        tested += 1
    assert tested >= len(table.table["families"]) * 3 // 4, tested


def test_an_unknown_model_of_no_known_family_is_priced_as_the_dearest_of_its_host(table):
    usages = _usages(table)
    for provider, host in HOST_OF.items():
        name = "zyxq-unheard-9"
        assert table.estimate(name, host) == f"as the dearest {provider} model"
        for entry in _known(table, provider):
            for spent in usages:
                assert table.picos(name, spent, host) >= table.picos(entry["id"], spent, host)


def test_an_unknown_model_with_no_host_to_tell_is_dearer_than_every_known_one(table):
    """No host, no provider's prefix: never cheaper than any model of any provider."""
    usages, name = _usages(table), "zyxq-unheard-9"
    assert table.estimate(name) is not None
    for entry in _known(table):
        for spent in usages:
            assert table.picos(name, spent) >= table.picos(entry["id"], spent), \
                (entry["id"], spent)


def test_the_dearest_rows_hold_every_price_of_their_models_field_by_field(table):
    """The compiled table itself, read without pricing.py: each family's and each host's
    row is, for every kind of token, at least the price any of its models charges at any
    tier (a kind a model leaves out costs what it falls back to), and never zero."""
    def charged(prices: dict) -> dict:
        write = prices.get("cache_creation", prices["input"])
        return {"input": prices["input"], "output": prices["output"],
                "cache_read": prices.get("cache_read", prices["input"]),
                "cache_creation": write,
                "cache_creation_1h": prices.get("cache_creation_1h", write)}

    rows = {**{f"host {name}": row for name, row in table.table["hosts"].items()},
            **table.table["families"]}
    for name, row in rows.items():
        assert set(row) == set(KINDS) and min(row.values()) > 0, (name, row)
    for entry in table.table["models"]:
        family = table.table["families"][f"{entry['provider']}/{entry['family']}"]
        host = table.table["hosts"][entry["provider"]]
        for prices in [entry["prices"], *(tier["prices"] for tier in entry["tiers"])]:
            for kind, price in charged(prices).items():
                assert family[kind] >= price and host[kind] >= price, (entry["id"], kind)


def _regex_clauses(clause: dict) -> list[dict]:
    if "or" in clause or "and" in clause:
        return [found for inner in clause.get("or", clause.get("and"))
                for found in _regex_clauses(inner)]
    return [clause] if "regex" in clause else []


def test_a_regex_clause_rules_names_out_without_re_exactly_as_re_would(table):
    """The compiled bounds of each regex clause (its literal prefix, the lengths it can
    match) only ever rule out names the regex itself would not match."""
    import re

    clauses = [found for entry in table.table["models"]
               for found in _regex_clauses(entry["match"])]
    assert clauses and all("prefix" in clause for clause in clauses)
    names = [entry["id"] for entry in table.table["models"]]
    names += [f"{name}{tail}" for name in names[:]
              for tail in ("-20250929", "@20250929", "-2025-09-29", "-2025-09-29\n", "x", "-")]
    for clause in clauses:
        for name in names + [clause["prefix"], clause["prefix"] + "1" * 8]:
            assert pricing.matches(clause, name) == \
                (re.search(clause["regex"], name) is not None), (clause, name)
    bounds = price_table._regex_bounds(r"^claude-opus-5[-@]\d{8}$")
    assert bounds == {"prefix": "claude-opus-5", "lengths": [22, 22]}
    assert price_table._regex_bounds("(?i)^gpt") == {}
    assert price_table._regex_bounds("gpt-5") == {}


def test_pricing_a_known_or_unknown_model_imports_no_re(tmp_path):
    """A priced charge resolves each model against every clause of the table: the regex
    clauses' bounds keep `re` (about 4 ms of a lean hook) out of it."""
    import subprocess
    import sys

    table_file = tmp_path / "table.json"
    table_file.write_bytes(pricing.encode(price_table.compile_table(TODAY)))
    code = (f"import sys; sys.path.insert(0, {str(price_table.Path(__file__).parents[1])!r})\n"
            "from forge_runtime import fastjson\n"
            "from forge_runtime.goal.budget import pricing\n"
            f"data = open({str(table_file)!r}, 'rb').read()\n"
            "table = pricing.PriceTable(fastjson.loads(data), 'x')\n"
            "for name in ('claude-opus-5-5', 'claude-sonnet-4-5-20250929', 'gpt-6.1-sol',"
            " 'claude-opus-9', 'unheard-of'):\n"
            "    table.picos(name, {'input': 1, 'output': 1})\n"
            "print('re' in sys.modules)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
