"""Markdown with YAML front matter: read it into (front matter, body), write it back.

Dates a person types unquoted (`valid_until: 2027-01-31`) come back from YAML as date
objects; they are turned into ISO strings here so every later step sees one type.
"""

from __future__ import annotations

import datetime as dt

from forge_runtime.artifacts.model import FIELD_ORDER

FENCE = "---"
MAX_HEAD_CHARS = 64_000
MAX_NODES = 10_000


class FrontMatterError(ValueError):
    """The file has no readable front matter; the message says what is wrong."""


def _loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _plain(value):
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def split(text: str) -> tuple[dict, str]:
    """The front matter (a dict) and the Markdown body of a document."""
    import yaml

    if not text.startswith(FENCE + "\n"):
        raise FrontMatterError("the file does not start with a `---` front matter block")
    end = text.find(f"\n{FENCE}\n", len(FENCE))
    if end == -1:
        if text.rstrip("\n").endswith(f"\n{FENCE}"):
            end = text.rstrip("\n").rfind(f"\n{FENCE}")
        else:
            raise FrontMatterError("the front matter block has no closing `---`")
    head = text[len(FENCE) + 1:end]
    body = text[end + len(FENCE) + 2:]
    if len(head) > MAX_HEAD_CHARS:
        raise FrontMatterError(f"the front matter is over {MAX_HEAD_CHARS:,} characters")
    try:
        meta = yaml.load(head, Loader=_loader()) if head.strip() else {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the front matter is not valid YAML ({exc})") from None
    if not isinstance(meta, dict):
        raise FrontMatterError("the front matter is not a mapping of fields")
    if not _within(meta, MAX_NODES):
        raise FrontMatterError(f"the front matter expands to over {MAX_NODES:,} values "
                               "(YAML aliases can multiply a small file)")
    return _plain(meta), body


def _within(value, limit: int) -> bool:
    """True when `value` has at most `limit` nodes, counting a shared one at every place it
    appears (as JSON would write it); stops counting at the limit."""
    stack, seen = [value], 0
    while stack:
        seen += 1
        if seen > limit:
            return False
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def join(meta: dict, body: str) -> str:
    """A document from front matter and body, forge's fields first, in a stable order."""
    import yaml

    ordered = {key: meta[key] for key in FIELD_ORDER if key in meta}
    ordered.update((key, value) for key, value in meta.items() if key not in ordered)
    head = yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=100)
    return f"{FENCE}\n{head}{FENCE}\n{body}"


def sections(body: str) -> dict[str, str]:
    """`## Heading` -> the text under it (up to the next heading of level 2 or above)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_code = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith("#") and not line.startswith("###"):
            title = line.lstrip("#").strip()
            current = found.setdefault(title, []) if line.startswith("## ") else None
            continue
        if current is not None:
            current.append(line)
    return {title: "\n".join(lines).strip() for title, lines in found.items()}
