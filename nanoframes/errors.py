"""One exception hierarchy for everything a user can get wrong.

Every error carries a stable ``code`` (documented in docs/errors.md), the file
it is about and, where known, the line. ``str(err)`` is the one line the CLI
prints and the pytest plugin reports.
"""

from __future__ import annotations

from pathlib import Path


class NanoframesError(Exception):
    """A problem with user input (a composition, an asset, a ledger, config)."""

    def __init__(
        self,
        code: str,
        message: str,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.column = column
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        return f"{where}error[{self.code}]: {self.message}"

    def __reduce__(self):  # survive pickling across worker processes
        return (
            self.__class__,
            (self.code, self.message, self.file, self.line, self.column),
        )
