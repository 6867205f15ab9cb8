"""The one table of artifact operations, from which the CLI and the MCP server are built.

Each `Operation` names its parameters, the core function that runs it and the sentence
both surfaces show as its help. `forge <name> ...` (argparse) and the MCP tool `<name>`
(its input schema) are generated from the same rows, so neither surface can have an
operation or a parameter the other lacks, and both call `invoke`, which runs the core
function and renders its hint for the surface that asked:

    CLI:  Next: forge activate PRD-001
    MCP:  Next: activate {"id": "PRD-001"}

Core functions are named by import path and imported on use, so building the parser
costs nothing for commands that do not run.
"""

from __future__ import annotations

import importlib
import json
import shlex
from dataclasses import dataclass

from forge_runtime.artifacts.model import (
    CONGRUENCE,
    EVIDENCE_TYPES,
    KINDS,
    RELATIONS,
    STATUSES,
    VERDICTS,
)
from forge_runtime.result import Result
from forge_runtime.steps import Call, OpError, Reply, call

CLI, MCP = "cli", "mcp"

_JSON_TYPES = {"str": "string", "int": "integer", "bool": "boolean", "list": "array"}
_A_TYPE = {"str": "a string", "int": "an integer", "bool": "a boolean", "list": "an array"}


@dataclass(frozen=True)
class Param:
    """One input: positional on the CLI when `positional`, else `--name-with-dashes`."""

    name: str
    type: str
    help: str
    positional: bool = False
    required: bool = False
    choices: tuple[str, ...] = ()
    default: object = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def schema(self) -> dict:
        shown: dict = {"type": _JSON_TYPES[self.type], "description": self.help}
        if self.type == "list":
            shown["items"] = {"type": "string"}
        if self.choices:
            shown["enum"] = list(self.choices)
        if self.default is not None:
            shown["default"] = self.default
        return shown


@dataclass(frozen=True)
class Operation:
    name: str
    help: str
    target: str          # "module:function" of the core function
    params: tuple[Param, ...] = ()
    writes: bool = False

    def function(self):
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)

    def input_schema(self) -> dict:
        return {"type": "object",
                "properties": {param.name: param.schema() for param in self.params},
                "required": [param.name for param in self.params if param.required],
                "additionalProperties": False}


def _id(help_text: str = "the artifact's ID, e.g. PRD-001") -> Param:
    return Param("id", "str", help_text, positional=True, required=True)


_REMOTE = Param("remote", "str", "git remote to share claims through (default: the project "
                "setting claims.remote in .forge/config.yaml, else claims on this disk)")
_AUTHORING = "forge_runtime.artifacts.authoring"
_READING = "forge_runtime.artifacts.reading"
_TRANSITIONS = "forge_runtime.artifacts.transitions"
_WORK = "forge_runtime.artifacts.work"

OPERATIONS: tuple[Operation, ...] = (
    Operation("route", "suggest the kind and depth of artifact a task needs, and its first "
              "step", f"{_AUTHORING}:route",
              (Param("task", "str", "the task, in words", positional=True, required=True),)),
    Operation("new", "create an artifact (KIND-NNN) from its kind's template",
              f"{_AUTHORING}:new", (
                  Param("kind", "str", "the kind of artifact", positional=True, required=True,
                        choices=KINDS),
                  Param("title", "str", "its title", positional=True),
                  Param("from_brief", "bool", "a prd whose sections come from the frozen "
                        "brief (.forge/notes/brief.md)"),
                  Param("body", "str", "the Markdown body instead of the template"),
                  Param("affected_files", "list", "files or directories the work touches"),
                  Param("valid_until", "str", "date the artifact stops holding (YYYY-MM-DD; "
                        "evidence: 90 days by default)"),
                  Param("verdict", "str", "evidence: what it says", choices=VERDICTS),
                  Param("congruence", "str", "evidence: how closely it matches the claim, "
                        "CL0 (not) to CL3 (exactly)", choices=CONGRUENCE),
                  Param("type", "str", "evidence: how it was obtained", choices=EVIDENCE_TYPES),
              ), writes=True),
    Operation("get", "show one artifact: status (stale computed now), links, score, body",
              f"{_READING}:get", (_id(),)),
    Operation("list", "list artifacts (JSON: a bare array; the hint goes to stderr)",
              f"{_READING}:list_", (
                  Param("kind", "str", "only this kind", choices=KINDS),
                  Param("status", "str", "only this status", choices=STATUSES))),
    Operation("tree", "show artifacts as a tree of links (JSON: a bare array)",
              f"{_READING}:tree"),
    Operation("link", "link one artifact to another", f"{_AUTHORING}:link", (
        Param("source", "str", "the artifact the link starts from", positional=True,
              required=True),
        Param("target", "str", "the artifact it points to", positional=True, required=True),
        Param("relation", "str", "what the link means", choices=RELATIONS,
              default="informs")), writes=True),
    Operation("unlink", "remove links between two artifacts", f"{_AUTHORING}:unlink", (
        Param("source", "str", "the artifact the link starts from", positional=True,
              required=True),
        Param("target", "str", "the artifact it points to", positional=True, required=True),
        Param("relation", "str", "only links with this relation", choices=RELATIONS)),
              writes=True),
    Operation("validate", "check artifacts against their kind's MUST and SHOULD rules",
              f"{_READING}:validate", (
                  Param("id", "str", "the artifact to check", positional=True),
                  Param("all", "bool", "check every artifact"),
                  Param("ci", "bool", "exit non-zero when any MUST rule fails"))),
    Operation("score", "compute R_eff, the weakest link of an artifact's evidence",
              f"{_READING}:score", (_id(),)),
    Operation("activate", "make a draft active (needs validate PASS; prd, rfc, adr also "
              "R_eff > 0)", f"{_TRANSITIONS}:activate", (
                  _id(), Param("force", "bool", "activate anyway; recorded in the artifact")),
              writes=True),
    Operation("supersede", "mark an active artifact superseded by another",
              f"{_TRANSITIONS}:supersede", (
                  _id(), Param("by", "str", "the artifact that replaces it", required=True)),
              writes=True),
    Operation("deprecate", "retire an active or stale artifact", f"{_TRANSITIONS}:deprecate",
              (_id(), Param("reason", "str", "why, kept in its history")), writes=True),
    Operation("renew", "make a stale artifact active again with a new valid_until",
              f"{_TRANSITIONS}:renew", (
                  _id(), Param("valid_until", "str", "the new date (YYYY-MM-DD)"),
                  Param("days", "int", "or: valid for this many days from today (default 90)")),
              writes=True),
    Operation("claim", "claim an artifact for one agent; claiming again renews",
              f"{_WORK}:claim", (
                  _id(), Param("agent", "str", "the agent's name, e.g. worker-1",
                               required=True),
                  Param("ttl_minutes", "int", "how long the claim lasts, 1..1440", default=30),
                  _REMOTE), writes=True),
    Operation("release", "release a claim", f"{_WORK}:release", (
        _id(), Param("agent", "str", "the agent releasing its own claim"),
        Param("force", "bool", "release a claim another agent holds"), _REMOTE), writes=True),
    Operation("claims", "list claims, live and expired", f"{_WORK}:claims", (_REMOTE,)),
    Operation("dispatch", "split ready drafts across agents with no overlapping files",
              f"{_WORK}:dispatch", (
                  Param("agents", "int", "how many agents work in parallel", required=True),
                  _REMOTE)),
)

BY_NAME: dict[str, Operation] = {operation.name: operation for operation in OPERATIONS}


# -- rendering a step for a surface -------------------------------------------------------

def cli_command(step: Call) -> str:
    """`forge activate PRD-001 --force`: the CLI words of a call, quoted for a shell.

    A positional value that starts with `-` (a title like `--verbose flag`) would read as
    an option, so then the options come first and `--` ends them.
    """
    operation = BY_NAME[step.op]
    positional: list[str] = []
    options: list[str] = []
    for param in operation.params:
        if param.name not in step.args:
            continue
        value = step.args[param.name]
        if param.positional:
            positional.append(shlex.quote(str(value)))
        elif param.type == "bool":
            options += [param.flag] if value else []
        elif param.type == "list":
            options += [param.flag, *(shlex.quote(str(item)) for item in value)]
        else:
            options += [param.flag, shlex.quote(str(value))]
    if any(word.lstrip("'").startswith("-") for word in positional):
        return " ".join(["forge", step.op, *options, "--", *positional])
    return " ".join(["forge", step.op, *positional, *options])


def mcp_call(step: Call) -> str:
    """`activate {"id": "PRD-001"}`: the MCP tool and its arguments."""
    order = [param.name for param in BY_NAME[step.op].params]
    args = {name: step.args[name] for name in order if name in step.args}
    return f"{step.op} {json.dumps(args, ensure_ascii=False)}"


RENDERERS = {CLI: cli_command, MCP: mcp_call}


def parse_mcp_call(text: str) -> Call:
    """The call an MCP hint names (for the parity test and the audit)."""
    name, _, args = text.partition(" ")
    return Call(name, json.loads(args) if args else {})


# -- running one operation ----------------------------------------------------------------

def _usage_error(operation: Operation, why: str, given: dict) -> OpError:
    """The refusal of malformed arguments; its Fix keeps what was given well and fills in an
    example for the rest."""
    python = {"str": str, "int": int, "bool": bool, "list": list}
    required = {param.name: given[param.name] if isinstance(given.get(param.name),
                                                            python[param.type])
                and (not param.choices or given[param.name] in param.choices)
                else _example(param) for param in operation.params if param.required}
    return OpError(f"{operation.name}: {why}", call(operation.name, **required),
                   code="FORGE_BAD_ARGUMENTS")


def _example(param: Param):
    if param.choices:
        return param.choices[0]
    return {"int": 2, "bool": True, "list": ["src"]}.get(param.type, {
        "id": "PRD-001", "agent": "worker-1", "task": "add a --verbose flag"}.get(
            param.name, "value"))


def check_arguments(operation: Operation, arguments: dict) -> dict:
    """Arguments as the core function takes them: known names, the right JSON types,
    allowed choices, defaults filled in. The CLI's parser checks the same before this."""
    unknown = sorted(set(arguments) - {param.name for param in operation.params})
    if unknown:
        raise _usage_error(operation, f"unknown argument(s) {', '.join(unknown)}",
                           arguments)
    checked = {}
    for param in operation.params:
        value = arguments.get(param.name)
        if value is None:
            if param.required:
                raise _usage_error(operation, f"{param.name} is required", arguments)
            if param.default is not None:
                checked[param.name] = param.default
            continue
        python = {"str": str, "int": int, "bool": bool, "list": list}[param.type]
        if not isinstance(value, python) or (param.type == "int" and isinstance(value, bool)):
            raise _usage_error(operation, f"{param.name} must be {_A_TYPE[param.type]}",
                               arguments)
        if param.type == "list" and not all(isinstance(item, str) for item in value):
            raise _usage_error(operation, f"{param.name} must be a list of strings",
                               arguments)
        if param.choices and value not in param.choices:
            raise _usage_error(operation, f"{param.name} must be one of "
                                          f"{', '.join(param.choices)}", arguments)
        checked[param.name] = value
    return checked


def run(name: str, arguments: dict, *, cwd=None, now=None) -> Reply:
    """Run one operation in the work tree holding `cwd` (default: this process's)."""
    # lazy: registering the commands needs only the table
    from forge_runtime.artifacts.workspace import Workspace
    from forge_runtime.project import find_project

    operation = BY_NAME[name]
    try:
        checked = check_arguments(operation, arguments)
        from pathlib import Path

        workspace = Workspace(find_project(Path.cwd() if cwd is None else Path(cwd)), now)
        return operation.function()(workspace, **checked)
    except OpError as exc:
        return exc.reply()


def invoke(name: str, arguments: dict, surface: str, *, cwd=None, now=None) -> Result:
    """Run one operation and render it for `surface` (CLI or MCP) as a `Result`."""
    reply = run(name, arguments, cwd=cwd, now=now)
    return Result(reply.say.to_hint(RENDERERS[surface]), reply.lines, reply.data,
                  reply.exit_code)
