"""Frames shared out between this process and its workers, from two ends.

This process draws frames one at a time from the front; each worker takes a
run from the back. Runs shrink as frames run out (a share of what is left,
guided self-scheduling), so every process finishes at about the same time
without knowing in advance how fast the others are or when they booted. The
share is small (an eighth of what is left with one worker): a film's frames
cost from 1 ms (held) to 30 ms (1080p) each, and a worker's last run is what the
others may wait for at the end, while handing it a run costs about 0.5 ms. A
worker's runs follow one another backwards and this process's frames
forwards, so a held frame is drawn again at most once, where the two meet.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")

# The longest run a worker takes at once: short enough that its progress comes
# back often, long enough that a task's own cost (a message each way) is noise.
MAX_RUN = 32


class TwoEnded(Generic[T]):
    """Items taken from the front one by one, or from the back in runs (thread-safe)."""

    def __init__(self, items: Sequence[T], processes: int) -> None:
        self._items = list(items)
        self._front, self._back = 0, len(self._items)
        self._share = 4 * max(1, processes)  # a run is at most 1/share of what is left
        self._lock = threading.Lock()

    def front(self) -> Iterator[T]:
        """Items from the front until none is left (or ``close``)."""
        while True:
            with self._lock:
                if self._front >= self._back:
                    return
                item = self._items[self._front]
                self._front += 1
            yield item

    def take_back(self) -> list[T]:
        """The next run from the back, in order; empty once none is left."""
        with self._lock:
            left = self._back - self._front
            size = min(MAX_RUN, max(1, left // self._share), max(left, 0))
            run = self._items[self._back - size:self._back]
            self._back -= size
            return run

    def close(self) -> None:
        """Nothing more is handed out, from either end."""
        with self._lock:
            self._back = self._front
