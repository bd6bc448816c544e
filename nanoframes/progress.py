"""A one-line progress bar on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time

from .shown import unfiltered


class Progress:
    def __init__(self, total: int, label: str, enabled: bool | None = None) -> None:
        self.total, self.label, self.done = max(1, total), label, 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0
        self._start = time.monotonic()

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            width = 30
            filled = int(width * self.done / self.total)
            rate = self.done / max(now - self._start, 1e-9)
            unfiltered(sys.stderr).write("\r")  # the bar's own control; the label is shown
            sys.stderr.write(f"{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                             f"{self.done}/{self.total} {rate:.0f} fps")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def __enter__(self) -> Progress:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()
