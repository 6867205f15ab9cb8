"""A person's settings survive every sequence of forge's writes and undos.

`forge init`, `forge sandbox enable|disable` (every scope), `forge init --hooks`,
`--statusline`, and a person's edits between them, in any order: no sequence loses a byte
the person wrote. Every test has its own HOME and managed directory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_runtime.cli.main import main
from forge_runtime.sandbox import scopes, tools

THEIRS = {"env": {"KEEP": "1"}, "permissions": {"allow": ["Bash(ls:*)"]}}


@pytest.fixture
def project(cli_project, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(scopes, "MANAGED_DIR", tmp_path / "etc-claude-code")
    monkeypatch.setattr(tools, "find", lambda: tools.Tools(True, (0, 8, 0), "/usr/bin/socat"))
    return cli_project


def run(capsys, *words: str) -> tuple[int, dict]:
    code = main([*words, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_file_the_person_replaced_after_init_survives_enable_then_disable(project, capsys):
    """The finding: the record of init's enable (no file) was restored over the person's."""
    assert run(capsys, "init")[1]["sandbox"]["outcome"] == "enabled"
    path = project / ".claude" / "settings.json"
    theirs = json.dumps(THEIRS).encode()
    path.write_bytes(theirs)
    assert run(capsys, "sandbox", "enable")[0] == 0
    code, payload = run(capsys, "sandbox", "disable")
    assert code == 0
    assert path.read_bytes() == theirs


# --- every sequence -------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FILES = ("project", "local", "user", "managed")  # the settings files a person edits
LAYER_FILE = {"project": "project", "user": "user", "managed": "managed"}  # scope -> file


def file_path(name: str, project: Path) -> Path:
    home = Path(scopes.home_dir())
    return {"project": project / ".claude" / "settings.json",
            "local": project / ".claude" / "settings.local.json",
            "user": home / ".claude" / "settings.json",
            "managed": Path(scopes.MANAGED_DIR, "managed-settings.d",
                            scopes.MANAGED_DROP_IN)}[name]


# What a person writes: keys of their own, some inside the sections forge merges into.
PERSON_ITEMS = st.one_of(
    st.tuples(st.just(("env",)), st.sampled_from(["KEEP", "TOKEN", "MODE"]),
              st.text("abc1 é", max_size=4)),
    st.tuples(st.just(("model",)), st.none(), st.sampled_from(["opus", "sonnet"])),
    st.tuples(st.just(("permissions", "allow")), st.none(),
              st.sampled_from(["Bash(ls:*)", "Read(./docs/**)"])),
    st.tuples(st.just(("permissions", "deny")), st.none(),
              st.sampled_from(["Read(./.env)", "Bash(curl:*)"])),
    st.tuples(st.just(("sandbox", "excludedCommands")), st.none(),
              st.sampled_from(["docker", "make"])),
)
STYLES = st.sampled_from([{}, {"indent": 4}, {"separators": (",", ":")},
                          {"indent": "\t", "ensure_ascii": False}])

OPERATIONS = st.one_of(
    st.tuples(st.just("init"), st.sampled_from(["", "--hooks"])),
    st.tuples(st.sampled_from(["enable", "disable"]), st.sampled_from(list(LAYER_FILE))),
    st.tuples(st.sampled_from(["--statusline", "--remove-statusline"]),
              st.sampled_from(["local", "project", "user"])),
    st.tuples(st.just("replace"), st.sampled_from(FILES), st.lists(PERSON_ITEMS, max_size=4),
              STYLES),
    st.tuples(st.just("add"), st.sampled_from(FILES), PERSON_ITEMS, STYLES),
    st.tuples(st.just("delete"), st.sampled_from(FILES)),
)


def _put(settings: dict, item) -> tuple:
    """Write one person item into `settings`; the fact to check later."""
    path, key, value = item
    if path[-1] in ("allow", "deny", "excludedCommands"):
        section = settings.setdefault(path[0], {})
        listed = section.setdefault(path[1], [])
        if value not in listed:
            listed.append(value)
        return ("member", path, value)
    if key is None:
        settings[path[0]] = value
        return ("value", path, value)
    settings.setdefault(path[0], {})[key] = value
    return ("value", (*path, key), value)


def _holds(settings: dict, fact) -> bool:
    kind, path, value = fact
    node = settings
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return value in node if kind == "member" else node == value


def _holds_forge(settings: dict) -> bool:
    sandbox = settings.get("sandbox", {})
    deny = settings.get("permissions", {}).get("deny", [])
    return bool({"hooks", "statusLine", "disableAllHooks"} & set(settings)
                or {"enabled", "failIfUnavailable", "allowUnsandboxedCommands"} & set(sandbox)
                or any(rule.startswith("Edit(") for rule in deny))


class Person:
    """What the person wrote to each file: the facts they set, and the bytes of their last
    write while only `forge sandbox enable` of that file's scope has written it since."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.facts: dict[str, list] = {name: [] for name in FILES}
        self.pure: dict[str, bytes | None | bool] = {name: None for name in FILES}

    def write(self, name: str, settings: dict | None, facts: list, style: dict) -> None:
        path = file_path(name, self.project)
        if settings is None:
            path.unlink(missing_ok=True)
            self.pure[name] = None
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(settings, **style))
            # the bytes are all theirs only when nothing of forge's was in what they edited
            self.pure[name] = False if _holds_forge(settings) else path.read_bytes()
        latest = {fact[1]: fact for fact in facts if fact[0] == "value"}  # the last one counts
        self.facts[name] = [fact for fact in facts
                            if fact[0] == "member" or latest[fact[1]] is fact]

    def current(self, name: str) -> dict:
        try:
            found = json.loads(file_path(name, self.project).read_text())
        except FileNotFoundError:
            return {}
        return found if isinstance(found, dict) else {}

    def check(self, step) -> None:
        for name in FILES:
            now = self.current(name)
            lost = [fact for fact in self.facts[name] if not _holds(now, fact)]
            assert not lost, f"after {step}: {name} lost the person's {lost}"


def _apply(person: Person, step) -> None:
    kind = step[0]
    if kind == "init":
        main(["init", *([step[1]] if step[1] else []), "--json"])
        person.pure["project"] = False if step[1] else person.pure["project"]
    elif kind in ("enable", "disable"):
        code = main(["sandbox", kind, "--scope", step[1], "--json"])
        assert code == 0, f"{step} failed"
        name = LAYER_FILE[step[1]]
        if kind == "disable" and person.pure[name] is not False:
            path = file_path(name, person.project)
            expected = person.pure[name]
            found = path.read_bytes() if path.exists() else None
            assert found == expected, f"{step}: the person's bytes are not back"
    elif kind in ("--statusline", "--remove-statusline"):
        main(["init", kind, "--scope", step[1], "--json"])
        if step[1] in person.pure:
            person.pure[step[1]] = False
    elif kind == "replace":
        settings: dict = {}
        facts = [_put(settings, item) for item in step[2]]
        person.write(step[1], settings, facts, step[3])
    elif kind == "add":
        settings = person.current(step[1])
        fact = _put(settings, step[2])
        person.write(step[1], settings, [*person.facts[step[1]], fact], step[3])
    else:
        person.write(step[1], None, [], {})


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(steps=st.lists(OPERATIONS, min_size=1, max_size=12))
def test_no_sequence_of_forge_writes_and_person_edits_loses_a_persons_byte(
        tmp_path_factory, steps):
    import subprocess

    base = tmp_path_factory.mktemp("sequence")
    project = base / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(base / "home"))
        patch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        patch.setenv("CLAUDE_PROJECT_DIR", str(project))
        patch.setattr(scopes, "MANAGED_DIR", base / "etc-claude-code")
        patch.setattr(tools, "find", lambda: tools.Tools(True, (0, 8, 0), "/usr/bin/socat"))
        person = Person(project)
        for step in [*steps, ("disable", "project"), ("disable", "user"),
                     ("disable", "managed")]:
            _apply(person, step)
            person.check(step)


def test_an_edited_layer_re_enabled_then_disabled_says_what_stays(project, capsys):
    """The person took one rule out of forge's file; `enable` put it back on the file as
    it found it; `disable` undoes that enable alone, and names what the file still holds."""
    path = project / ".claude" / "settings.json"
    run(capsys, "sandbox", "enable")
    edited = json.loads(path.read_text())
    dropped = edited["permissions"]["deny"].pop()
    edited["env"] = {"KEEP": "1"}
    path.write_text(json.dumps(edited))
    theirs = path.read_bytes()
    assert run(capsys, "sandbox", "enable")[1]["changed"] is True
    code, payload = run(capsys, "sandbox", "disable")
    assert (code, payload["outcome"]) == (0, "restored") and path.read_bytes() == theirs
    assert "sandbox.enabled" in payload["left"] and dropped not in payload["left"]
    assert "forge left them" in payload["_hint"]["rationale"]


def test_a_file_forge_cannot_take_its_part_out_of_is_left_with_the_diff(project, capsys):
    path = project / ".claude" / "settings.json"
    assert run(capsys, "sandbox", "enable")[0] == 0
    edited = json.loads(path.read_text())
    edited["sandbox"] = ["the person's own idea"]
    path.write_text(json.dumps(edited))
    before = path.read_bytes()
    code, payload = run(capsys, "sandbox", "disable")
    assert code != 0 and payload["_next_action"] == "forge sandbox diff --scope project"
    assert "cannot tell its part from yours" in payload["_hint"]["error"]
    assert path.read_bytes() == before
    code, payload = run(capsys, "sandbox", "diff")
    assert code == 0 and any("the person's own idea" in line for line in payload["diff"])
    assert payload["_next_action"] == "forge sandbox disable --scope project"


def test_a_value_the_person_changed_after_enable_is_theirs_and_stays(project, capsys):
    path = project / ".claude" / "settings.json"
    run(capsys, "sandbox", "enable")
    edited = json.loads(path.read_text())
    edited["sandbox"]["allowUnsandboxedCommands"] = True
    edited["env"] = {"KEEP": "1"}
    path.write_text(json.dumps(edited))
    assert run(capsys, "sandbox", "disable")[1]["outcome"] == "removed"
    assert json.loads(path.read_text()) == {"sandbox": {"allowUnsandboxedCommands": True},
                                            "env": {"KEEP": "1"}}
