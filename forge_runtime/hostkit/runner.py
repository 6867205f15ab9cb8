"""Run real Claude Code sessions offline against a scripted model, and report what happened.

    from forge_runtime.hostkit.runner import Host
    from forge_runtime.hostkit.script import Request, Script

    with Host(tmp_path / "host", Script.load("script.yaml"), plugin_dirs=[plugin]) as host:
        first = host.run("/goal the file done.txt exists", cwd=project)
        again = host.run("keep going", cwd=project, resume=first.session_id)
    assert first.terminal_reason == "completed"
    assert [h.event for h in first.hooks] == ["SessionStart", "UserPromptSubmit", ...]

A `Host` is one pretend machine: a fresh HOME (so no real settings, credentials or
transcripts leak in or out), one model server, and the plugins to load. Each `run` is one
`claude -p` process with `--output-format stream-json --include-hook-events` and a debug
file, bounded by a timeout, after which everything it started is killed.

Hooks run through forge's launcher are recorded with their real stdin by pointing
`FORGE_PYTHON` at `hookrecord` (same Python, same process); every plugin's hooks also show
up as the host's own stream events in `SessionResult.hook_events`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from forge_runtime.claude_binary import find_claude
from forge_runtime.hostkit import LOG_ENV, netns
from forge_runtime.hostkit.script import Request, Script
from forge_runtime.hostkit.server import ModelServer

API_KEY = "sk-ant-hostkit-not-a-real-key"
OAUTH_TOKEN = "sk-ant-oat01-hostkit-not-a-real-token"
# How a session logs in: an API key (the default); a subscription's OAuth login, as the
# credentials file `claude login` writes; or a subscription's long-lived token in
# CLAUDE_CODE_OAUTH_TOKEN (`claude setup-token`). With either of the last two the host reads
# its plan's 5-hour and weekly windows from the model server's rate-limit headers
# (`plan_usage` in a script).
LOGINS = ("api_key", "subscription", "oauth_token")
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}
PASSED_THROUGH_ENV = ("PATH", "LANG", "LC_ALL", "TERM")
DEFAULT_TIMEOUT = 60.0


@dataclass
class HookCall:
    """One hook invocation as recorded around forge's launcher."""

    event: str
    stdin: dict
    stdout: str
    stderr: str
    exit_code: int
    duration_s: float
    started: float

    @property
    def reply(self) -> dict | None:
        """The hook's JSON answer on stdout, or None when it printed nothing."""
        text = self.stdout.strip()
        return json.loads(text) if text else None


@dataclass
class SessionResult:
    """Everything one session did, as the host and our model server saw it."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    events: list[dict]
    requests: list[dict]
    hooks: list[HookCall]
    stdout: str
    stderr: str
    debug_log_path: Path
    run_dir: Path
    home: Path
    isolation: str

    @cached_property
    def result(self) -> dict | None:
        """The host's final `result` event (what `--output-format json` prints), if any."""
        finals = [e for e in self.events if e.get("type") == "result"]
        return finals[-1] if finals else None

    @cached_property
    def init(self) -> dict:
        """The host's `init` event: version, loaded plugins, tools, agents, skills."""
        return next((e for e in self.events if e.get("subtype") == "init"), {})

    @property
    def terminal_reason(self) -> str | None:
        return (self.result or {}).get("terminal_reason")

    @property
    def session_id(self) -> str | None:
        for event in self.events:
            if event.get("session_id"):
                return event["session_id"]
        return None

    @property
    def hook_events(self) -> list[dict]:
        """The host's own `hook_response` stream events: every plugin's hooks, no stdin."""
        return [e for e in self.events if e.get("subtype") == "hook_response"]

    @property
    def debug_log(self) -> str:
        try:
            return self.debug_log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def hooks_for(self, event: str) -> list[HookCall]:
        return [h for h in self.hooks if h.event == event]

    def plugin_errors(self) -> list[str]:
        """Debug-log lines where the host reports a plugin or hook problem."""
        return [line for line in self.debug_log.splitlines()
                if "[ERROR]" in line and any(w in line.lower() for w in ("plugin", "hook"))]

    @property
    def transcript_path(self) -> Path | None:
        """The host's transcript of this session, under the fresh HOME."""
        if not self.session_id:
            return None
        found = sorted(self.home.glob(f".claude/projects/*/{self.session_id}.jsonl"))
        return found[0] if found else None

    def transcript(self) -> list[dict]:
        """The session's transcript entries (the host's internal JSON-lines format)."""
        path = self.transcript_path
        return _json_lines(path) if path is not None and path.exists() else []

    def model_requests(self) -> list[dict]:
        """Request bodies the main model slot saw (the /goal evaluator's left out)."""
        return [r["body"] for r in self.requests
                if not Request(r["body"]).is_goal_evaluator and "messages" in r["body"]]


class Host:
    """A pretend machine for real Claude Code sessions: fresh HOME, model server, plugins.

    `isolate_network`: run each session in a loopback-only network namespace (and a PID
    namespace that takes every leftover process down with it) where the machine allows;
    `isolation` says what was used and why. `own_pids=False` keeps the loopback-only
    network but not the PID namespace (see `netns.wrap`): for the host's own sandbox, and
    for a test whose background process must live on into the next session.

    `login`: "api_key" (the default); "subscription", a pretend Claude subscription (an
    OAuth login in HOME's `.claude/.credentials.json`, no API key); or "oauth_token", the
    same subscription's token in CLAUDE_CODE_OAUTH_TOKEN. Measured on 2.1.332: only with
    an OAuth login does the status line's input carry `rate_limits` (the `plan_usage` a
    script sends). The host's requests then carry the token as a bearer; with the
    credentials file it also looks up the account on api.anthropic.com, which fails in the
    loopback-only namespace, and it works on.

    `relays`: more servers of the test on loopback (port: the Unix socket each also
    listens on, such as hostkit/receiver.py's), reachable from inside the namespace at the
    same 127.0.0.1 port.
    """

    def __init__(self, workdir: str | Path, script: Script, *,
                 plugin_dirs: Sequence[str | Path] = (), env: dict[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, isolate_network: bool = True,
                 own_pids: bool = True, claude_bin: str | Path | None = None,
                 login: str = "api_key", relays: dict[int, str] | None = None) -> None:
        if login not in LOGINS:
            raise ValueError(f"login must be one of {LOGINS}, not {login!r}")
        self.login = login
        self.relays = dict(relays or {})  # more loopback servers: port -> Unix socket
        self.workdir = Path(workdir).resolve()
        self.home = self.workdir / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        if login == "subscription":
            write_subscription_login(self.home)
        # The host's sandbox puts its bridge sockets under TMPDIR, and a Unix socket path
        # must stay under ~100 bytes: a TMPDIR deep in a test's work dir makes every
        # sandboxed Bash call fail ("Failed to create bridge sockets"). So it is short.
        self.tmpdir = Path(tempfile.mkdtemp(prefix="fhk-tmp-", dir=_short_tmp()))
        weakref.finalize(self, shutil.rmtree, self.tmpdir, ignore_errors=True)
        self.plugin_dirs = [Path(p).resolve() for p in plugin_dirs]
        self.env = dict(env or {})
        self.timeout = timeout
        self.claude_bin = Path(claude_bin) if claude_bin else find_claude()
        unix_path = prepare_isolation(self, isolate_network, "fhk-", own_pids)
        self.server = ModelServer(script, log_path=self.workdir / "requests.jsonl",
                                  unix_path=unix_path)
        self._python_shim = write_python_shim(self.workdir)
        self._runs = 0
        try:
            self.server.start()
        except OSError:
            self.close()
            raise

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.server.stop()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    @property
    def script(self) -> Script:
        return self.server.script

    def run(self, prompt: str, *, cwd: str | Path, resume: str | None = None,
            args: Sequence[str] = (), env: dict[str, str] | None = None,
            timeout: float | None = None) -> SessionResult:
        """Run one `claude -p <prompt>` in `cwd` and return what happened.

        `resume` continues an earlier session by id; `args` adds CLI flags such as
        `--permission-mode acceptEdits`, `--allowedTools Bash`, `--mcp-config f.json`,
        `--agents '{...}'`; `env` adds to (and overrides) the session's environment.
        """
        cwd = Path(cwd).resolve()
        self._runs += 1
        run_dir = self.workdir / f"run-{self._runs}"
        run_dir.mkdir()
        command = self._command(
            cwd, ["-p", prompt, "--output-format", "stream-json", "--verbose",
                  "--include-hook-events", "--debug-file", str(run_dir / "debug.log")],
            [*(["--resume", resume] if resume else []), *args])
        first_request = len(self.server.requests)
        started = time.monotonic()
        exit_code, timed_out = self._spawn(command, cwd, run_dir, self._environment(run_dir, env),
                                           timeout or self.timeout)
        duration = time.monotonic() - started
        return SessionResult(
            exit_code=exit_code, timed_out=timed_out, duration_s=duration,
            events=_json_lines(run_dir / "stdout.jsonl"),
            requests=self.server.requests[first_request:],
            hooks=_hook_calls(run_dir / "hooks.jsonl"),
            stdout=(run_dir / "stdout.jsonl").read_text(encoding="utf-8", errors="replace"),
            stderr=(run_dir / "stderr.txt").read_text(encoding="utf-8", errors="replace"),
            debug_log_path=run_dir / "debug.log", run_dir=run_dir, home=self.home,
            isolation=self.isolation)

    def interactive(self, cwd: str | Path, run_dir: str | Path,
                    env: dict[str, str] | None = None, args: Sequence[str] = ()
                    ) -> tuple[list[str], dict[str, str]]:
        """The command and environment of the host's interactive TUI in `cwd`.

        For a test that drives the TUI through a terminal (tmux, a pty): the same pretend
        HOME, model server, plugins and network isolation as `run`, the first-run and
        trust screens pre-answered, and hooks recorded to `run_dir/hooks.jsonl`; `args`
        adds CLI flags (`--allowedTools Bash`). The caller starts the process (with
        exactly this environment) and ends it.
        """
        cwd, run_dir = Path(cwd).resolve(), Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        return self._command(cwd, [], args), self._environment(run_dir, env)

    def _command(self, cwd: Path, head: Sequence[str], tail: Sequence[str]) -> list[str]:
        """Ready the host for a session in `cwd`; its command line, `head` flags before the
        plugins and `tail` after, wrapped in the network namespace when isolated."""
        self._trust(cwd)
        self.server.variables["cwd"] = str(cwd)
        command = [str(self.claude_bin), *head]
        for plugin in self.plugin_dirs:
            command += ["--plugin-dir", str(plugin)]
        command += list(tail)
        return self._isolated(command)

    def cli(self, words: Sequence[str], *, cwd: str | Path | None = None,
            env: dict[str, str] | None = None, timeout: float = 60.0
            ) -> subprocess.CompletedProcess:
        """One command of the host's own CLI (`claude plugin install forge@forge`) with this
        machine's HOME and environment and the sessions' network isolation."""
        command = self._isolated([str(self.claude_bin), *words])
        run_dir = self.workdir / "cli"
        run_dir.mkdir(exist_ok=True)
        return subprocess.run(command, cwd=cwd or self.home, env=self._environment(run_dir, env),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)

    def _isolated(self, command: list[str]) -> list[str]:
        if not self.isolated:
            return command
        return netns.wrap(command, str(self.server.unix_path), self.server.port, self.own_pids,
                          self.relays)

    def _environment(self, run_dir: Path, extra: dict[str, str] | None) -> dict[str, str]:
        env = {name: os.environ[name] for name in PASSED_THROUGH_ENV if name in os.environ}
        env.update(QUIET_ENV)
        env.update({
            "HOME": str(self.home),
            "TMPDIR": str(self.tmpdir),
            "CLAUDE_CODE_TMPDIR": str(self.tmpdir),
            "ANTHROPIC_BASE_URL": self.server.url,
            **({"ANTHROPIC_API_KEY": API_KEY} if self.login == "api_key" else {}),
            **({"CLAUDE_CODE_OAUTH_TOKEN": OAUTH_TOKEN} if self.login == "oauth_token" else {}),
            "FORGE_PYTHON": str(self._python_shim),
            LOG_ENV: str(run_dir / "hooks.jsonl"),
        })
        env.update(self.env)
        env.update(extra or {})
        return env

    def _spawn(self, command: list[str], cwd: Path, run_dir: Path, env: dict[str, str],
               timeout: float) -> tuple[int | None, bool]:
        with (run_dir / "stdout.jsonl").open("wb") as out, \
                (run_dir / "stderr.txt").open("wb") as err:
            proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
            try:
                return proc.wait(timeout=timeout), False
            except subprocess.TimeoutExpired:
                return None, True
            finally:
                kill_tree(proc)

    def _trust(self, cwd: Path) -> None:
        """Pre-answer the first-run and trust questions the host would otherwise ask."""
        config_path = self.home / ".claude.json"  # the host's CLI commands write it too
        config = json.loads(config_path.read_text()) if config_path.exists() else {}
        config.setdefault("hasCompletedOnboarding", True)
        config.setdefault("customApiKeyResponses",
                          {"approved": [API_KEY[-20:]], "rejected": []})
        config.setdefault("projects", {}).setdefault(str(cwd), {"hasTrustDialogAccepted": True})
        config_path.write_text(json.dumps(config, indent=2))



def write_subscription_login(home: Path) -> None:
    """A Claude subscription's OAuth login as `claude login` leaves it in HOME: a Max plan,
    the scopes a person's login has, a token that expires in a year (so the host never tries
    to refresh it: that would go to the network)."""
    credentials = home / ".claude" / ".credentials.json"
    credentials.parent.mkdir(parents=True, exist_ok=True)
    credentials.write_text(json.dumps({"claudeAiOauth": {
        "accessToken": OAUTH_TOKEN,
        "refreshToken": "sk-ant-ort01-hostkit-not-a-real-token",
        "expiresAt": int((time.time() + 365 * 86400) * 1000),
        "scopes": ["user:inference", "user:profile", "user:sessions:claude_code"],
        "subscriptionType": "max",
    }}))
    credentials.chmod(0o600)


def write_python_shim(workdir: Path) -> Path:
    """An executable Python for forge's hooks that runs each one through the recorder (as
    `FORGE_PYTHON` for Claude Code's launcher, as the command of Codex's hooks)."""
    shim = workdir / "forge-python"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -m '
                    'forge_runtime.hostkit.hookrecord "$@"\n')
    shim.chmod(0o755)
    return shim


def prepare_isolation(host, isolate_network: bool, prefix: str,
                      own_pids: bool = True) -> Path | None:
    """Set `host.isolated`, `host.isolation`, `host.own_pids` and `host._socket_dir`; the model
    server's Unix socket path when sessions run in a loopback-only namespace, else None.

    A Unix socket path must stay under ~100 bytes, so it lives in a short temp dir, removed
    by the host's close() or, when a caller forgets that, at garbage collection.
    """
    can_isolate, reason = netns.available() if isolate_network else (False, "not asked")
    host.isolated, host.own_pids = can_isolate, own_pids
    if can_isolate and not own_pids:
        reason = "loopback-only network namespace (unshare -n), no PID namespace"
    host.isolation = reason if can_isolate else f"none ({reason})"
    host._socket_dir = None
    if not can_isolate:
        return None
    host._socket_dir = Path(tempfile.mkdtemp(prefix=prefix, dir=_short_tmp()))
    weakref.finalize(host, shutil.rmtree, host._socket_dir, ignore_errors=True)
    return host._socket_dir / "model.sock"


def _short_tmp() -> str | None:
    """/tmp when it exists (short), else the default temp dir."""
    return "/tmp" if os.path.isdir("/tmp") else None


def _descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, read from /proc (no psutil needed)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(proc: subprocess.Popen) -> None:
    """Kill the session process, its process group and every descendant, then reap it.

    Descendants are collected before anything dies, since orphans get re-parented and
    tools may start their own process groups.
    """
    doomed = _descendants(proc.pid) if Path("/proc").is_dir() else []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in doomed:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    _wait_until_gone(doomed)


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_until_gone(pids: list[int], limit: float = 5.0) -> None:
    """SIGKILL is delivered asynchronously: wait (bounded) until the killed processes are gone,
    so a caller that checks for leftovers right after a session sees none."""
    deadline = time.monotonic() + limit
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


def _json_lines(path: Path) -> list[dict]:
    """The JSON objects of a JSON-lines file; a line cut short by a killed writer is skipped."""
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _hook_calls(path: Path) -> list[HookCall]:
    if not path.exists():
        return []
    calls = []
    for record in _json_lines(path):
        try:
            stdin = json.loads(record["stdin"])
        except ValueError:
            stdin = None
        if not isinstance(stdin, dict):  # the host sent something that is not an event
            stdin = {"_raw": record["stdin"]}
        event = stdin.get("hook_event_name") or (record["argv"] or ["?"])[-1]
        calls.append(HookCall(event, stdin, record["stdout"], record["stderr"],
                              record["exit_code"], record["duration_s"], record["started"]))
    calls.sort(key=lambda call: call.started)  # hooks append when they end; order by start
    return calls
