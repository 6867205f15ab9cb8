"""Run the demo's steps in order and turn their sections into the report."""

from __future__ import annotations

import shutil
import subprocess

from forge_runtime import hints, resources
from forge_runtime.claude_binary import ClaudeNotFound
from forge_runtime.demo.core import Demo, DemoFailed, make_workdir
from forge_runtime.demo.steps import STEPS
from forge_runtime.errors import ForgeError
from forge_runtime.hostkit.script import ScriptError
from forge_runtime.result import Result


def run_demo(keep: str | None) -> Result:
    """Run every step; the work dir is removed afterwards unless `keep` names it."""
    workdir = make_workdir(keep)
    demo = None
    try:
        demo = Demo(workdir, resources.host_plugin_dir(workdir), kept=keep is not None)
        sections = [step(demo) for step in STEPS]
    except ClaudeNotFound as exc:
        raise ForgeError(f"forge demo needs the Claude Code CLI: {exc}",
                         "python3 -m pip install --upgrade claude-agent-sdk") from None
    except (OSError, subprocess.SubprocessError, ScriptError) as exc:
        raise DemoFailed(f"{exc.__class__.__name__}: {exc}") from None
    finally:
        if demo is not None:
            demo.close()
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    first = next(iter(demo.sessions.values()))
    lines = [
        f"forge demo: the real Claude Code {first.init.get('claude_code_version', '')} host, "
        "offline, with a scripted model on 127.0.0.1",
        f"network: {first.isolation}",
    ]
    for number, section in enumerate(sections, 1):
        lines += ["", f"{number}. {section.title}", *(f"   {line}" for line in section.lines)]
    data = {"workdir": str(workdir) if keep else None,
            "sections": [{"title": s.title, "lines": s.lines} for s in sections],
            "sessions": {name: {"session_id": s.session_id, "terminal_reason": s.terminal_reason,
                                "hooks": [h.event for h in s.hooks],
                                "plugins": [p["path"] for p in s.init.get("plugins", [])
                                            if p.get("source", "").endswith("@inline")]}
                         for name, s in demo.sessions.items()}}
    if keep is None:
        return Result(hints.next_("forge demo --keep forge-demo",
                                  "run it again and keep the project to look inside"),
                      lines=lines, data=data)
    lines += ["", "Files (kept):", *_file_lines(demo)]
    return Result(hints.done(f"the demo project is kept in {workdir}"), lines=lines, data=data)


def _file_lines(demo: Demo) -> list[str]:
    lines = [f"   project            {demo.project}"]
    for name, session in demo.sessions.items():
        lines += [
            f"   {name} transcript{' ' * max(1, 8 - len(name))}{session.transcript_path}",
            f"   model requests     {session.run_dir.parent / 'requests.jsonl'}",
            f"   hook calls         {session.run_dir / 'hooks.jsonl'}",
            f"   host debug log     {session.debug_log_path}",
        ]
    return lines
