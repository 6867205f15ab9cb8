"""Qualification's dependency check: a goal does not start without what verifying it needs."""

from __future__ import annotations

import pytest

from forge_runtime import hook_python
from forge_runtime.errors import ForgeError
from forge_runtime.goal.rules import qualification


def test_a_missing_verification_dependency_blocks_the_goal(monkeypatch):
    asked = []
    monkeypatch.setattr(hook_python, "missing_modules",
                        lambda names: asked.append(names) or ["yaml"])
    with pytest.raises(ForgeError) as caught:
        qualification._check_dependencies()
    assert asked == [("jsonschema", "yaml")]
    assert caught.value.message == "BLOCKED: dependency yaml is not installed"
    assert caught.value.fix == "forge doctor"


def test_installed_dependencies_pass():
    qualification._check_dependencies()
