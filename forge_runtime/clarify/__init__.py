"""Clarify: a question-only step that freezes a four-section brief before any work starts.

- `brief`: the `Brief` (tolerant parser, canonical renderer, amendments);
- `store`: freezing it to `.forge/notes/brief.md`, keeping older ones, amending;
- `channel`: `HumanChannel`, the in-process MCP server through which a model asks a person;
- `terminal`: the person's side of that channel in a terminal (`forge clarify`).
"""

from forge_runtime.clarify.brief import Amendment, Brief, load, parse
from forge_runtime.clarify.headings import SECTIONS

__all__ = ["Amendment", "Brief", "SECTIONS", "load", "parse"]
