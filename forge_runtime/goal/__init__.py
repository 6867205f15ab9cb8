"""The durable goal ledger: a person's `/goal` activates, every Stop charges one turn.

The package is layered (ARCHITECTURE.md, "The goal package"): a module imports its own
layer or one below, never one above. Modules by layer, top first, each with one job:

events: what each hook event means for the session's goal
    events/prompt          UserPromptSubmit: a `/goal` noted as pending; a bound session caught up
    events/stop            Stop: confirm a pending `/goal`, charge the turns, answer
    events/session_end     SessionEnd: the turns and verdicts the last Stop could not see
    events/tool_call       PreToolUse: a turn past its ceiling ends at its next tool call
    events/after_end       turns the host starts after a goal's end are charged or stopped
    events/confirm         the Stop that confirms a person's `/goal` and activates it
    events/catch_up        every turn a transcript shows charged with its tokens, then verdicts
    events/reading         a bound session's transcript read where forge left off
    events/first_turn      what a pending `/goal` holds its first turn to
    events/held_prompt     the prompt after a usage limit, held once
    events/replies         the stop messages and hints the handlers share
    events/handed_in       what the handlers are handed: the final gates, the sandbox posture

views: what a person, the model or the status line is shown
    views/status           read-only views for `forge goal ...` and `forge ledger verify`
    views/gauge            the budget at a glance, for the status line and the CLI
    views/forecast         when the budget runs out at the current pace
    views/tranche          the record that started the current tranche, and its pace
    views/wrapup           the wrap-up turn: the model is told its last turn is next
    views/checkpoint       where the work stands, for the messages that stop a goal
    views/report           one goal's story from its verified records
    views/report_html      the same story as a page
    views/report_team      every goal of a team at a glance, with totals
    views/report_team_html the team report as a page

rules: the promises forge keeps about a goal
    rules/activation       what a person's `/goal <objective>` does to the ledger
    rules/activator        who started a tranche, where and on which host
    rules/charging         every turn charged once; the ceiling; the stuck warning
    rules/end_notes        the ends and refusals this process noted for the person's message
    rules/consistency      the state file checked against the ledger
    rules/qualification    what must hold before a goal may run at all
    rules/adoption         `forge goal adopt`: a moved or copied project keeps its goals

sync: a goal across clones and places
    sync/remote            the ledger published as `refs/forge/goals/<nonce>`
    sync/remote_state      what this clone knows of a goal's ledger on the remote
    sync/publisher         publishing without making a charge wait on the network
    sync/team_goals        every published goal, each chain verified, for the team report
    sync/witness           each goal's head noted outside the work tree
    sync/witness_files     the witness's own files: small JSON objects read and replaced whole
    sync/ledger_location   where a work tree's ledger is, as the witness vouches

hosts: what forge reads from Claude Code and Codex
    hosts/host_adapter     what the core may ask of the host that sent an event
    hosts/transcript       Claude Code's transcript: a person's `/goal`, verdicts, turns
    hosts/codex_transcript the same for Codex CLI's rollout files
    hosts/native_goal      is the host's native goal running? its verdict, by exact shape
    hosts/host_prompts     prompts the host sends a session on its own
    hosts/nesting          was this session started by an agent? then its `/goal` is nobody's
    hosts/codex_plan       the plan's windows as Codex reports them
    hosts/plan_readings    where the plan's readings are kept and found
    hosts/plan_freshness   a tool call checked against the figures of the answer that asked
    hosts/unreported_windows  plan windows a goal watches that the host does not report

store: what forge keeps on disk
    store/layout           every path under the ledger root and the witness root, named once
    store/in_progress      whether a ledger holds a goal in progress (the guard's question)
    store/ledger           a goal's chain: append, the O(1) head check, full verification
    store/record_file      one write-once, hash-chained record file
    store/lock             the per-goal writers' lock
    store/merge            two clones' histories of one goal, joined
    store/objective        an objective's identity: normalised, hashed, read from `/goal`
    store/objective_index  which goal each objective is, by its hash
    store/sessions         which session is bound to which goal; pending activations
    store/state_file       `.forge/local/state.md`: the agent's working copy of its goal
    store/unwritable       a goal file that cannot be written: which condition, what fixes it
    store/killed_stops     Stop hooks killed by someone else's signal
    store/prompt_notes     what a `/goal` prompt found, kept until the Stop that confirms it

budget: arithmetic of a goal's budget
    budget/ceilings        which of a tranche's ceilings a goal has reached
    budget/plan            the plan's 5-hour and weekly windows, and a goal's share of them
    budget/usage           the tokens a goal's turns spent
    budget/pricing         dollars of a goal's tokens, priced with its sealed table
    budget/price_table     the price table the hooks use, compiled from `genai-prices`
"""
