"""CLI and MCP are one surface twice: the same inputs, the same content, the same hint.

Every operation's examples (the hint audit's, forge_runtime/surface_audit.py) run in two
copies of one seeded workspace: as `forge ... --json` and as a tool call on a real `forge
mcp` server over stdio. The JSON must match (timestamps and the copy's own path aside),
and each hint must name the same step: the CLI command, parsed by forge's parser, and the
MCP tool call, read back as a call, are the same operation with the same arguments.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess

import anyio
import pytest

from forge_runtime.cli.main import build_parser
from forge_runtime.operations import BY_NAME, OPERATIONS, parse_mcp_call
from forge_runtime.steps import Call
from forge_runtime.surface_audit import EXAMPLES, _cli, seed
from tests.mcp_support import forge_mcp

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def cli_call(command: str) -> Call:
    """The operation and arguments a `forge ...` hint names, as forge's parser reads it."""
    args = build_parser().parse_args(shlex.split(command)[1:])
    operation = BY_NAME[args.command]
    return Call(operation.name, {p.name: value for p in operation.params
                                 if (value := getattr(args, p.name)) is not None
                                 and value is not False})


def _steps(hint: dict, read) -> list:
    return [read(step) if step.split()[0] in ("forge", *BY_NAME) else step
            for step in [hint.get("command"), *hint.get("or", [])] if step]


def _masked(value, root: str | None = None):
    text = json.dumps(value, sort_keys=True)
    text = text.replace(root, "<root>") if root else text
    return json.loads(DATE.sub("<date>", TIME.sub("<time>", text)))


def _hint_of(payload, extra_text: str | None) -> dict:
    if isinstance(payload, dict):
        return payload["_hint"]
    from forge_runtime import hints

    hint = hints.split_rendered(extra_text.rstrip("\n"))[1]
    return hint.as_json()["_hint"]


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    base = tmp_path_factory.mktemp("parity")
    seed(base / "seed")
    made = {}
    for surface in ("cli", "mcp"):
        shutil.copytree(base / "seed", base / surface, symlinks=True)
        made[surface] = base / surface / "project"
        subprocess.run(["git", "remote", "set-url", "origin", str(base / surface / "remote.git")],
                       cwd=made[surface], check=True)
    return made


def test_every_operation_takes_the_same_inputs_on_both_surfaces():
    parser = build_parser()
    commands = next(a for a in parser._actions if hasattr(a, "choices") and a.choices)
    for operation in OPERATIONS:
        sub = commands.choices[operation.name]
        dests = {a.dest: a for a in sub._actions if a.dest not in ("help", "json")}
        schema = operation.input_schema()
        assert set(dests) == set(schema["properties"]), operation.name
        for name, action in dests.items():
            choices = schema["properties"][name].get("enum")
            assert (list(action.choices) if action.choices else None) == choices, name
        required = {name for name, action in dests.items()
                    if action.required or (not action.option_strings and action.nargs != "?")}
        assert required == set(schema["required"]), operation.name


def test_every_operation_answers_alike_on_the_cli_and_over_mcp(copies):
    async def both() -> list[tuple]:
        pairs = []
        async with forge_mcp(copies["mcp"]) as session:
            for operation in OPERATIONS:
                for arguments in EXAMPLES[operation.name]:
                    from forge_runtime.operations import cli_command
                    from forge_runtime.steps import call

                    words = shlex.split(cli_command(call(operation.name, **arguments)))[1:]
                    code, out, err = _cli(copies["cli"], [*words, "--json"])
                    result = await session.call_tool(operation.name, arguments)
                    texts = [block.text for block in result.content]
                    pairs.append((operation.name, arguments, code, out, err, result, texts))
        return pairs

    seen = set()
    for name, arguments, code, out, err, result, texts in anyio.run(both):
        where = f"{name} {arguments}"
        seen.add(name)
        cli_payload, mcp_payload = json.loads(out), json.loads(texts[0])
        assert (code != 0) == result.is_error, where
        if isinstance(mcp_payload, dict):
            assert result.structured_content == mcp_payload, where
        strip = lambda p: ({k: v for k, v in p.items() if not k.startswith("_")}  # noqa: E731
                           if isinstance(p, dict) else p)
        assert _masked(strip(cli_payload), str(copies["cli"])) == _masked(
            strip(mcp_payload), str(copies["mcp"])), where
        cli_hint = _hint_of(cli_payload, err)
        mcp_hint = _hint_of(mcp_payload, texts[1] if len(texts) > 1 else None)
        for key in ("marker", "rationale", "error"):
            assert _masked(cli_hint.get(key), str(copies["cli"])) == _masked(
                mcp_hint.get(key), str(copies["mcp"])), (where, key)
        assert _masked([vars(s) if isinstance(s, Call) else s
                        for s in _steps(cli_hint, cli_call)]) == _masked(
            [vars(s) if isinstance(s, Call) else s for s in _steps(mcp_hint, parse_mcp_call)]
        ), where
        assert all(step.startswith("forge ") for step in _steps(cli_hint, str)
                   if not step.startswith("/")), where
        assert not any(step.startswith("forge ") for step in _steps(mcp_hint, str)), where
    assert seen == set(BY_NAME)
