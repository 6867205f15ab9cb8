"""The artifact commands (`forge new`, `forge get`, ... `forge dispatch`), generated from
`forge_runtime.operations.OPERATIONS`: one subcommand per operation, one argument per
parameter, each running `operations.invoke` for the CLI."""

from __future__ import annotations

from forge_runtime.operations import CLI, OPERATIONS, Operation, Param, invoke


def _add(parser, param: Param) -> None:
    options: dict = {"help": param.help}
    if param.choices:
        options["choices"] = param.choices
    if param.type == "int":
        options["type"] = int
    if param.positional:
        if not param.required:
            options["nargs"] = "?"
        parser.add_argument(param.name, **options)
        return
    if param.type == "bool":
        parser.add_argument(param.flag, dest=param.name, action="store_true", help=param.help)
        return
    if param.type == "list":
        options["nargs"] = "+"
    if param.default is not None:
        options["help"] += f" (default {param.default})"
    parser.add_argument(param.flag, dest=param.name, required=param.required, **options)


def _handler(operation: Operation):
    def handle(args):
        # An absent flag is None (or False for a switch): left out, as MCP leaves it out.
        arguments = {param.name: value for param in operation.params
                     if (value := getattr(args, param.name)) is not None and value is not False}
        return invoke(operation.name, arguments, CLI)
    return handle


def register(subparsers, common) -> None:
    for operation in OPERATIONS:
        parser = subparsers.add_parser(operation.name, parents=[common], help=operation.help,
                                       description=operation.help[0].upper()
                                       + operation.help[1:] + ".")
        for param in operation.params:
            _add(parser, param)
        parser.set_defaults(handler=_handler(operation))
