"""Every event module and every host adapter keeps the contract its callers read by name.

The dispatcher, the launcher and the goal core ask these modules for members by name, so a
missing one surfaces only when a host sends that event, and a misspelt optional one
(`on_wedge`) is never asked for at all. hooks/contract.py and hosts/contract.py declare
them as Protocols; this holds each registered module to them.
"""

import inspect
import sys
import types
import typing

import pytest

from forge_runtime import hosts
from forge_runtime.goal.hosts import host_adapter
from forge_runtime.hooks import contract as hook_contract
from forge_runtime.hooks.dispatch import EVENT_MODULES
from forge_runtime.hosts import contract as host_contract

# what a type checker reads, not a member: Protocol's own machinery
_NOT_MEMBERS = {"__annotations__", "__dict__", "__doc__", "__module__", "__weakref__",
                "__parameters__", "__orig_bases__", "__protocol_attrs__", "__init__",
                "__subclasshook__", "__abstractmethods__", "__non_callable_proto_members__",
                "__static_attributes__", "__firstlineno__", "__type_params__"}


def members(protocol: type) -> dict[str, object]:
    """The members `protocol` declares, its bases' included: name -> the declared function,
    or the annotated type of a data member."""
    found: dict[str, object] = {}
    for cls in reversed(protocol.__mro__):
        if cls in (object, typing.Protocol, typing.Generic):
            continue
        found.update(vars(cls).get("__annotations__", {}))
        found.update({name: value for name, value in vars(cls).items()
                      if inspect.isfunction(value) and not name.startswith("_")})
    return {name: value for name, value in found.items() if name not in _NOT_MEMBERS}


def problems(module: types.ModuleType, protocol: type) -> list[str]:
    """What `module` lacks of `protocol`: a member missing, a data member of another type, a
    function that cannot be called with the declared parameters."""
    found = []
    for name, declared in members(protocol).items():
        if not hasattr(module, name):
            found.append(f"{module.__name__} has no {name}")
            continue
        offered = getattr(module, name)
        if not inspect.isfunction(declared):
            kind = typing.get_origin(declared) or declared
            if not isinstance(offered, kind):
                found.append(f"{module.__name__}.{name} is not a {kind.__name__}")
            continue
        wanted = list(inspect.signature(declared).parameters)[1:]  # without self
        if not callable(offered):
            found.append(f"{module.__name__}.{name} is not callable")
            continue
        try:
            inspect.signature(offered).bind(*wanted)
        except TypeError as exc:
            found.append(f"{module.__name__}.{name} cannot take ({', '.join(wanted)}): {exc}")
            continue
        taken = list(inspect.signature(offered).parameters)[:len(wanted)]
        if taken != wanted:
            found.append(f"{module.__name__}.{name} takes ({', '.join(taken)}), declared "
                         f"({', '.join(wanted)})")
    return found


def edits(one: str, other: str) -> int:
    """The Levenshtein distance of two names (`DEADLINE_SECONDS`, the constant behind
    `deadline_seconds`, is far from it)."""
    row = list(range(len(other) + 1))
    for i, a in enumerate(one, 1):
        previous, row[0] = row[0], i
        for j, b in enumerate(other, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (a != b))
    return row[-1]


def lookalikes(module: types.ModuleType, contract: set[str]) -> list[str]:
    """Public names of `module` outside `contract` that look like a member of it (an
    `on_` handler, or two edits or fewer from a member): nobody asks for them, so they are
    a misspelling until renamed."""
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or name in contract or isinstance(value, types.ModuleType):
            continue
        if name.startswith("on_") or any(edits(name, member) <= 2 for member in contract):
            found.append(f"{module.__name__}.{name} is not in the contract "
                         f"({', '.join(sorted(contract))})")
    return found


HOOK_CONTRACT = {name for protocol in (hook_contract.EventModule, *hook_contract.OPTIONAL,
                                       *hook_contract.ASKED_MORE.values())
                 for name in members(protocol)}
HOST_CONTRACT = set(members(host_contract.HandedHost))


def event_problems(event_name: str, module: types.ModuleType) -> list[str]:
    """Everything in which `module`, registered for `event_name`, breaks the contract."""
    found = problems(module, hook_contract.EventModule)
    for group in hook_contract.OPTIONAL:
        offered = [name for name in members(group) if hasattr(module, name)]
        if offered:
            found += problems(module, group)
    if event_name in hook_contract.ASKED_MORE:
        found += problems(module, hook_contract.ASKED_MORE[event_name])
    return found + lookalikes(module, HOOK_CONTRACT)


def event_module(name: str) -> types.ModuleType:
    qualified = f"forge_runtime.hooks.{name}"
    __import__(qualified)
    return sys.modules[qualified]


@pytest.mark.parametrize("event_name", sorted(EVENT_MODULES))
def test_every_event_module_keeps_the_event_module_contract(event_name):
    assert event_problems(event_name, event_module(EVENT_MODULES[event_name])) == []


def _fake(name: str, **offered) -> types.ModuleType:
    module = types.ModuleType(f"fake_{name}")
    module.__dict__.update(offered)
    return module


def _reply(event):
    return None


def test_a_module_without_a_required_member_breaks_the_contract():
    module = _fake("no_required", handle=_reply)
    assert event_problems("SessionStart", module) == ["fake_no_required has no REQUIRED"]


def test_a_misspelt_optional_member_breaks_the_contract():
    def watchdog_seconds(host):
        return 1.0

    def on_wedge(event, seconds):
        return None

    module = _fake("misspelt", REQUIRED={}, handle=_reply, watchdog_seconds=watchdog_seconds,
                   on_wedge=on_wedge)
    found = event_problems("SessionStart", module)
    assert "fake_misspelt has no on_wedged" in found  # a group offered in part
    assert any(problem.startswith("fake_misspelt.on_wedge is not in the contract")
               for problem in found)


def test_a_member_with_other_parameters_breaks_the_contract():
    def handle(event, extra):
        return None

    found = event_problems("SessionStart", _fake("params", REQUIRED={}, handle=handle))
    assert len(found) == 1 and found[0].startswith("fake_params.handle cannot take (event)")


def test_a_stop_module_without_what_the_launcher_asks_breaks_the_contract():
    module = _fake("stop", REQUIRED={}, handle=_reply)
    assert "fake_stop has no on_killed" in event_problems("Stop", module)


def _handed_over(adapter: types.ModuleType) -> object:
    """What `adapter` puts on an event under host_adapter.KEY when it runs a module."""
    seen = {}

    def handle(event):
        seen.update(event)
        return None

    adapter.handle("SessionStart", _fake("seeing", REQUIRED={}, handle=handle),
                   {"session_id": "s1", "hook_event_name": "SessionStart"})
    return seen.get(host_adapter.KEY)


@pytest.mark.parametrize("name", hosts.NAMES)
def test_every_host_adapter_keeps_the_adapter_contract(name):
    adapter = hosts.adapter(name)
    handed = _handed_over(adapter)
    assert handed in (None, adapter)  # an adapter hands over itself, or nothing
    protocol = host_contract.HostAdapter if handed is None else host_contract.HandedHost
    assert problems(adapter, protocol) + lookalikes(adapter, HOST_CONTRACT) == []
    assert name == adapter.NAME


def test_claude_code_hands_no_adapter_over_and_codex_does():
    """The core takes an event without an adapter for Claude Code's (host_adapter.py)."""
    assert _handed_over(hosts.adapter(hosts.DEFAULT)) is None
    assert _handed_over(hosts.adapter("codex")) is hosts.adapter("codex")


def test_what_host_adapter_py_lists_is_what_the_core_asks():
    """goal/hosts/host_adapter.py tells a reader of the core what it may ask of an adapter;
    that list and the Protocol are one contract."""
    listed = {line.split()[0].split("(")[0] for line in
              host_adapter.__doc__.split("holds for Claude Code:", 1)[1].strip().splitlines()}
    asked = set(members(host_contract.HandedHost)) - set(members(host_contract.HostAdapter))
    assert listed == asked | {"NAME"}


def test_an_adapter_lacking_what_the_core_asks_breaks_the_contract():
    adapter = _fake("host", NAME="x", SESSION_END_WATCHDOG_SECONDS=1.0,
                    shape_problem=lambda event_name, event: None,
                    handle=lambda event_name, module, event: None,
                    wedged_reply=lambda event_name, event, reply: reply,
                    transcript_readr=lambda: None)
    found = problems(adapter, host_contract.HandedHost) + lookalikes(adapter, HOST_CONTRACT)
    assert "fake_host has no transcript_reader" in found
    assert any(problem.startswith("fake_host.transcript_readr is not in the contract")
               for problem in found)
