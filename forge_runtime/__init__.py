"""forge: durable goal budgets, read-only roles and next-action hints for Claude Code.

Kept nearly empty on purpose: every hook process imports this package, so anything
added here is paid on every tool call of every session.
"""

__version__ = "0.1.0"
