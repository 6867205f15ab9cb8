"""A small workflow runtime on claude-agent-sdk: steps in order, each a fresh session.

- `core`: `Workbench` (the project's `.forge/` folders), `Step` (`when` / `gate` /
  `reduce`), `Workflow`;
- `session`: `SdkSession`, a resumable claude-agent-sdk session;
- `clarify`: `clarify_step`, the question-only step that freezes the brief.

What one step hands the next is only what its `reduce` returns (for clarify: the brief's
`prompt_block()`), never its dialogue: every later step starts from the brief.
"""

from forge_runtime.workflow.core import Step, StepFailed, Workbench, Workflow

__all__ = ["Step", "StepFailed", "Workbench", "Workflow"]
