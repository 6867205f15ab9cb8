"""Scenarios that need the goal ledger: a `/goal` activation, Stop charging a goal whose
ledger already holds 20, 200 and 2,000 turns, and `forge goal verify` over those ledgers."""

from __future__ import annotations

from bench.scenarios import NotAvailable, Plan, Scenario, require_command, require_module
from bench.workspace import Workspace

SIZES = (20, 200, 2000)


def _ledger_present() -> None:
    require_module("forge_runtime.goal.charging", "the goal ledger's charging")


def activation(space: Workspace) -> Plan:
    _ledger_present()
    raise NotAvailable("the bench does not drive activation yet")


def charging(turns: int):
    def prepare(space: Workspace) -> Plan:
        _ledger_present()
        raise NotAvailable("the bench does not prepare ledgers yet")
    return prepare


def verifying(turns: int):
    def prepare(space: Workspace) -> Plan:
        require_command("forge goal verify")
        _ledger_present()
        raise NotAvailable("the bench does not prepare ledgers yet")
    return prepare


def activation_scenarios() -> list[Scenario]:
    return [Scenario("user-prompt-goal", "UserPromptSubmit",
                     "UserPromptSubmit, a person's /goal (activation)", activation, True)]


def charging_scenarios() -> list[Scenario]:
    return [Scenario(f"stop-charge-{n}", "Stop", f"Stop charging a goal holding {n:,} turns",
                     charging(n), True) for n in SIZES]


def verify_scenarios() -> list[Scenario]:
    return [Scenario(f"goal-verify-{n}", "CLI", f"forge goal verify, {n:,} turns",
                     verifying(n)) for n in SIZES]
