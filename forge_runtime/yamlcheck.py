"""Read a YAML file a person wrote and check it against a JSON schema, naming the line.

forge's project files (`.forge/guard.yaml`, `.forge/gates.yaml`) are checked the same way:
a broken file is reported at the line of the offending node, so the fix is one edit away.
"""

from __future__ import annotations

from collections.abc import Callable

from forge_runtime.errors import ForgeError

# Builds the error to raise from (line or None, what is wrong).
Invalid = Callable[[int | None, str], ForgeError]


def checked(raw: bytes, schema: dict, invalid: Invalid, empty: object = None) -> object:
    """The parsed document (`empty` for an empty file); raises `invalid(line, problem)`."""
    import jsonschema
    import yaml

    try:
        text = raw.decode("utf-8")
        document = yaml.safe_load(text)
    except UnicodeDecodeError as exc:
        raise invalid(None, f"is not UTF-8 ({exc.reason})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise invalid(line, f"is not valid YAML ({getattr(exc, 'problem', exc)})") from None
    document = empty if document is None else document
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(document))
    if error is not None:
        path = list(error.absolute_path)
        if "propertyNames" in error.absolute_schema_path:  # the bad key is the instance
            path.append(error.instance)
        where = "/".join(str(part) for part in path) or "top level"
        raise invalid(line_of(text, path), f"at {where}: {error.message}")
    return document


def line_of(text: str, path: list) -> int | None:
    """The 1-based line of the YAML node at `path` (the deepest one that exists)."""
    import yaml

    node = yaml.compose(text)
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == str(part)), None)
            if match is None:
                break
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
                and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
