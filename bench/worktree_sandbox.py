"""`python -m bench.worktree_sandbox`: how often the host's own sandbox fails to start a Bash
call when several sessions run at once in one repository.

Claude Code's Linux sandbox binds every write-protected path that does not exist yet (the
shared git dir's `config.lock`, a project's missing `.claude/settings.json`, ...) by making
an empty mount point there for the length of the command and removing it after. Another
session that looks at that path meanwhile takes the mount point for a file and binds it;
when it is gone before bubblewrap starts, that session's call fails with `bwrap: Can't find
source path ...` (or "Can't get type of source", "Can't bind mount") and its command never
runs. Linked work trees share the git dir, so sessions in them meet at its `config.lock`.

Each session is one `claude -p` (offline, the host kit's scripted model, no plugin) whose
model makes `--calls` Bash calls one after another, with the sandbox on through
`--settings`; `--sessions` of them run at once, each in its own tree of the layout:
`linked` (a repository and its linked work trees), `clones` (separate clones: nothing
shared) or `same` (all in one tree). Bounded: at most 4 sessions and 40 calls each, each
session at most SESSION_TIMEOUT seconds. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LAYOUTS = ("linked", "clones", "same")
MAX_SESSIONS, MAX_CALLS = 4, 40
SESSION_TIMEOUT = 300.0
SANDBOX_SETTINGS = json.dumps({"sandbox": {"enabled": True, "failIfUnavailable": True}})
COMMAND = "echo RAN; sleep 0.3"
# bubblewrap's own error, which it prints instead of running the command (measured: "Can't
# find source path", "Can't get type of source", "Can't bind mount", each naming the path)
START_FAILURE = "bwrap: "


def script(calls: int) -> str:
    """The scripted model: `calls` Bash calls, one per response, then a closing text."""
    call = f'{{tool_calls: [{{name: Bash, input: {{command: "{COMMAND}"}}}}]}}'
    return (f"name: {calls} sandboxed Bash calls, one at a time\nrules:\n"
            f"  - name: next\n    when: {{last_is_tool_result: true}}\n    times: {calls - 1}\n"
            f"    reply: {call}\n"
            "  - name: done\n    when: {last_is_tool_result: true}\n"
            "    reply: {text: done}\n"
            f"  - name: first\n    reply: {call}\n")


def trees(root: Path, layout: str, count: int) -> list[Path]:
    """The `count` project directories of `layout` under `root` (the first is the repo)."""
    from forge_runtime.hostkit.projects import add_worktree, init_git_project

    repo = init_git_project(root / "repo")
    found = [repo]
    for index in range(1, count):
        if layout == "same":
            found.append(repo)
        elif layout == "linked":
            found.append(add_worktree(repo, root / f"tree-{index}"))
        else:
            clone = root / f"clone-{index}"
            subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
            found.append(clone)
    return found


def failed_to_start(result: str) -> bool:
    """Whether a Bash tool result is the sandbox failing to start the command (which then
    never ran), not the command's own output."""
    lines = result.splitlines()
    first = lines[1] if lines[:1] == ["Exit code 1"] and len(lines) > 1 else \
        (lines[0] if lines else "")
    return first.startswith(START_FAILURE)


def tool_results(transcript: list[dict]) -> list[str]:
    """The text of every tool result in a session's transcript, in order."""
    found = []
    for entry in transcript:
        content = (entry.get("message") or {}).get("content") if entry.get("type") == "user" \
            else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = block.get("content")
                found.append(text if isinstance(text, str) else json.dumps(text))
    return found


def measure(workdir: Path, layout: str, sessions: int, calls: int) -> dict:
    """Run the sessions at once and count the calls the sandbox failed to start."""
    from forge_runtime.hostkit.pytest_plugin import as_script
    from forge_runtime.hostkit.runner import Host

    projects = trees(workdir, layout, sessions)
    results: list[list[str]] = [[] for _ in projects]

    def one(index: int) -> None:
        # no PID namespace of the host kit's own: the host's bubblewrap reads /proc/<pid>/ns
        with Host(workdir / f"host-{index}", as_script(script(calls)), own_pids=False) as host:
            session = host.run("work", cwd=projects[index], timeout=SESSION_TIMEOUT,
                               args=["--allowedTools", "Bash", "--settings", SANDBOX_SETTINGS])
            results[index] = tool_results(session.transcript())

    started = time.monotonic()
    threads = [threading.Thread(target=one, args=(index,)) for index in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [result for found in results for result in found]
    failed = [result for result in every if failed_to_start(result)]
    return {"layout": layout, "sessions": sessions, "calls": len(every),
            "ran": sum("RAN" in result for result in every), "failed_to_start": len(failed),
            "seconds": round(time.monotonic() - started, 1),
            "failures": sorted({result.splitlines()[-1].split(workdir.as_posix())[-1]
                                for result in failed})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.worktree_sandbox", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layout", choices=LAYOUTS, default="linked")
    parser.add_argument("--sessions", type=int, default=2, choices=range(2, MAX_SESSIONS + 1))
    parser.add_argument("--calls", type=int, default=20, choices=range(2, MAX_CALLS + 1),
                        metavar=f"2..{MAX_CALLS}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="forge-wt-") as workdir:
        print(json.dumps(measure(Path(workdir), args.layout, args.sessions, args.calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
