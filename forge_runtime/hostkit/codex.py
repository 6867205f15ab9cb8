"""Run real Codex CLI sessions offline against a scripted model, like runner.Host for Claude Code.

    with CodexHost(tmp_path / "codex", Script.parse(text)) as host:
        host.install_forge(project)                 # forge init --host codex, hooks recorded
        session = host.exec("make x", cwd=project)  # one `codex exec`
        command, env = host.interactive(project, run_dir)   # the TUI, for tmux

A `CodexHost` is one pretend machine: a fresh HOME with its own CODEX_HOME (outside the
session's TMPDIR: Codex's sandbox helper refuses a CODEX_HOME under it), a `config.toml`
pointing the model provider at the host kit's server (`/v1/responses`, see responses.py)
and trusting the session's project, and the same loopback-only namespace as runner.Host.
Hooks are trusted for tests with `--dangerously-bypass-hook-trust`; forge's hooks are run
through `hookrecord`, so `session.hooks` holds their real stdin and stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from forge_runtime import hook_settings, initializer
from forge_runtime.hostkit import LOG_ENV, netns
from forge_runtime.hostkit.codex_binary import find_codex
from forge_runtime.hostkit.runner import (
    PASSED_THROUGH_ENV,
    HookCall,
    _hook_calls,
    _json_lines,
    kill_tree,
    prepare_isolation,
    write_python_shim,
)
from forge_runtime.hostkit.script import Script
from forge_runtime.hostkit.server import ModelServer
from forge_runtime.project import find_project

API_KEY_ENV = "FORGE_HOSTKIT_CODEX_KEY"
MODEL = "gpt-6.1-sol"  # a current model Codex knows: apply_patch is offered, no upgrade prompt
TRUST_FLAG = "--dangerously-bypass-hook-trust"
DEFAULT_TIMEOUT = 60.0


@dataclass
class CodexSession:
    """What one `codex exec` did, as Codex, its hooks and the model server saw it."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    events: list[dict]
    requests: list[dict]
    hooks: list[HookCall]
    stdout: str
    stderr: str
    codex_home: Path

    def hooks_for(self, event: str) -> list[HookCall]:
        return [h for h in self.hooks if h.event == event]

    @property
    def session_id(self) -> str | None:
        for event in self.events:
            if event.get("type") == "thread.started":
                return event.get("thread_id")
        return next((h.stdin.get("session_id") for h in self.hooks), None)


class CodexHost:
    """A pretend machine for real Codex CLI sessions: fresh CODEX_HOME, model server."""

    def __init__(self, workdir: str | Path, script: Script, *,
                 timeout: float = DEFAULT_TIMEOUT, isolate_network: bool = True,
                 own_pids: bool = True, codex_bin: str | Path | None = None) -> None:
        self.workdir = Path(workdir).resolve()
        self.home = self.workdir / "home"
        self.codex_home = self.home / ".codex"
        self.tmpdir = self.workdir / "tmp"
        for path in (self.codex_home, self.tmpdir):
            path.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        self.codex_bin = Path(codex_bin) if codex_bin else find_codex()
        unix_path = prepare_isolation(self, isolate_network, "fhx-", own_pids)
        self.server = ModelServer(script, log_path=self.workdir / "requests.jsonl",
                                  unix_path=unix_path)
        self.python_shim = write_python_shim(self.workdir)
        self._trusted: list[str] = []
        self._runs = 0
        self.server.start()

    def __enter__(self) -> CodexHost:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.server.stop()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    def install_forge(self, project: Path) -> Path:
        """`forge init --host codex` in `project`, its hooks run through the recorder."""
        initializer.Installer(find_project(project), agent_skills=True).run()
        return hook_settings.wire_codex_hooks(Path(project), python=str(self.python_shim))[0]

    def exec(self, prompt: str, *, cwd: str | Path, args: Sequence[str] = (),
             env: dict[str, str] | None = None, timeout: float | None = None,
             sandbox: str = "workspace-write") -> CodexSession:
        """One `codex exec --json <prompt>` in `cwd`, in Codex's `sandbox` mode."""
        cwd = Path(cwd).resolve()
        self._runs += 1
        run_dir = self.workdir / f"run-{self._runs}"
        run_dir.mkdir()
        command = self._command(cwd, ["exec", "--json", "-s", sandbox, *args,
                                      prompt])
        first_request = len(self.server.requests)
        started = time.monotonic()
        with (run_dir / "stdout.jsonl").open("wb") as out, \
                (run_dir / "stderr.txt").open("wb") as err:
            proc = subprocess.Popen(command, cwd=cwd, env=self._environment(run_dir, env),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
            try:
                exit_code, timed_out = proc.wait(timeout=timeout or self.timeout), False
            except subprocess.TimeoutExpired:
                exit_code, timed_out = None, True
            finally:
                kill_tree(proc)
        return CodexSession(
            exit_code=exit_code, timed_out=timed_out, duration_s=time.monotonic() - started,
            events=_json_lines(run_dir / "stdout.jsonl"),
            requests=self.server.requests[first_request:],
            hooks=_hook_calls(run_dir / "hooks.jsonl"),
            stdout=(run_dir / "stdout.jsonl").read_text(encoding="utf-8", errors="replace"),
            stderr=(run_dir / "stderr.txt").read_text(encoding="utf-8", errors="replace"),
            codex_home=self.codex_home)

    def interactive(self, cwd: str | Path, run_dir: str | Path,
                    env: dict[str, str] | None = None, args: Sequence[str] = ()
                    ) -> tuple[list[str], dict[str, str]]:
        """The command and environment of Codex's TUI in `cwd`, for a terminal (tmux)."""
        cwd, run_dir = Path(cwd).resolve(), Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        return self._command(cwd, list(args)), self._environment(run_dir, env)

    def rollouts(self) -> list[Path]:
        """Every rollout file (session transcript) Codex wrote, oldest first."""
        return sorted(self.codex_home.glob("sessions/*/*/*/rollout-*.jsonl"))

    def _command(self, cwd: Path, args: list[str]) -> list[str]:
        self._write_config(cwd)
        command = [str(self.codex_bin), TRUST_FLAG, *args]
        if self.isolated:
            command = netns.wrap(command, str(self.server.unix_path), self.server.port,
                                 self.own_pids)
        return command

    def _write_config(self, cwd: Path) -> None:
        """config.toml: the scripted provider, no analytics, and trust for every project a
        session used. Written once, then only added to: what a session changed there (an
        agent turning Codex's hooks off) stays for the next session to meet."""
        self.server.variables["cwd"] = str(cwd)
        if str(cwd) in self._trusted:
            return
        self._trusted.append(str(cwd))
        trust = f'[projects.{json.dumps(str(cwd))}]\ntrust_level = "trusted"\n\n'
        path = self.codex_home / "config.toml"
        if path.exists():
            with path.open("a", encoding="utf-8") as config:
                config.write("\n" + trust)
            return
        lines = [f'model = "{MODEL}"', 'model_provider = "hostkit"', "",
                 "[model_providers.hostkit]", 'name = "forge host kit"',
                 f'base_url = "{self.server.url}/v1"', 'wire_api = "responses"',
                 f'env_key = "{API_KEY_ENV}"', "",
                 # measured: with analytics on, `codex exec` waits ~5 s at exit for an
                 # upload the loopback-only namespace refuses
                 "[analytics]", "enabled = false", "",
                 # the pretend HOME (CODEX_HOME with it) usually lives under /tmp, which
                 # workspace-write leaves writable; a person's home is not under /tmp
                 "[sandbox_workspace_write]", "exclude_slash_tmp = true", "", ""]
        path.write_text("\n".join(lines) + trust, encoding="utf-8")

    def _environment(self, run_dir: Path, extra: dict[str, str] | None) -> dict[str, str]:
        env = {name: os.environ[name] for name in PASSED_THROUGH_ENV if name in os.environ}
        env.update({"HOME": str(self.home), "CODEX_HOME": str(self.codex_home),
                    "TMPDIR": str(self.tmpdir), API_KEY_ENV: "hostkit-not-a-real-key",
                    LOG_ENV: str(run_dir / "hooks.jsonl")})
        env.update(extra or {})
        return env
