"""Hand what a hook or command ended (goal/rules/end_notes.py) to the sender, once its reply is out.

Called by the surface that answered (hooks/dispatch.py, cli/main.py) only when something
was noted. For each note, when the project or the person names a channel at all
(`config.present`: a stat and a read of guard.yaml's bytes), it writes the outbox record
(exclusive by what it tells: a refusal repeated at every Stop is told once) and starts the
sender with the job; it never waits for it, never reads the channels itself, and never
raises: a notification is never a reason for a hook to fail.
"""

from __future__ import annotations

import os

from forge_runtime.goal.rules import end_notes


def after_event(project_root, event: dict | None, reply: dict | None) -> list[int]:
    """Send what this process noted; the senders' pids (tests wait for them)."""
    notes = end_notes.take()
    if not notes:
        return []
    try:
        if not _configured(project_root):
            return []
        replies = _texts(reply)
        session = (event or {}).get("session_id")
    except Exception:  # noqa: BLE001 - the end stands whatever the message does
        return []
    started = []
    for note in notes:
        try:
            job = _job(note, session)
            pid = None if job is None else _start(project_root, job, replies)
        except Exception:  # noqa: BLE001 - one note that cannot be told spoils no other
            continue
        if pid is not None:
            started.append(pid)
    return started


def _configured(project_root) -> bool:
    from forge_runtime.notify import config

    return config.present(project_root)


def _start(project_root, job: dict, replies: list[str]) -> int | None:
    from forge_runtime.notify import outbox, sender

    path = outbox.create(job["ledger_root"], job["key"],
                         {"nonce": job.get("nonce"), "end": job["end"]}) or \
        outbox.reopen(job["ledger_root"], job["key"])
    if path is None:  # told already
        return None
    return sender.spawn({**job, "project": os.fspath(project_root), "outbox": path,
                         "replies": replies})


def _job(note: dict, session: str | None) -> dict | None:
    """What the sender needs of a note: the end, its goal, why, the key that tells it once;
    None for what is told elsewhere."""
    kind, root = note["kind"], note["ledger_root"]
    if kind == end_notes.END:
        record = note["record"]
        goal = record["goal"]
        if record["kind"] == "exhaust":
            end = "usage limit" if record.get("ceiling") == "usage_limit" else "exhausted"
        else:
            end = goal.get("ended") or ("met" if record["kind"] == "complete" else "cleared")
        if end == "wedged":  # told when forge ended it (end_notes.wedged), not when recorded
            return None
        return {"kind": kind, "ledger_root": root, "key": f"{goal['nonce']}-{record['seq']}",
                "nonce": goal["nonce"], "end": end, "goal": goal,
                "ceiling": record.get("ceiling"), "why": record.get("reason")}
    if kind == end_notes.STUCK:  # once a tranche: the warning repeats every 5 turns in session
        goal = note["goal"]
        return {"kind": kind, "ledger_root": root, "nonce": goal["nonce"], "end": "stuck",
                "key": f"{goal['nonce']}-stuck-{goal.get('activation_count')}", "goal": goal,
                "why": note["why"]}
    if kind == end_notes.WEDGED:
        return {"kind": kind, "ledger_root": root, "nonce": note["nonce"], "end": "wedged",
                "key": f"{note['nonce']}-wedged-{note.get('seq')}", "goal": note.get("goal"),
                "why": note["why"], "hint": None}
    return _refusal_job(note, note.get("session") or session)


def _refusal_job(note: dict, session: str | None) -> dict:
    """A tampered or moved ledger: the session's goal, as its binding last had it, told
    once per goal, refusal and ledger head (a refusal after a later change is told again)."""
    from forge_runtime.goal.store import sessions

    root = note["ledger_root"]
    binding = sessions.read_binding(root, session) if session else None
    nonce = (binding or {}).get("nonce")
    if nonce is None and session:  # the binding is gone: the witness's note of it
        from forge_runtime.goal.store.layout import session_marker
        from forge_runtime.goal.sync.witness_files import read

        nonce = (read(session_marker(session)) or {}).get("nonce")
    head = _pointer(root, nonce) if isinstance(nonce, str) else None
    end = "moved" if note["code"].endswith("MOVED") else "tampered"
    goal = (binding or {}).get("goal")
    if goal is None and session:  # a /goal refused at its first Stop: its objective
        pending = sessions.read_pending(root, session) or {}
        goal = {"objective": pending["objective"]} if pending.get("objective") else None
    return {"kind": note["kind"], "ledger_root": root, "nonce": nonce, "end": end,
            "key": f"{nonce or session}-{end}-{head}", "goal": goal,
            "why": note["why"], "hint": note["hint"]}


def _pointer(root: str, nonce: str) -> int | None:
    from forge_runtime.goal.store.ledger import Ledger

    return Ledger(root, nonce).pointer()


def _texts(reply: dict | None) -> list[str]:
    """Every text of a hook's reply (a Stop's stopReason, a block's reason, a message,
    model context): the sender takes the way on from the one naming the end's code."""
    found: list[str] = []

    def walk(value) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(reply or {})
    return found
