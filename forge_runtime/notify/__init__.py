"""Telling the person how a goal ended, wherever they are.

    trigger.py   after the reply: the outbox record, and the sender started, never waited for
    config.py    the channels: `.forge/guard.yaml` `notify:` and the person's own file
    sender.py    the detached process that sends, bounded and retried
    message.py   the message: objective, figures, why it ended, the way on
    channels.py  desktop, webhook (ntfy, JSON), a person's command
    outbox.py    what was sent and what failed (`forge goal status`, `forge doctor`)

What a hook or command ended is noted in the goal (goal/rules/end_notes.py), which never
imports notify/; nothing is imported at package level.
"""
