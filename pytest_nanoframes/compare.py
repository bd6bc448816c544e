"""Pixel numbers for two frames or two films: how many pixels differ, by how much, where.

Private to the plugin for now; the library's frame comparison (for ``nanoframes
diff``) computes the same numbers, and the two are meant to become one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MAX_DETAILED = 5  # frames described one by one in a film's message


@dataclass(frozen=True)
class FrameDifference:
    pixels: int          # pixels with any channel different
    total: int           # pixels in the frame
    max_delta: int       # the largest difference of one channel
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 (inclusive) of the differing pixels

    def describe(self) -> str:
        x0, y0, x1, y1 = self.bbox
        share = 100.0 * self.pixels / self.total
        return (f"{self.pixels} of {self.total} pixels differ ({share:.2f}%), max channel "
                f"delta {self.max_delta}, bbox x {x0}..{x1}, y {y0}..{y1} "
                f"({x1 - x0 + 1}x{y1 - y0 + 1})")


def frame_difference(a: np.ndarray, b: np.ndarray) -> FrameDifference | None:
    """None when the frames are equal; a ``ValueError`` when their shapes differ."""
    import numpy as np

    if a.shape != b.shape:
        raise ValueError(f"frame shapes differ: {_shape(a)} vs {_shape(b)}")
    delta = np.abs(a.astype(np.int16) - b.astype(np.int16))
    per_pixel = delta.max(axis=-1) if delta.ndim == 3 else delta
    ys, xs = np.nonzero(per_pixel)
    if len(ys) == 0:
        return None
    return FrameDifference(int(len(ys)), int(per_pixel.size), int(per_pixel.max()),
                           (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())))


def _shape(frame: np.ndarray) -> str:
    if frame.ndim >= 2:
        return f"{frame.shape[1]}x{frame.shape[0]}" + (
            f"x{frame.shape[2]}" if frame.ndim == 3 else "")
    return str(frame.shape)


def film_differences(a: Iterable[np.ndarray], b: Iterable[np.ndarray]
                     ) -> tuple[list[tuple[int, FrameDifference]], int, int]:
    """(differing frames with their numbers, frames in a, frames in b), streaming both."""
    out: list[tuple[int, FrameDifference]] = []
    counts = [0, 0]
    for index, (fa, fb) in enumerate(zip_longest(a, b, fillvalue=None)):
        counts[0] += fa is not None
        counts[1] += fb is not None
        if fa is not None and fb is not None:
            diff = frame_difference(fa, fb)
            if diff is not None:
                out.append((index, diff))
    return out, counts[0], counts[1]


def describe_films(a: Iterable[np.ndarray], b: Iterable[np.ndarray]) -> str | None:
    """None when two films are equal frame for frame, else a few lines of numbers."""
    diffs, na, nb = film_differences(a, b)
    if not diffs and na == nb:
        return None
    lines = []
    if na != nb:
        lines.append(f"films differ in length: {na} vs {nb} frames")
    if diffs:
        listed = ", ".join(str(i) for i, _ in diffs[:10]) + (", …" if len(diffs) > 10 else "")
        lines.append(f"{len(diffs)} of {min(na, nb)} frames differ: {listed}")
        for index, diff in diffs[:MAX_DETAILED]:
            lines.append(f"  frame {index}: {diff.describe()}")
    return "\n".join(lines)
