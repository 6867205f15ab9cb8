"""The project and goal fixtures of the tests: a goal project, a host-like transcript and its
events, running goals, and the readers of a goal's state (host tests share `goal_in_state`;
their session helpers are in tests/host/session_support.py)."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.store import state_file
from forge_runtime.hooks.goal_handlers import on_prompt, on_stop
from forge_runtime.project import Project, find_project


def goal_in_state(project_dir: Path) -> dict | None:
    """The goal fields of a project's state.md, as the hooks last wrote them."""
    return state_file.read(find_project(project_dir).state_path).goal


# A goal test not about the sandbox runs its goals by the project's opt-out, in so many
# words, as a person would have to write it (sandbox.posture.for_goal); tests of the secure
# posture enable the layer or leave this out.
SANDBOX_OPT_OUT = "goal: {require_sandbox: false}\n"


def opt_out_of_sandbox(root: Path) -> None:
    (root / ".forge").mkdir(parents=True, exist_ok=True)
    (root / ".forge" / "guard.yaml").write_text(SANDBOX_OPT_OUT)


def with_sandbox_layer(root: Path) -> None:
    """The project's settings as `forge sandbox enable` writes them (`layer.merged`), so
    its goals run sandboxed; written directly, as the settings are all a /goal reads."""
    from forge_runtime.sandbox import layer, scopes

    project = find_project(root)
    path = scopes.settings_path(scopes.PROJECT, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(layer.merged({}, project, scopes.PROJECT, path, {}), indent=2))


def make_project(tmp_path: Path, *, opt_out: bool = True) -> Project:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    if opt_out:
        opt_out_of_sandbox(root)
    return find_project(root)


def goal_projects(*roots: Path) -> list[Project]:
    """Projects (work trees, say) made elsewhere, set up as `make_project` sets up its own."""
    for root in roots:
        opt_out_of_sandbox(root)
    return [find_project(root) for root in roots]


def goal_project(tmp_path: Path, monkeypatch, *, cli: bool = False,
                 sandboxed: bool = False) -> Project:
    """The project of a goal test that drives forge's hooks in this process.

    A Stop that finds no new turn waits for a late transcript write: 0.05 s here, not the
    host-sized wait, and no plugin root of the calling shell leaks in. `cli`: forge
    commands also run in it as a person runs them (CLAUDE_PROJECT_DIR names it, colour
    off, it is the working directory); otherwise no CLAUDE_PROJECT_DIR is set at all.
    `sandboxed`: the kernel layer's settings are in force (a HOME of its own, so no user
    settings of this machine count), as `forge init` leaves a project; otherwise the
    project opts out of it.
    """
    monkeypatch.setattr(transcript, "FLUSH_WAIT", 0.05)
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    project = make_project(tmp_path, opt_out=not sandboxed)
    if sandboxed:
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        with_sandbox_layer(project.root)
    if cli:
        monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
        monkeypatch.setenv("NO_COLOR", "1")
        monkeypatch.chdir(project.root)
    else:
        monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return project


def two_gates(unit_tests: str) -> str:
    """A gates file of two: `unit-tests` runs `unit_tests` over src/, `docs` over docs/."""
    return ("gates:\n"
            f"  unit-tests:\n    command: {unit_tests}\n    boundary: [\"src/**\"]\n"
            "  docs:\n    command: echo docs\n    boundary: [\"docs/**\"]\n")


def goal_project_fixture(**options):
    """A test module's `project` fixture (`project = goal_project_fixture()`): a goal
    project as `goal_project(tmp_path, monkeypatch, **options)` makes it."""
    @pytest.fixture
    def project(tmp_path, monkeypatch) -> Project:
        """A goal project (goal_support.goal_project_fixture)."""
        return goal_project(tmp_path, monkeypatch, **options)

    return project


def cli_project_fixture():
    """A test module's `project` fixture that is conftest's `cli_project`: an empty git
    repository, the host's project dir."""
    @pytest.fixture
    def project(cli_project) -> Path:
        """conftest's `cli_project` (goal_support.cli_project_fixture)."""
        return cli_project

    return project


def activate_with_gates(project: Project, objective: str, **options):
    """A person's `/goal` as the hooks confirm it: the gates file's final gates recorded
    (the hooks read them through the gates they hand the goal's handlers)."""
    from forge_runtime.gates.for_goal import recorded_field
    from forge_runtime.goal.rules import activation

    return activation.activate(project, objective, recorded=recorded_field(project), **options)


def gates_project(tmp_path: Path, monkeypatch, gates: str, parser: str) -> Project:
    """A goal project (as the CLI finds it) with src/parser.py holding `parser`, a docs page
    and `gates` as its gates file, every file aged (see `age`)."""
    project = goal_project(tmp_path, monkeypatch, cli=True)
    write(project.root, "src/parser.py", parser)
    write(project.root, "docs/index.md", "# parser\n")
    write(project.root, ".forge/gates.yaml", gates)
    age(project.root)
    return project


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def age(root: Path) -> None:
    """Make every file look written a minute ago, as files are between two edits (a file
    changed within the last two seconds is never trusted from the stat cache)."""
    past = time.time() - 60
    for directory, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(directory, name), (past, past))


def running_goal(project: Project, objective: str) -> Session:
    """A session whose person just typed `/goal <objective>`: active at its first Stop."""
    session = Session(project)
    session.person_goal(objective)
    return session


def crossing_in_two_turns(session: Session, spend, below: dict, crossing: dict) -> str:
    """A running goal's turn that spends `below` (`spend(session, message_id, **below)`),
    its Stop letting the goal go on (telling the model, at most, that the next turn is the
    tranche's last), then one that spends `crossing`: the reason of the Stop that ends the
    goal at its budget."""
    spend(session, "msg_1", **below)
    going_on = session.turn()
    assert going_on is None or "continue" not in going_on, going_on
    spend(session, "msg_2", **crossing)
    reply = session.turn()
    assert reply is not None and reply["continue"] is False, reply
    assert reply["stopReason"].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: "), reply
    return reply["stopReason"]


def goal_again(session: Session, objective: str) -> dict:
    """The person's `/goal <objective>` once more after forge stopped it, and the Stop that
    lets its new tranche run: the goal as the ledger's head holds it then."""
    from forge_runtime.goal.store.ledger import Ledger

    session.person_goal(objective)
    assert session.turn() is None
    project = session.project
    return Ledger(project.ledger_root, goal_of(project)["nonce"]).current().goal


def assert_transition(before: dict, record: dict, refused: str | None,
                      nonce: str = "n" * 32) -> None:
    """The ledger's rule on `record` following `before` (ledger.check_transition): it
    accepts it when `refused` is None, else refuses it in words matching `refused`."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store.ledger import check_transition

    if refused is None:
        check_transition(before, record, nonce)
        return
    with pytest.raises(ForgeError, match=refused):
        check_transition(before, record, nonce)


def stop_turn(session: Session) -> dict | None:
    """One model turn, answered by forge's real Stop hook entry point (as the host's native
    goal continues the session: `stop_hook_active`)."""
    from forge_runtime.hooks import stop

    session._append({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "working"}]}})
    return stop.handle(session.event("Stop", stop_hook_active=True))


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    """`forge <argv>` in this process: its exit code and everything it printed."""
    from forge_runtime.cli.main import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def goal_of(project: Project) -> dict:
    """The goal fields of the project's state.md."""
    return state_file.read(project.state_path).goal


def started_goal(project: Project, objective: str, turns: int) -> Session:
    """A person's goal charged `turns` turns, none of them stopped by forge."""
    session = Session(project)
    session.person_goal(objective)
    for _ in range(turns):
        reply = session.turn()
        assert reply is None or "continue" not in reply  # a stuck warning at most
    return session


def goal_with_checklist(project: Project, objective: str, turns: int,
                        checklist: str) -> Session:
    """A person's goal charged `turns` turns, with `checklist` added to state.md after the
    first (once the Stop that activated it has written the file)."""
    session = Session(project)
    session.person_goal(objective)
    session.turn()
    project.state_path.write_text(project.state_path.read_text() + checklist)
    for _ in range(turns - 1):
        session.turn()
    return session


class Session:
    """A host session as forge's hooks see it: events in, a JSON-lines transcript on disk.

    The entries mirror what Claude Code 2.1.332 writes (see forge_runtime/goal/hosts/transcript.py
    and the host tests that check the same flows against the real binary).
    """

    def __init__(self, project: Project, session_id: str | None = None) -> None:
        self.project = project
        self.id = session_id or str(uuid.uuid4())
        self.transcript = project.root.parent / f"{self.id}.jsonl"
        self.prompt_id = None
        self.last_uuid = None

    def _append(self, entry: dict) -> dict:
        entry.setdefault("uuid", str(uuid.uuid4()))
        entry.setdefault("parentUuid", self.last_uuid)
        entry.setdefault("sessionId", self.id)
        self.last_uuid = entry["uuid"]
        with self.transcript.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
        return entry

    def event(self, name: str, **fields) -> dict:
        return {"session_id": self.id, "transcript_path": str(self.transcript),
                "cwd": str(self.project.root), "hook_event_name": name,
                "prompt_id": self.prompt_id, **fields}

    # -- what the host writes ----------------------------------------------------------

    def person_goal(self, objective: str) -> dict | None:
        """A person types `/goal <objective>`: UserPromptSubmit, then the host sets it."""
        self.prompt_id = str(uuid.uuid4())
        reply = on_prompt(self.event("UserPromptSubmit", prompt=f"/goal {objective}"))
        self._append({"type": "attachment", "attachment": {
            "type": "goal_status", "met": False, "sentinel": True, "condition": objective}})
        command = self._append({"type": "user", "promptId": self.prompt_id, "message": {
            "role": "user", "content": "<command-name>/goal</command-name>\n"
            "<command-message>goal</command-message>\n"
            f"<command-args>{objective}</command-args>"}})
        self._append({"type": "system", "subtype": "local_command", "parentUuid": command["uuid"],
                      "content": f"<local-command-stdout>Goal set: {objective}"
                                 "</local-command-stdout>"})
        return reply

    def model_goal(self, objective: str) -> dict | None:
        """A prompt a model scheduled whose text is `/goal ...`: the host sets no goal."""
        self.prompt_id = str(uuid.uuid4())
        reply = on_prompt(self.event("UserPromptSubmit", prompt=f"/goal {objective}"))
        self._append({"type": "user", "promptId": self.prompt_id, "isMeta": True,
                      "promptSource": "system",
                      "message": {"role": "user", "content": f"/goal {objective}"}})
        return reply

    def host_prompt(self, text: str, **sent) -> dict | None:
        """A prompt the host sent on its own: a wake-up or a cron the model scheduled
        (`isMeta`, `promptSource: "system"`, as measured), or what `sent` says."""
        self.prompt_id = str(uuid.uuid4())
        reply = on_prompt(self.event("UserPromptSubmit", prompt=text))
        self._append({"type": "user", "promptId": self.prompt_id,
                      **(sent or {"isMeta": True, "promptSource": "system"}),
                      "message": {"role": "user", "content": text}})
        return reply

    def continuation(self, text: str = "Stop hook feedback:\n[a loop]: go on") -> None:
        """The entry the host writes when a Stop hook's block continues the prompt: `isMeta`,
        under the same prompt's id."""
        self._append({"type": "user", "promptId": self.prompt_id, "isMeta": True,
                      "message": {"role": "user", "content": text}})

    def prompt(self, text: str) -> dict | None:
        self.prompt_id = str(uuid.uuid4())
        reply = on_prompt(self.event("UserPromptSubmit", prompt=text))
        self._append({"type": "user", "promptId": self.prompt_id,
                      "message": {"role": "user", "content": text}})
        return reply

    def turn(self) -> dict | None:
        """The model answers once; the host runs the Stop hooks."""
        self.work()
        return self.stop()

    def work(self) -> str:
        """The model answers once and the turn ends, but no Stop hook of forge's finishes
        (killed, timed out): the host goes on. Returns the turn's identity."""
        return self._append({"type": "assistant", "message": {
            "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "working"}]}})["uuid"]

    def stop(self) -> dict | None:
        """A Stop event for the turn the transcript ends with (repeatable)."""
        return on_stop(self.event("Stop", stop_hook_active=True))

    def verdict(self, **attachment) -> None:
        self._append({"type": "attachment", "attachment": {"type": "goal_status",
                                                           **attachment}})
