"""Pixel numbers for two frames or two films (``nf.assert_frames_equal``, film
comparisons in assertion messages), in the words of the library's comparison,
``nanoframes.frames.compare``, which ``nanoframes diff`` and the evidence use too.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import zip_longest
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from nanoframes.frames.compare import FrameDiff

MAX_DETAILED = 5  # frames described one by one in a film's message


def frame_difference(a: np.ndarray, b: np.ndarray, index: int = 0) -> FrameDiff | None:
    """None when the frames are equal, else their numbers (a size change included)."""
    from nanoframes.frames.compare import compare

    diff = compare(a, b, index)
    return None if diff.identical else diff


def describe_films(a: Iterable[np.ndarray], b: Iterable[np.ndarray]) -> str | None:
    """None when two films are equal frame for frame, else a few lines of numbers;
    both are streamed, never held whole."""
    from nanoframes.frames.compare import FilmEvidence

    diffs: list[FrameDiff] = []
    na = nb = 0
    for index, (fa, fb) in enumerate(zip_longest(a, b, fillvalue=None)):
        na += fa is not None
        nb += fb is not None
        if fa is not None and fb is not None:
            diff = frame_difference(fa, fb, index)
            if diff is not None:
                diffs.append(diff)
    if not diffs and na == nb:
        return None
    lines = []
    if na != nb:
        lines.append(f"films differ in length: {na} vs {nb} frames")
    if diffs:
        listed = ", ".join(str(d.frame) for d in diffs[:10]) + (", …" if len(diffs) > 10 else "")
        lines.append(f"{FilmEvidence(min(na, nb), tuple(diffs)).summary} (frames {listed})")
        lines += [f"  {d.text()}" for d in diffs[:MAX_DETAILED]]
    return "\n".join(lines)
