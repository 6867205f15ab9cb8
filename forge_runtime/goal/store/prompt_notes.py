"""What a person's `/goal` prompt found, kept in the witness root until the Stop that
confirms it: the ceilings `.forge/guard.yaml` gave then (the first turn's, as
events.first_turn_limits reads them) and the plan's reading (where the goal's own use of
the week starts, goal/budget/plan.py).

The agent's first turn runs between the prompt and that Stop. The pending note under the
ledger root, and `.forge/guard.yaml` itself, are files a turn that got past the guard could
rewrite; the witness root, outside the work tree, is out of its reach (the kernel layer
too). So the activation holds the ceilings it reads at the Stop to these
(`activation.stricter`) and counts the goal's week from this reading: an edit made during
the first turn loosens nothing.
"""

from forge_runtime.errors import ForgeError


def _path(root: str, session: str) -> str | None:
    from forge_runtime.goal.store.layout import prompt_note_file
    from forge_runtime.goal.store.sessions import session_file

    if session_file(root, session, "") is None:  # not an id that names a file of its own
        return None
    return prompt_note_file(session)


def keep(root: str, session: str, limits: dict, reading: dict | None,
         prompt_id: str | None = None) -> None:
    """Note what this session's `/goal` prompt `prompt_id` found: `limits` (goal fields, as
    `activation.prospect` sets them) and the plan's `reading` (or None). A prompt noted
    already keeps its first note: noting it again (a host that notes at a later event, its
    pending note gone) would read a file the first turn may have changed."""
    from forge_runtime import fastjson, safeio

    path = _path(root, session)
    if path is None:
        return
    if prompt_id is not None:
        try:
            if (found(root, session) or {}).get("prompt_id") == prompt_id:
                return
        except ForgeError:
            pass  # not forge's: this note replaces it
    safeio.replace(path, fastjson.dumps({"limits": limits, "plan": reading,
                                         "prompt_id": prompt_id}).encode(),
                   durable=False, create_dirs=True)


def found(root: str, session: str) -> dict | None:
    """{"limits", "plan"} as `keep` noted them, None when no prompt of this session left a
    note; the tamper error when the note is not forge's."""
    from forge_runtime import fastjson, safeio
    from forge_runtime.goal.budget.plan import valid

    path = _path(root, session)
    if path is None:
        return None
    try:
        note = fastjson.loads(safeio.read_bytes(path))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        note = None
    if not isinstance(note, dict) or not isinstance(note.get("limits"), dict) or \
            (note.get("plan") is not None and not valid(note["plan"])):
        from forge_runtime.goal.store.ledger import tampered

        raise tampered(f"what forge noted of session {session}'s /goal prompt (its ceilings "
                       "and the plan's figures) was changed outside forge")
    return note
