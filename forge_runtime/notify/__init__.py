"""Telling the person how a goal ended, wherever they are.

    ends.py      what a hook or command ended or warned of, noted as the core records it
    trigger.py   after the reply: the outbox record, and the sender started, never waited for
    config.py    the channels: `.forge/guard.yaml` `notify:` and the person's own file
    sender.py    the detached process that sends, bounded and retried
    message.py   the message: objective, figures, why it ended, the way on
    channels.py  desktop, webhook (ntfy, JSON), a person's command
    outbox.py    what was sent and what failed (`forge goal status`, `forge doctor`)

Nothing is imported at package level: the core imports `ends` alone on its hot path.
"""
