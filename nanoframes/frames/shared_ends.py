"""Frames shared out between this process and its workers, from two ends, one at a time.

This process draws frames from the front of the film; each worker takes frames
from the back. Where each end stands lives in a few integers of shared memory
with a lock (``SharedEnds``), made with the worker pool and handed to each
worker as it starts (``workers.py``). Taking the next frame is a lock and two
integers, so no process waits for a message between frames, and at the end no
process waits for more than the one frame another is still drawing. (Runs of
frames handed to a worker in messages cost about 0.5 ms of its time each, and
its last run was what the others waited for: up to 39 ms at 1080p.)

This process's frames follow one another forwards. With one worker, its frames
follow one another backwards, so a held frame is drawn again at most once,
where the two meet; with more, the workers' frames interleave at the back, and
each worker draws a held frame there once itself before it repeats it.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

_FRONT, _BACK, _WRITTEN = 0, 1, 2

# The lock is held for a few integer operations. Still held after this long, and
# still held a moment later (AGAIN_S), it was held by a worker that died (killed
# between taking and releasing it): the pool is broken, and waiting longer would
# be a hang. The second wait is for a command stopped (Ctrl-Z) while a worker
# held the lock and continued (fg) after STUCK_S: its wait ends as it continues,
# its deadline long past, just before the worker lets go.
STUCK_S = 10.0
AGAIN_S = 1.0


class SharedEnds:
    """Positions ``0 .. n - 1`` of a film, each taken once: from the front (this
    process) or from the back (workers); and how many frames the workers have
    written. Made before the processes that share it start (pass it to them as
    they start: a pool's initializer arguments); ``start`` sets the film."""

    def __init__(self, ctx: Any) -> None:
        self._cells = ctx.Array("q", 3)  # front, back, written by workers; with its lock

    @contextmanager
    def _locked(self, timeout: float | None = None) -> Iterator[None]:
        lock = self._cells.get_lock()
        if not lock.acquire(timeout=STUCK_S if timeout is None else timeout) \
                and not lock.acquire(timeout=AGAIN_S):
            raise BrokenProcessPool("a worker process stopped while taking a frame")
        try:
            yield
        finally:
            lock.release()

    def start(self, front: int, back: int) -> None:
        """Positions ``front .. back - 1`` are left to take (this process took
        those before ``front`` itself); the workers have written none."""
        with self._locked():
            self._cells[_FRONT], self._cells[_BACK], self._cells[_WRITTEN] = front, back, 0

    def take_front(self) -> int | None:
        """The next position from the front; None once none is left."""
        with self._locked():
            front = self._cells[_FRONT]
            if front >= self._cells[_BACK]:
                return None
            self._cells[_FRONT] = front + 1
            return front

    def take_back(self) -> int | None:
        """The next position from the back; None once none is left."""
        with self._locked():
            back = self._cells[_BACK] - 1
            if back < self._cells[_FRONT]:
                return None
            self._cells[_BACK] = back
            return back

    def close(self) -> None:
        """Nothing more is handed out, from either end (a process failed). Best
        effort: a lock a dead worker holds stops the others anyway."""
        try:
            with self._locked(timeout=1.0):
                self._cells[_BACK] = self._cells[_FRONT]
        except BrokenProcessPool:
            pass

    def wrote(self) -> None:
        """(a worker) One more frame written."""
        with self._locked():
            self._cells[_WRITTEN] += 1

    def written(self) -> int:
        """Frames the workers have written since ``start``."""
        with self._locked():
            return self._cells[_WRITTEN]
