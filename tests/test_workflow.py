"""The workflow runtime's wiring: when, gate, reduce, resume and retries, with scripted sessions;
and the clarifier session's options and guard."""

from __future__ import annotations

import asyncio

import pytest

from forge_runtime.clarify.brief import Brief
from forge_runtime.clarify.channel import HumanChannel
from forge_runtime.clarify.store import freeze
from forge_runtime.workflow import Step, StepFailed, Workbench, Workflow
from forge_runtime.workflow.clarify import (
    CLARIFIER_TOOLS,
    CONTINUE_PROMPT,
    clarifier_options,
    clarify_step,
    interrupted_session,
    resume_path,
)

COMPLETE = ("## Goal\nExport CSV.\n## Acceptance criteria\n- report.csv exists\n"
            "## Boundaries\n- no PDF\n## Unknowns and assumptions\n- readers: assumed finance\n")
NO_BOUNDARIES = COMPLETE.replace("## Boundaries\n- no PDF\n", "")


class Scripted:
    """A session that answers from a list and keeps what it was sent."""

    made: list[Scripted] = []

    def __init__(self, replies, resume=None):
        self.replies = list(replies)
        self.sent: list[str] = []
        self.session_id = resume
        Scripted.made.append(self)

    async def send(self, prompt: str) -> str:
        self.sent.append(prompt)
        return self.replies.pop(0)


@pytest.fixture(autouse=True)
def fresh():
    Scripted.made = []


def bench_in(tmp_path) -> Workbench:
    return Workbench(tmp_path / "project")


def run(workflow: Workflow, bench: Workbench):
    return asyncio.run(workflow.run(bench))


def clarify(replies, **options) -> Step:
    return clarify_step(HumanChannel(), prompt="export reports",
                        session=lambda bench, resume: Scripted(replies, resume), **options)


def test_a_complete_answer_is_frozen_and_only_its_prompt_block_is_handed_on(tmp_path):
    bench = bench_in(tmp_path)
    seen = {}

    def work_prompt(b: Workbench) -> str:
        seen["context"] = dict(b.context)
        return "Work from this brief:\n" + b.context["clarify"]
    work = Step("work", work_prompt, lambda b: Scripted(["worked"]))
    ran = run(Workflow([clarify([f"Some chatter.\n{COMPLETE}"]), work]), bench)

    assert [(r.name, r.skipped, r.follow_ups) for r in ran] == [("clarify", False, 0),
                                                                 ("work", False, 0)]
    frozen = Brief.load(bench.brief_path)
    assert frozen == Brief.parse(COMPLETE)
    assert seen["context"] == {"clarify": frozen.prompt_block()}
    clarifier, worker = Scripted.made
    assert clarifier.sent == ["Clarify this request, then answer with the brief:\n\n"
                              "export reports"]
    assert worker is not clarifier and worker.sent == ["Work from this brief:\n"
                                                       + frozen.prompt_block()]
    assert "chatter" not in worker.sent[0]


def test_an_incomplete_brief_goes_back_to_the_same_session_for_the_missing_sections(tmp_path):
    bench = bench_in(tmp_path)
    ran = run(Workflow([clarify([NO_BOUNDARIES, NO_BOUNDARIES, COMPLETE])]), bench)
    (session,) = Scripted.made
    assert ran[0].follow_ups == 2 and len(session.sent) == 3
    for follow_up in session.sent[1:]:
        assert follow_up.startswith("Your brief lacks: Boundaries.")
        assert "never again about what is already answered" in follow_up
        assert "export reports" not in follow_up
    assert Brief.load(bench.brief_path).complete


def test_after_the_last_retry_the_step_fails_and_nothing_is_frozen(tmp_path):
    bench = bench_in(tmp_path)
    with pytest.raises(StepFailed) as failed:
        run(Workflow([clarify([NO_BOUNDARIES] * 3, retries=1)]), bench)
    assert "Boundaries" in failed.value.message
    assert failed.value.fix == "forge clarify 'export reports' --new"
    assert not bench.brief_path.exists()


def test_a_frozen_brief_skips_the_step_but_still_feeds_the_context(tmp_path):
    bench = bench_in(tmp_path)
    freeze(Brief.parse(COMPLETE), bench.brief_path)
    ran = run(Workflow([clarify([])]), bench)
    assert ran[0].skipped and Scripted.made == []
    assert bench.context["clarify"] == Brief.parse(COMPLETE).prompt_block()


def test_new_clarifies_again_and_keeps_the_old_brief(tmp_path):
    bench = bench_in(tmp_path)
    freeze(Brief.parse(COMPLETE), bench.brief_path)
    run(Workflow([clarify([COMPLETE.replace("Export CSV.", "Export TSV.")], new=True)]), bench)
    assert Brief.load(bench.brief_path)["Goal"] == "Export TSV."
    assert Brief.load(bench.notes_dir / "brief.1.md")["Goal"] == "Export CSV."


def test_an_interrupted_clarify_resumes_its_session_with_a_continuation(tmp_path):
    bench = bench_in(tmp_path)
    resume_path(bench).parent.mkdir(parents=True)
    resume_path(bench).write_text('{"session_id": "sess-1"}\n')
    assert interrupted_session(bench) == "sess-1"
    run(Workflow([clarify([COMPLETE])]), bench)
    (session,) = Scripted.made
    assert session.session_id == "sess-1" and session.sent == [CONTINUE_PROMPT]
    assert "export reports" not in session.sent[0]
    assert not resume_path(bench).exists()


def test_when_false_without_a_hand_on_leaves_the_context_alone(tmp_path):
    bench = bench_in(tmp_path)
    step = Step("never", lambda b: "x", lambda b: Scripted([]), when=lambda b: False)
    assert run(Workflow([step]), bench)[0].skipped and bench.context == {}


def test_reduce_decides_what_the_next_step_sees(tmp_path):
    bench = bench_in(tmp_path)
    step = Step("count", lambda b: "x", lambda b: Scripted(["a b c"]),
                reduce=lambda b, reply: str(len(reply.split())))
    run(Workflow([step]), bench)
    assert bench.context == {"count": "3"}


def test_the_clarifier_session_may_read_and_ask_and_is_guarded(tmp_path):
    from guard_support import event, make_project

    project = make_project(tmp_path / "proj")
    options = clarifier_options(HumanChannel(), Workbench(project))
    assert options.permission_mode == "default"
    assert options.allowed_tools == ["Read", "Grep", "Glob", "mcp__human__ask"]
    assert list(options.mcp_servers) == ["human"]
    assert options.cwd == str(project)
    (matcher,) = options.hooks["PreToolUse"]
    guard = matcher.hooks[0]

    def decide(tool, tool_input):
        payload = event(tool, tool_input, project)
        return asyncio.run(guard(payload, None, None))
    for tool in ("Write", "Edit", "Bash", "mcp__human__inbox", "Agent", "WebFetch"):
        denied = decide(tool, {"file_path": "brief.md", "command": "ls", "url": "x"})
        reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
        assert f"the clarifier role may not use {tool}" in reason, tool
    for tool in CLARIFIER_TOOLS:
        assert decide(tool, {"file_path": "README.md", "question": "q"}) == {}, tool
