"""The host kit's pretend machine, without starting a host: how a session logs in."""

from __future__ import annotations

import json
import time

import pytest

from forge_runtime.hostkit.runner import API_KEY, OAUTH_TOKEN, Host
from forge_runtime.hostkit.script import Script

SCRIPT = Script({"rules": [{"reply": {"text": "ok"}}]})


def host(tmp_path, **options) -> Host:
    return Host(tmp_path / "host", SCRIPT, isolate_network=False, claude_bin="/bin/true",
                **options)


def test_a_session_logs_in_with_an_api_key_by_default(tmp_path):
    with host(tmp_path) as machine:
        env = machine._environment(tmp_path, None)
    assert env["ANTHROPIC_API_KEY"] == API_KEY
    assert not (machine.home / ".claude" / ".credentials.json").exists()


def test_a_subscription_login_is_an_oauth_login_in_home_and_no_api_key(tmp_path):
    """What Claude Code needs to report its plan's windows (measured on 2.1.332): an OAuth
    login, here the credentials file `claude login` writes, and no API key beside it."""
    with host(tmp_path, login="subscription") as machine:
        env = machine._environment(tmp_path, None)
    assert "ANTHROPIC_API_KEY" not in env
    path = machine.home / ".claude" / ".credentials.json"
    login = json.loads(path.read_text())["claudeAiOauth"]
    assert {"user:inference", "user:profile"} <= set(login["scopes"])
    assert login["subscriptionType"] == "max"
    assert login["expiresAt"] / 1000 > time.time() + 300 * 86400  # never refreshed mid-test
    assert path.stat().st_mode & 0o077 == 0


def test_an_oauth_token_login_is_the_token_in_the_environment(tmp_path):
    with host(tmp_path, login="oauth_token") as machine:
        env = machine._environment(tmp_path, None)
    assert "ANTHROPIC_API_KEY" not in env and env["CLAUDE_CODE_OAUTH_TOKEN"] == OAUTH_TOKEN
    assert not (machine.home / ".claude" / ".credentials.json").exists()


def test_an_unknown_login_is_refused(tmp_path):
    with pytest.raises(ValueError, match="login must be one of"):
        host(tmp_path, login="oauth")
