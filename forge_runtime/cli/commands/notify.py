"""`forge notify test`: send a sample message through every channel a person configured.

The channels are those of `.forge/guard.yaml` (`notify:`) and of the person's own
`~/.config/forge/notify.yaml` (notify/config.py); each is tried once, at once, and the
answer of each is shown. A broken file is its Error and Fix, never a traceback.
"""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import os

from forge_runtime import hints
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.result import Result

WHERE = ("a person lists channels under notify: in .forge/guard.yaml, or under channels: "
         "in ~/.config/forge/notify.yaml")
# the figures the sample shows: a goal spent at its ceilings, as a real end would say
SAMPLE_GOAL = {"objective": "(a sample) the file done.txt exists", "turn_count": 20,
               "turn_ceiling": 20, "activation_count": 1, "token_count": 412_000,
               "picousd": 1_840_000_000_000, "usd_ceiling": 5 * 10**12}


def register(subparsers, common) -> None:
    parser = subparsers.add_parser("notify", parents=[common],
                                   help="how a goal's end reaches the person",
                                   description="Check the channels a goal's end is sent "
                                               "through.")
    actions = parser.add_subparsers(dest="notify_action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    text = "send a sample message through every configured channel, once each"
    action = actions.add_parser("test", parents=[common], help=text, description=text)
    action.set_defaults(handler=send_sample)


def send_sample(args) -> Result:
    from forge_runtime.notify import config
    from forge_runtime.project import find_project

    project = find_project()
    try:
        channels = config.load(project.root)
    except ForgeError as exc:
        return Result(exc.hint(), [f"settings    {config.user_file()}",
                                   f"            {config.guard_file(project.root)}"],
                      {"channels": [], "code": exc.code}, exc.exit_code)
    if not channels:
        return Result(hints.wait(WHERE, or_=["forge notify test"]),
                      ["no notification channel is configured"], {"channels": []})
    from forge_runtime.notify.message import SAMPLE, build
    from forge_runtime.notify.sender import deliver

    message = build({"end": SAMPLE, "goal": SAMPLE_GOAL, "project": str(project.root),
                     "why": "forge notify test sent this to check the channel",
                     "hint": hints.done("the channel works").render()})
    results = deliver(channels, message, attempts=1)
    _keep(project, results)
    lines = [f"{result['status']:<7} {result['channel']}"
             + (f": {result['error']}" if result.get("error") else "") for result in results]
    data = {"channels": results, "message": {"title": message.title, "text": message.text}}
    failed = [result for result in results if result["status"] != "sent"]
    if not failed:
        return Result(hints.done(f"all {len(results)} channel(s) took the sample"), lines,
                      data)
    hint = hints.error(f"{len(failed)} of {len(results)} channel(s) did not take the "
                       f"sample: {', '.join(result['channel'] for result in failed)}",
                       "forge notify test", "correct the channel in its file (shown above), "
                       "then run this again")
    return Result(hint, lines, data, EXIT_REFUSED)


def _keep(project, results: list[dict]) -> None:
    """The sample's outcome on the outbox, beside the goals' messages: a sample every
    channel took answers the failures before it (`forge doctor`)."""
    from forge_runtime.notify import outbox

    path = outbox.create(project.ledger_root, f"sample-{os.urandom(6).hex()}",
                         {"nonce": None, "end": "sample"})
    if path is not None:
        sent = all(result["status"] == outbox.SENT for result in results)
        outbox.finish(path, project.ledger_root, outbox.SENT if sent else outbox.FAILED,
                      results)
