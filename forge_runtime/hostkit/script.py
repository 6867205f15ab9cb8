"""Model scripts: rules that decide from a request's content what the scripted model answers.

A script is YAML or JSON checked against `script.schema.json`:

    name: write a file, then finish
    rules:
      - name: goal evaluator says met
        when: {goal_evaluator: true}
        reply: {verdict: {ok: true, reason: "done.txt exists"}}
      - name: finish after the tool ran
        when: {last_is_tool_result: true}
        reply: {text: "Created done.txt."}
      - name: first turn writes the file
        times: 1
        reply:
          tool_calls:
            - {name: Write, input: {file_path: "{cwd}/done.txt", content: "done\\n"}}

The first rule whose `when` holds (every condition in it) and whose `times` is not used up
answers. Rules look at content, not at request numbers, because the host's request order is
its own business (retries, the /goal evaluator, title requests) and changes between versions.

Placeholders: `{cwd}` in any string of a reply becomes the session's working directory (the
runner sets it); other `{...}` text is left alone, so JSON in a reply needs no escaping.

The /goal evaluator (the host's stop-condition check) is a different model slot: a rule
answers it only when it says `goal_evaluator: true`, so an ordinary rule can never hand the
evaluator a text that is not a verdict.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

EVALUATOR_SYSTEM_MARK = "You are evaluating a stop-condition hook"
EVALUATOR_USER_MARK = "has the following stopping condition been satisfied"

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class ScriptError(ValueError):
    """A script that does not follow the format; the message names the place and the rule."""


@cache
def schema() -> dict:
    """The JSON Schema every script is checked against."""
    text = resources.files("forge_runtime.hostkit").joinpath("script.schema.json").read_text(
        encoding="utf-8")
    return json.loads(text)


def text_of(content: object) -> str:
    """All readable text of a message's content: strings, text blocks, tool results, inputs.

    Content is a string or a list of blocks; a tool_result's own content is again a string
    or a list, so this recurses.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(block) for block in content)
    if isinstance(content, dict):
        if "text" in content:
            return text_of(content["text"])
        if content.get("type") == "tool_result":
            return text_of(content.get("content", ""))
        if content.get("type") == "tool_use":
            return json.dumps(content.get("input", {}), ensure_ascii=False)
    return ""


@dataclass
class Request:
    """One Messages API request as the rules see it. Unknown fields are kept and ignored."""

    body: dict

    @cached_property
    def messages(self) -> list[dict]:
        return [m for m in self.body.get("messages") or [] if isinstance(m, dict)]

    @cached_property
    def system_text(self) -> str:
        return text_of(self.body.get("system") or "")

    @cached_property
    def tool_names(self) -> set[str]:
        return {t.get("name") for t in self.body.get("tools") or [] if isinstance(t, dict)}

    @cached_property
    def conversation_text(self) -> str:
        return "\n".join(text_of(m.get("content")) for m in self.messages)

    @cached_property
    def last_tool_result(self) -> dict | None:
        """The last tool_result block, when the last message answers a tool call.

        The host appends `role: system` messages (date, environment) after the real last
        turn, so those are skipped when looking for the last message.
        """
        turns = [m for m in self.messages if m.get("role") != "system"]
        if not turns:
            return None
        content = turns[-1].get("content")
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        return results[-1] if results else None

    @cached_property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return text_of(message.get("content"))
        return ""

    @cached_property
    def is_goal_evaluator(self) -> bool:
        return (EVALUATOR_SYSTEM_MARK in self.system_text
                or EVALUATOR_USER_MARK in self.last_user_text)


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _holds(condition: str, expected: object, request: Request) -> bool:
    """Whether one `when` condition holds for the request."""
    if condition == "goal_evaluator":
        return request.is_goal_evaluator == expected
    if condition == "last_is_tool_result":
        return (request.last_tool_result is not None) == expected
    if condition == "last_tool_result_is_error":
        result = request.last_tool_result
        return result is not None and bool(result.get("is_error")) == expected
    if condition == "last_tool_result_contains":
        result = request.last_tool_result
        text = text_of(result.get("content", "")) if result else ""
        return result is not None and all(s in text for s in _as_list(expected))
    if condition == "last_user_text_contains":
        return all(s in request.last_user_text for s in _as_list(expected))
    if condition == "conversation_contains":
        return all(s in request.conversation_text for s in _as_list(expected))
    if condition == "conversation_lacks":
        return not any(s in request.conversation_text for s in _as_list(expected))
    if condition == "system_contains":
        return all(s in request.system_text for s in _as_list(expected))
    if condition == "tools_present":
        return set(_as_list(expected)) <= request.tool_names
    if condition == "tools_absent":
        return not set(_as_list(expected)) & request.tool_names
    raise ScriptError(f"unknown condition {condition!r}")  # the schema keeps this unreachable


@dataclass
class Rule:
    """A condition on a request, an answer, and how many requests it may answer."""

    reply: dict
    when: dict = field(default_factory=dict)
    name: str = ""
    times: int | None = None
    used: int = 0

    def matches(self, request: Request) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        if "goal_evaluator" not in self.when and request.is_goal_evaluator:
            return False
        return all(_holds(name, value, request) for name, value in self.when.items())


def reply_kind(reply: dict) -> str:
    """Which kind of answer a reply is (text_or_tools, verdict, error, drop_connection or hang);
    raises ScriptError when it mixes kinds."""
    kinds = {"verdict", "error", "drop_connection", "hang"} & reply.keys()
    if reply.keys() & {"text", "tool_calls"}:
        kinds.add("text_or_tools")
    if len(kinds) != 1:
        raise ScriptError("a reply is exactly one of: text and/or tool_calls, verdict, error, "
                          f"drop_connection, hang; got {sorted(reply)}")
    return kinds.pop()


def expand(value: object, variables: dict[str, str]) -> object:
    """`value` with `{name}` replaced in every string, for names in `variables` only."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [expand(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: expand(item, variables) for key, item in value.items()}
    return value


NO_RULE_REPLY = {"text": "[forge host kit] no script rule matched this request."}


class Script:
    """Validated rules plus their counters; `answer` is safe to call from many threads."""

    def __init__(self, data: dict, source: str = "<script>") -> None:
        _validate(data, source)
        self.source = source
        self.name = data.get("name", "")
        self.rules = [Rule(reply=r["reply"], when=r.get("when", {}), name=r.get("name", ""),
                           times=r.get("times")) for r in data["rules"]]
        self.fallback = data.get("fallback", NO_RULE_REPLY)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a script from a .yaml/.yml or .json file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptError(f"{path}: cannot read the script ({exc.strerror})") from None
        return cls.parse(text, source=str(path))

    @classmethod
    def parse(cls, text: str, source: str = "<script>") -> Script:
        """Read a script from YAML or JSON text (JSON is YAML, so one parser reads both)."""
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScriptError(f"{source}: not valid YAML or JSON: {exc}") from None
        return cls(data, source)

    def reset(self) -> None:
        """Every rule's `times` counts from zero again: a new session of the same machine
        meets the same model."""
        with self._lock:
            for rule in self.rules:
                rule.used = 0

    def answer(self, request: Request) -> tuple[Rule | None, dict]:
        """The rule that answers `request` (None: no rule did) and its reply, counting the use."""
        with self._lock:
            for rule in self.rules:
                if rule.matches(request):
                    rule.used += 1
                    return rule, rule.reply
        return None, self.fallback


def _validate(data: object, source: str) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise ScriptError(f"{source}: script{where}: {first.message}{more}")
    replies = [(f"rules[{index}].reply", rule["reply"])
               for index, rule in enumerate(data["rules"])]
    if "fallback" in data:
        replies.append(("fallback", data["fallback"]))
    for where, reply in replies:
        try:
            reply_kind(reply)
        except ScriptError as exc:
            raise ScriptError(f"{source}: script.{where}: {exc}") from None
