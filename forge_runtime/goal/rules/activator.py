"""Who started a tranche, where and on which host: fields of the ledger's `activate` record.

A team reads every goal on the remote (`forge goal report --remote`) and totals its spend
per person, branch and host; the ledger is the only thing that travels with a goal, so the
activation that opens each tranche carries, beside its session:

    "by":     the git identity a commit made in the clone at that moment would carry
              (`git var GIT_AUTHOR_IDENT`, without its date): the activating commit's
              author, a claim as a commit's author is, never a proof of who typed;
    "branch": the clone's branch then (absent on a detached HEAD);
    "host":   the host whose session ran the person's `/goal` (claude, codex).

What git cannot say is left out (no identity configured, no git), and the activation goes
on: a report shows such a tranche as unknown. Two short gits, once per `/goal`, never on a
charge.
"""

from __future__ import annotations

import os
import subprocess

GIT_SECONDS = 2.0


def _git(root: str, *args: str) -> str | None:
    """git's first line of output in the repository at `root`, or None when it fails; with
    the caller's environment minus what would point git at another repository, and none of
    the repository's hooks or programs (the agent can write its config)."""
    from forge_runtime.agent_roots import program
    from forge_runtime.gitrefs import LOCAL_VARIABLES, PINNED

    env = {name: value for name, value in os.environ.items()
           if name not in LOCAL_VARIABLES and not name.startswith("GIT_CONFIG_")}
    try:
        done = subprocess.run([program("git"), "-C", root, *PINNED, *args], env={
            **env, "GIT_TERMINAL_PROMPT": "0"}, capture_output=True, text=True,
            timeout=GIT_SECONDS, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    line = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
    return line if done.returncode == 0 and line else None


def fields(root: str | os.PathLike, host: str | None) -> dict:
    """The `by`, `branch` and `host` of an activation in the project at `root` (those known)."""
    root = os.fspath(root)
    found = {}
    ident = _git(root, "var", "GIT_AUTHOR_IDENT")
    if ident is not None and ">" in ident:
        found["by"] = ident[:ident.rindex(">") + 1]  # "Name <email>", its date dropped
    branch = _git(root, "symbolic-ref", "--short", "--quiet", "HEAD")
    if branch is not None:
        found["branch"] = branch
    if host:
        found["host"] = host
    return found
