"""One exception type for everything forge refuses, carrying its own way out.

Core code raises `ForgeError` with the command that fixes the problem; each surface (CLI,
MCP, hook) renders it through the hint contract, so no caller invents its own error text.
"""

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_REFUSED = 2


class ForgeError(Exception):
    """A failure a person can act on: what went wrong, and the full command that fixes it.

    `exit_code` is 1 for an error in use and 2 when forge refuses or fails closed.
    `code` is a stable machine-readable name such as FORGE_GOAL_LEDGER_TAMPERED.
    `or_` lists fallback commands, shown as `Or:` lines after the `Fix:`.
    """

    def __init__(self, message: str, fix: str, *, exit_code: int = EXIT_USAGE,
                 code: str | None = None, rationale: str | None = None,
                 or_: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.exit_code = exit_code
        self.code = code
        self.rationale = rationale
        self.alternatives = list(or_ or ())

    def hint(self):
        from forge_runtime import hints

        message = f"{self.code}: {self.message}" if self.code else self.message
        return hints.error(message, self.fix, self.rationale, or_=self.alternatives)
