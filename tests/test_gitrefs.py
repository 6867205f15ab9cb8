"""forge's own git (gitrefs.py) runs no command a remote's name or its config hands it, and
works on the project's repository whatever git variables the process that started it set.

The remote's name comes from a person's `.forge/guard.yaml`, but also from `--remote` of
`forge claims`, which a model passes through MCP: run as git's argument, a name like
`--upload-pack=CMD` would run CMD in forge's process (outside any sandbox of the agent's
Bash), and an `ext::CMD` URL runs CMD wherever a repository allows that transport.
"""

from __future__ import annotations

import pytest

from forge_runtime.gitrefs import GitFailed, RemoteRefs
from tests.artifact_support import bare_repository, git


@pytest.fixture
def clone(tmp_path):
    bare_repository(tmp_path / "shared.git")
    git("clone", "-q", str(tmp_path / "shared.git"), str(tmp_path / "clone"), cwd=tmp_path)
    return tmp_path / "clone"


@pytest.mark.parametrize("name", ["--upload-pack=touch {marker}",
                                  "--receive-pack=touch {marker}", "-ouch {marker}"])
def test_a_remote_named_as_an_option_runs_nothing(clone, tmp_path, name):
    marker = tmp_path / "ran"
    refs = RemoteRefs(clone, name.format(marker=marker), "refs/forge/x/")
    with pytest.raises(GitFailed, match="is not a git remote"):
        refs.fetch("*")
    with pytest.raises(GitFailed, match="is not a git remote"):
        refs.swap("a", None, "0" * 40)
    assert not marker.exists()


def test_an_ext_url_runs_nothing_even_where_the_repository_allows_it(clone, tmp_path):
    marker = tmp_path / "ran"
    git("config", "protocol.ext.allow", "always", cwd=clone)
    url = f"ext::sh -c touch% {marker}"
    with pytest.raises(GitFailed, match="not a remote configured"):  # given as the remote
        RemoteRefs(clone, url, "refs/forge/x/").fetch("*")
    git("config", "remote.ext.url", url, cwd=clone)  # a remote's URL: the transport refused
    with pytest.raises(GitFailed, match="not allowed"):
        RemoteRefs(clone, "ext", "refs/forge/x/").fetch("*")
    assert not marker.exists()


def test_git_variables_of_the_caller_do_not_move_forges_git_elsewhere(clone, tmp_path,
                                                                     monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    git("init", "-q", str(elsewhere), cwd=tmp_path)
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_NAMESPACE", "other")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'remote.origin.url'='../nowhere.git'")
    refs = RemoteRefs(clone, "origin", "refs/forge/x/")
    commit = refs.commit("one")
    assert refs.swap("a", None, commit)
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_NAMESPACE")
    monkeypatch.delenv("GIT_CONFIG_PARAMETERS")
    shown = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=tmp_path / "shared.git")
    assert shown.split() == ["refs/forge/x/a", commit]
    assert RemoteRefs(clone, "origin", "refs/forge/x/").fetch("*") == {"a": commit}


def test_code_the_agent_can_write_into_the_repository_never_runs_in_forges_git(clone,
                                                                              tmp_path):
    """.git/hooks and .git/config are the agent's to write; forge's git runs them not."""
    marker = tmp_path / "ran"
    hooks = clone / ".git" / "hooks"
    for name in ("reference-transaction", "pre-push", "post-update"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    git("config", "remote.origin.uploadpack", f"touch {marker}; git-upload-pack", cwd=clone)
    git("config", "remote.origin.receivepack", f"touch {marker}; git-receive-pack", cwd=clone)
    git("config", "core.fsmonitor", f"touch {marker}", cwd=clone)
    refs = RemoteRefs(clone, "origin", "refs/forge/x/")
    commit = refs.commit("one")
    assert refs.swap("a", None, commit)
    assert refs.fetch("*") == {"a": commit}
    assert refs.messages([commit]) == {commit: "one\n"}
    assert not marker.exists()


def test_programs_the_repository_config_names_run_not_and_the_users_still_do(clone, tmp_path,
                                                                            monkeypatch):
    """An ssh command or credential helper in .git/config (the agent's to write) runs not in
    forge's fetch and push; the one of the user's own config still does."""
    marker, users = tmp_path / "ran", tmp_path / "users-helper-ran"
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    git("config", "--global", "credential.helper", f"!touch {users}; true", cwd=clone)
    git("config", "core.sshCommand", f"touch {marker}; ssh", cwd=clone)
    git("config", "credential.helper", f"!touch {marker}; true", cwd=clone)
    git("config", "core.askPass", f"touch {marker}", cwd=clone)
    git("config", "remote.ssh.url", "ssh://127.0.0.1:1/none.git", cwd=clone)  # loopback
    with pytest.raises(GitFailed):
        RemoteRefs(clone, "ssh", "refs/forge/x/", timeout=20).fetch("*")
    assert not marker.exists()
    # a credential helper runs only once a server asks: what forge's git is handed instead
    pinned = RemoteRefs(clone, "origin", "refs/forge/x/")._programs()
    assert "core.sshcommand=ssh" in pinned and "credential.helper=" in pinned
    assert f"credential.helper=!touch {users}; true" in pinned
    assert f"touch {marker}" not in " ".join(pinned)


RECEIVING_HOOKS = ("pre-receive", "update", "post-receive", "post-update",
                   "reference-transaction", "proc-receive", "push-to-checkout")


def _agent_repository(tmp_path, marker):
    """A bare repository the agent made in its temp dir: every hook a push can run on the
    receiving side, in its hooks directory and in one its config names, and a program run
    for its alternates' refs."""
    agent = bare_repository(tmp_path / "agent.git")
    elsewhere = tmp_path / "agent-hooks"
    elsewhere.mkdir()
    for directory in (agent / "hooks", elsewhere):
        for name in RECEIVING_HOOKS:
            (directory / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
            (directory / name).chmod(0o755)
    other = bare_repository(tmp_path / "other.git")
    (agent / "objects" / "info" / "alternates").write_text(f"{other / 'objects'}\n")
    git("config", "core.alternateRefsCommand", f"echo alternates >> {marker}; true", cwd=agent)
    return agent, elsewhere


@pytest.mark.parametrize("spelling", ["path", "file-url"])
def test_a_claim_to_a_repository_given_by_path_or_url_is_refused(clone, tmp_path, spelling):
    """The remote comes from the model (or `.forge/config.yaml`): a path to a bare
    repository the agent made must not take the claim or run its hook."""
    from forge_runtime.artifacts.remote import RemoteClaims
    from forge_runtime.steps import OpError
    from tests.artifact_support import NOW

    marker = tmp_path / "ran"
    agent, _ = _agent_repository(tmp_path, marker)
    claims = RemoteClaims(clone, str(agent) if spelling == "path" else f"file://{agent}")
    with pytest.raises(OpError, match="not a remote configured in this repository"):
        claims.claim("PRD-001", "worker", 30, NOW)
    assert git("for-each-ref", cwd=agent) == "" and not marker.exists()


@pytest.mark.parametrize("spelling", ["remote-name", "hooks-path"])
def test_a_claim_to_an_agent_made_repository_runs_none_of_its_hooks(clone, tmp_path,
                                                                   spelling):
    """On a local push git runs the receiving repository's hooks, which forge's own
    pinned settings do not reach: the agent's bare repository must not run its
    `pre-receive` in the MCP server's process. Even named as a remote (in the opted-out posture the
    agent can write .git/config): claimed, listed and released, no hook, no program."""
    from forge_runtime.artifacts.remote import RemoteClaims
    from tests.artifact_support import NOW

    marker = tmp_path / "ran"
    agent, elsewhere = _agent_repository(tmp_path, marker)
    remote = "agent"
    git("remote", "add", "agent", str(agent), cwd=clone)
    if spelling == "hooks-path":
        git("config", "core.hooksPath", str(elsewhere), cwd=agent)
    # the project's own config (the agent's to write too) names a program for alternates
    (clone / ".git" / "objects" / "info" / "alternates").write_text(
        f"{tmp_path / 'other.git' / 'objects'}\n")
    git("config", "core.alternateRefsCommand", f"echo local >> {marker}; true", cwd=clone)
    claims = RemoteClaims(clone, remote)
    record, outcome = claims.claim("PRD-001", "worker", 30, NOW)
    assert outcome == "claimed"
    assert [r["id"] for r in claims.all()] == ["PRD-001"]
    assert claims.release("PRD-001", "worker", False, NOW)
    assert git("for-each-ref", cwd=agent) == "", "the claim went there and was released"
    assert not marker.exists(), marker.read_text()


def test_a_push_rewritten_to_a_local_path_is_refused(clone, tmp_path):
    """`pushInsteadOf` (the repository's config) turns a remote forge reads as a network
    URL into a local path for pushes only: forge's push then refuses the local transport
    rather than run it without its hooks pinned."""
    marker = tmp_path / "ran"
    agent, _ = _agent_repository(tmp_path, marker)
    git("remote", "add", "far", "https://127.0.0.1:9/far.git", cwd=clone)  # loopback
    git("config", f"url.{agent}.pushInsteadOf", "https://127.0.0.1:9/", cwd=clone)
    refs = RemoteRefs(clone, "far", "refs/forge/x/")
    with pytest.raises(GitFailed, match="not allowed"):
        refs.swap("a", None, refs.commit("one"))
    assert not marker.exists(), marker.read_text()
