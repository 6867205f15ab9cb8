"""The surfaces of one Claude Code build, read from its own JavaScript.

Each category has an anchor: a shape in the bundle that survives minification (an array
of the hook event names, an object literal holding `disableAllHooks` and `enabledPlugins`,
a schema keyed `hook_event_name: literal("Stop")`). An anchor that finds nothing raises
`AnchorLost`: a build forge cannot read is drift too, never a silent pass.

Categories (names as the contract classifies them, host_contract/claude_code*.py):
    hook event          every hook event the build knows
    hook input          `<Event>.<field>` of each event's input schema, `*.<field>` common
    tool                the build's tool names
    home path           folders and files under ~/.claude it owns or its sandbox protects
    project path        names it joins under a `.claude` folder
    frontmatter         skill, command and subagent frontmatter keys
    goal_status         each shape of the `goal_status` entries it writes
    goal reader         what its own goal reader ends on or skips
    settings            the settings schema's top-level keys
    statusline          the status line input's keys, cost fields and plan windows
    prompt input        what a prompt carries into its turn
    turn origin         the values it stamps as a prompt's `turnOrigin`
    host initiator      the values of a prompt's `hostInitiator`
    prompt source       the values of a prompt's `promptSource`
    origin kind         the kinds of a prompt's `origin`
    evaluator answer    the fields of the /goal evaluator's verdict
    prompt entry        the prompt-entry fields the contract reads, where the build has them
"""

from __future__ import annotations

import re

from forge_runtime.host_drift import js
from forge_runtime.host_drift.bun import sources


class AnchorLost(ValueError):
    """An anchor found nothing in the build: forge cannot tell what the host does."""


def _need(found, what: str):
    if not found:
        raise AnchorLost(f"anchor lost: {what}")
    return found


def _members_named(data: bytes, key: bytes, shape: re.Pattern | None = None):
    """Each position where `key` (say `b"maxTurns:"`) opens an object member: after `{` or
    `,`, and (when given) where `shape` matches. A plain search, then the check: a regular
    expression that starts with a character class would try every byte of 70 MB."""
    position = data.find(key)
    while position != -1:
        if data[position - 1:position] in (b"{", b",") and \
                (shape is None or shape.match(data, position)):
            yield position
        position = data.find(key, position + 1)


def _holding(data: bytes, key: bytes, wanted: tuple[str, ...],
             shape: re.Pattern | None = None) -> list[list[str]]:
    """The keys of every object literal with a member `key` (see `_members_named`) that
    holds all of `wanted`."""
    found = []
    for position in _members_named(data, key, shape):
        try:
            listed = js.keys(data, js.enclosing(data, position))
        except js.Unreadable:
            continue
        if all(name in listed for name in wanted):
            found.append(listed)
    return found


def hook_events(data: bytes, with_schemas: set[str]) -> set[str]:
    """The array of hook event names, and `with_schemas`: the events with an input schema
    (`hook_inputs`), some of which the array leaves out."""
    arrays = js.string_arrays(data, "PreToolUse", "PostToolUse", "UserPromptSubmit",
                              "SessionStart", "Stop")
    listed = {name for array in _need(arrays, "the array of hook event names")
              for name in array}
    return listed | with_schemas


_SCHEMA_EVENT = re.compile(rb'hook_event_name:[A-Za-z_$][\w$]*\("(\w+)"\)')


def hook_inputs(data: bytes) -> tuple[set[str], set[str]]:
    """(`<Event>.<field>` and `*.<field>` names, the events that have an input schema)."""
    found, events = set(), set()
    for match in _SCHEMA_EVENT.finditer(data):
        event = match.group(1).decode()
        try:
            fields = js.keys(data, js.enclosing(data, match.start()))
        except js.Unreadable as exc:
            raise AnchorLost(f"anchor lost: the input schema of {event} ({exc})") from None
        events.add(event)
        found |= {f"{event}.{field}" for field in fields if field != "hook_event_name"}
    _need(events, "the hook input schemas (hook_event_name: literal(...))")
    common = _need(_holding(data, b"session_id:", ("session_id", "transcript_path", "cwd"),
                            re.compile(rb"session_id:[\w$]+\(\),transcript_path:")),
                   "the hook input fields every event shares")
    return found | {f"*.{field}" for field in common[0]}, events


def tools(data: bytes) -> set[str]:
    arrays = js.string_arrays(data, "Agent", "Bash", "Edit", "Glob", "Grep", "Read",
                              "ScheduleWakeup", "Write")
    return set(max(_need(arrays, "the sorted array of tool names"), key=len))


def home_paths(data: bytes) -> set[str]:
    arrays = js.string_arrays(data, "shell-snapshots", "session-env", "plugins")
    return {name for array in _need(arrays, "the lists of ~/.claude folders (the host's "
                                            "own, and its sandbox's)") for name in array}


_CLAUDE_JOIN = re.compile(rb'"\.claude","([^"/\\]+)"')


def project_paths(data: bytes) -> set[str]:
    return {match.group(1).decode() for match in
            _need(list(_CLAUDE_JOIN.finditer(data)), 'joins under ".claude"')}


def frontmatter(data: bytes) -> set[str]:
    """The keys of skills', commands' and subagents' frontmatter: the host's list of a
    skill's declared fields, and its schemas of a command's and of a subagent's."""
    arrays = js.string_arrays(data, "allowed-tools", "disable-model-invocation",
                              "user-invocable", "when_to_use")
    commands = _holding(data, b'"disable-model-invocation":',
                        ("allowed-tools", "disable-model-invocation"))
    agents = _holding(data, b"maxTurns:", ("permissionMode", "mcpServers", "hooks"),
                      re.compile(rb"maxTurns:[\w$]+\("))
    _need(agents, "the subagent frontmatter schema")
    return {name for listed in _need(arrays, "the declared skill frontmatter fields") +
            commands + agents for name in listed}


_LITERALS = {b"!0": "true", b"!1": "false"}
_FLAGS = ("met", "failed", "sentinel")


def goal_status_shapes(data: bytes) -> set[str]:
    """Each `{type: "goal_status", ...}` the build writes, as its sorted keys; `met`,
    `failed` and `sentinel` with their value (`*` when computed)."""
    shapes = set()
    for match in re.finditer(rb'\{type:"goal_status",', data):
        parts = []
        for key, start, end in js.members(data, match.start()):
            if key in (None, "type"):
                continue
            literal = _LITERALS.get(data[start:end].strip(), "*")
            parts.append(f"{key}={literal}" if key in _FLAGS else key)
        shapes.add(",".join(sorted(parts)))
    return _need(shapes, 'the goal_status writers ({type:"goal_status", ...})')


_READER = re.compile(rb'if\(([\w$]+)\?\.type!=="attachment"\|\|\1\.attachment\.type!=='
                     rb'"goal_status"\)continue;if\(([^;]*?)\)return null')
_SKIP_TEST = re.compile(rb'"(\w+)"in ([\w$]+)&&\2\.\1===(!0|!1|"[^"]*"|[\w$]+)')


def goal_reader(data: bytes) -> set[str]:
    """What the host's own reader of the running goal ends on (`ends on <field>`) and which
    entries it skips (`skips <field>=<value>`)."""
    match = _need(_READER.search(data), "the host's reader of the running goal")
    entry, test = match.group(1), match.group(2)
    found = {f"ends on {field.decode()}" for field in
             re.findall(re.escape(entry) + rb"\.attachment\.(\w+)", test)}
    skips = re.findall(rb"([\w$]+)\(" + re.escape(entry) + rb"\)", test)
    if not skips:
        return _need(found, "what the goal reader ends on")
    module_start = data.rfind(b"\0", 0, match.start()) + 1
    module_end = data.find(b"\0", match.end())
    module = data[module_start:module_end if module_end != -1 else len(data)]
    for name in skips:
        body = _need(re.search(rb"function " + re.escape(name) + rb"\(([\w$]+)\)\{return"
                               rb"(.*?)\}", module),
                     "the test the goal reader skips entries by")
        for field, _, value in _SKIP_TEST.findall(body.group(2)):
            shown = _LITERALS.get(value) or value.decode().strip('"')
            if re.fullmatch(rb"[A-Za-z_$][\w$]*", value):
                constant = re.search(rb"[,;{ ]" + re.escape(value) + rb'="([^"]*)"', module)
                shown = _need(constant, f"the value of {value.decode()}").group(1).decode()
            found.add(f"skips {field.decode()}={shown}")
    return found


def settings(data: bytes) -> set[str]:
    schemas = _holding(data, b"disableAllHooks:",
                       ("$schema", "disableAllHooks", "enabledPlugins", "permissions",
                        "hooks", "sandbox"))
    return set(max(_need(schemas, "the settings schema"), key=len))


_WINDOW = re.compile(rb"[{,](\w+):\{used_percentage:")


def statusline(data: bytes) -> set[str]:
    positions = list(_members_named(data, b"output_style:{name:"))
    for position in _need(positions, "the status line's input (output_style: {name})"):
        try:
            start = js.enclosing(data, position)
            listed = js.keys(data, start)
        except js.Unreadable:
            continue
        if not {"cost", "workspace", "context_window"} <= set(listed):
            continue
        found = set(listed)
        for nested in ("cost", "workspace"):
            span = js.value(data, start, nested)
            if span is not None and data[span[0]:span[0] + 1] == b"{":
                found |= {f"{nested}.{key}" for key in js.keys(data, span[0])}
        function_start = data.rfind(b"function ", max(start - 20_000, 0), start)
        for window in _WINDOW.finditer(data, function_start, start):
            found.add(f"rate_limits.{window.group(1).decode()}")
            found |= {f"rate_limits.*.{key}"
                      for key in js.keys(data, window.end() - len(b"{used_percentage:"))}
        return found
    raise AnchorLost("anchor lost: the status line's input builder")


def prompt_input(data: bytes) -> set[str]:
    found = _holding(data, b"hostInitiator:",
                     ("hostInitiator", "wakeupSource", "scheduledTaskId", "isMeta",
                      "promptSource"))
    return set(max(_need(found, "the options a prompt carries into its turn"), key=len))


def turn_origins(data: bytes) -> set[str]:
    arrays = js.string_arrays(data, "human", "sdk", "scheduled", "task_notification",
                              "auto_continuation")
    return set(_need(arrays, "the array of turn origins")[0])


def host_initiators(data: bytes) -> set[str]:
    arrays = js.string_arrays(data, "user", "scheduled-task", "sleep-auto-resume")
    return set(_need(arrays, "the array of host initiators")[0])


_SOURCE_FUNCTION = re.compile(rb"function [\w$]+\(\{promptSource:[\w$]+,wakeupSource:"
                              rb"[\w$]+\}\)\{")


def prompt_sources(data: bytes) -> set[str]:
    match = _need(_SOURCE_FUNCTION.search(data), "the function that reads promptSource")
    body = data[match.end() - 1:js.closing(data, match.end() - 1)]
    return {value.decode() for value in re.findall(rb'case"(\w+)"', body)}


def origin_kinds(data: bytes) -> set[str]:
    described = _need(data.find(b'.describe("Provenance of a user-role message') + 1,
                      "the schema of a prompt's origin")
    start = js.enclosing(data, described - 4, b"[")
    return {kind.decode() for kind in
            re.findall(rb'kind:[\w$]+\("([\w-]+)"\)', data[start:js.closing(data, start)])}


def evaluator_answer(data: bytes) -> set[str]:
    schemas = _holding(data, b"impossible:", ("ok", "reason", "impossible"),
                       re.compile(rb"impossible:[\w$]+\(\)"))
    return set(_need(schemas, "the /goal evaluator's answer schema")[0])


def present(data: bytes, names) -> set[str]:
    """Those of `names` the build uses as a property (`.name`, `name:`)."""
    return {name for name in names
            if re.search(rb"[.,{]" + re.escape(name.encode()) + rb"[^\w$]", data)}


EXTRACTORS = {
    "tool": tools, "home path": home_paths, "project path": project_paths,
    "frontmatter": frontmatter,
    "goal_status": goal_status_shapes, "goal reader": goal_reader, "settings": settings,
    "statusline": statusline, "prompt input": prompt_input, "turn origin": turn_origins,
    "host initiator": host_initiators, "prompt source": prompt_sources,
    "origin kind": origin_kinds, "evaluator answer": evaluator_answer,
}
PRESENCE_ONLY = ("prompt entry",)


def surfaces(path, presence: dict[str, tuple[str, ...]]) -> tuple[str, dict[str, set[str]]]:
    """(the build's version, {category: names}) for the Claude Code binary at `path`;
    `presence` names, per presence-only category, the names to look for."""
    version, data = sources(path)
    inputs, with_schemas = hook_inputs(data)
    found = {"hook event": hook_events(data, with_schemas), "hook input": inputs}
    found.update((category, extract(data)) for category, extract in EXTRACTORS.items())
    for category in PRESENCE_ONLY:
        found[category] = present(data, presence.get(category, ()))
    return version, found
