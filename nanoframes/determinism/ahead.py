"""Films queued ahead of their turn, for a caller that checks films one at a time.

The pytest plugin judges one item after another on one drawing worker. Were
each film opened, identified and queued only at its own turn, the worker would
wait while this process opens the next film, and this process would wait
while the worker draws: the two would take turns instead of working side by
side (the command line's sweep queues every film at once). So while a film is
being drawn, the next one is opened, identified and queued behind it; its turn
takes that reading as it stands.

Nothing about a verdict changes: the reading is the same function of the same
files (its identity is taken from the files it was drawn from, and a worker
that read other versions says ``input-changed``). A film that cannot be opened
is not queued: its own turn opens it again and meets its own error there. A
crash breaks the pool and everything queued on it; ``forget_broken`` drops
those, and each is drawn anew at its turn, so a crash is only ever the
verdict of the film that caused it (``workers.died`` names it).
"""

from __future__ import annotations

import os
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING

from ..frames.workers import is_broken

if TYPE_CHECKING:
    from .reading import PendingReading


class DrawnAhead:
    """The readings queued before their turn, by film address (one or two at a time)."""

    def __init__(self) -> None:
        # address -> (the pool, the options it was opened with, the reading)
        self._queued: dict[str, tuple[Executor, dict, PendingReading]] = {}

    def queue(self, path: str | Path, pool: Executor, **how) -> None:
        """Open ``path`` and queue its frames on ``pool`` now (``how``: ``start_reading``'s
        options, the ones its turn will ask for)."""
        key = os.fspath(path)
        if key in self._queued or is_broken(pool):
            return
        from .reading import queued_reading

        try:
            self._queued[key] = (pool, how, queued_reading(path, pool, **how))
        except Exception:  # noqa: BLE001 - the film's own turn meets this error again
            return

    def take(self, path: str | Path, **how) -> PendingReading | None:
        """The reading queued for ``path`` with the same options, if any (taken once)."""
        queued = self._queued.pop(os.fspath(path), None)
        return queued[2] if queued is not None and queued[1] == how else None

    def forget_broken(self) -> None:
        """Drop what was queued on a pool a crash broke: drawn anew at its turn."""
        self._queued = {key: queued for key, queued in self._queued.items()
                        if not is_broken(queued[0])}

    def clear(self) -> None:
        self._queued.clear()
