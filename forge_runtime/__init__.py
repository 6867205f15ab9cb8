"""forge: durable goal budgets, read-only roles and next-action hints for Claude Code.

Kept nearly empty on purpose: every hook process imports this package, so anything
added here is paid on every tool call of every session.
"""

__version__ = "0.1.0"
# The pid of the launcher that started this hook, as the launcher saw it (`$$`), so a Stop
# can tell that its launcher was killed while it ran (goal/store/killed_stops.py); None outside the
# plugin's launcher. launch.py sets it. It lives here because the launcher and the goal
# core both import this package anyway, and the core may not import the launcher
# (ARCHITECTURE.md: arrows point down).
launcher_pid: int | None = None
