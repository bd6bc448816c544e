"""Pixel comparison of two frames: the numbers that describe a difference.

Two numbers say how two frames differ (as WPT reports them): how many pixels
differ, and the largest difference of any channel (0-255). The bounding box
says where. A film's differing frames fold into one summary line in the form
``45 of 180 frames differ, 1–5 px each, max ±1/255, within (402,88)–(431,97)``.
Frames of different sizes are not compared pixel by pixel: that is a size change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class FrameDiff:
    """How one frame differs from its reference. ``bbox`` is inclusive
    ``(x0, y0, x1, y1)``; None when nothing differs or the sizes differ."""

    frame: int
    pixels: int
    max_delta: int
    bbox: tuple[int, int, int, int] | None
    size: tuple[tuple[int, int], tuple[int, int]] | None = None  # (expected, actual) w×h

    @property
    def identical(self) -> bool:
        return self.size is None and self.pixels == 0

    def numbers(self) -> str:
        """The difference in words, without the frame index."""
        if self.size is not None:
            (ew, eh), (aw, ah) = self.size
            return f"size changed {ew}×{eh} → {aw}×{ah}"
        if not self.pixels:
            return "identical"
        return f"{self.pixels} px differ, max ±{self.max_delta}/255, within {_box(self.bbox)}"

    def text(self) -> str:
        return f"frame {self.frame}: {self.numbers()}"

    def to_json(self) -> dict:
        return {"frame": self.frame, "pixels": self.pixels, "max_delta": self.max_delta,
                "bbox": list(self.bbox) if self.bbox else None,
                "size": None if self.size is None else
                {"expected": list(self.size[0]), "actual": list(self.size[1])}}

    @classmethod
    def from_json(cls, data: dict) -> FrameDiff:
        size = data.get("size")
        return cls(data["frame"], data["pixels"], data["max_delta"],
                   tuple(data["bbox"]) if data.get("bbox") else None,
                   None if not size else (tuple(size["expected"]), tuple(size["actual"])))


def compare(expected: np.ndarray, actual: np.ndarray, frame: int = 0) -> FrameDiff:
    """Compare two straight RGBA frames (H×W×4 uint8)."""
    if expected.shape != actual.shape:
        eh, ew = expected.shape[:2]
        ah, aw = actual.shape[:2]
        return FrameDiff(frame, 0, 0, None, ((ew, eh), (aw, ah)))
    delta = np.abs(expected.astype(np.int16) - actual.astype(np.int16)).max(axis=2)
    mask = delta > 0
    pixels = int(mask.sum())
    if not pixels:
        return FrameDiff(frame, 0, 0, None)
    ys = np.flatnonzero(mask.any(axis=1))
    xs = np.flatnonzero(mask.any(axis=0))
    bbox = (int(xs[0]), int(ys[0]), int(xs[-1]), int(ys[-1]))
    return FrameDiff(frame, pixels, int(delta.max()), bbox)


def _box(bbox: Sequence[int] | None) -> str:
    if not bbox:
        return "nowhere"
    x0, y0, x1, y1 = bbox
    return f"({x0},{y0})–({x1},{y1})"


def _span(values: Sequence[int], unit: str) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}{unit}" if lo == hi else f"{lo}–{hi}{unit}"


def union_box(diffs: Sequence[FrameDiff]) -> tuple[int, int, int, int] | None:
    boxes = [d.bbox for d in diffs if d.bbox]
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))


@dataclass(frozen=True)
class FilmEvidence:
    """Pixel evidence for a composition's differing frames.

    ``frames`` holds a ``FrameDiff`` for each differing frame whose reference
    was in the store; ``unavailable`` the differing frames whose reference was
    not. ``summary`` is the one line a verdict prints. ``files`` (frame ->
    {"expected", "actual", "diff"} paths) is filled where artifacts were written.
    """

    compared: int                       # frames the verdict compared
    frames: tuple[FrameDiff, ...] = ()
    unavailable: tuple[int, ...] = ()
    hint: str = ""                       # how to get missing reference frames
    files: dict = field(default_factory=dict, compare=False)
    sheet: str | None = field(default=None, compare=False)  # contact sheet of the fresh film

    @property
    def summary(self) -> str:
        parts = []
        sized = [d for d in self.frames if d.size is not None]
        drawn = [d for d in self.frames if d.size is None and d.pixels]
        if sized:
            (ew, eh), (aw, ah) = sized[0].size
            parts.append(f"size changed {ew}×{eh} → {aw}×{ah}")
        if drawn:
            parts.append(f"{len(drawn)} of {self.compared} frames differ, "
                         f"{_span([d.pixels for d in drawn], ' px')} each, "
                         f"max ±{max(d.max_delta for d in drawn)}/255, "
                         f"within {_box(union_box(drawn))}")
        if self.unavailable:
            n = len(self.unavailable)
            parts.append(f"{n} recorded frame{'s are' if n != 1 else ' is'} not in the "
                         f"store{': ' + self.hint if self.hint else ''}")
        return "; ".join(parts) if parts else "no pixel differs"

    def to_json(self) -> dict:
        return {"summary": self.summary, "compared": self.compared,
                "frames": [dict(d.to_json(), **({"files": self.files[d.frame]}
                                                 if d.frame in self.files else {}))
                           for d in self.frames],
                "unavailable": list(self.unavailable), "hint": self.hint,
                "sheet": self.sheet}

    @classmethod
    def from_json(cls, data: dict) -> FilmEvidence:
        frames = tuple(FrameDiff.from_json(d) for d in data.get("frames", ()))
        files = {d["frame"]: d["files"] for d in data.get("frames", ()) if d.get("files")}
        return cls(data["compared"], frames, tuple(data.get("unavailable", ())),
                   data.get("hint", ""), files, data.get("sheet"))


def amplify_diff(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """The difference made visible, with its magnitude: the expected frame dimmed to
    a grey quarter over black, each differing pixel coloured by its largest channel
    difference on a logarithmic scale, blue (±1) through yellow (±16) to red
    (±255): a drift of a few levels and a recolour never look alike."""
    h, w = expected.shape[:2]
    base = expected[..., :3].astype(np.uint16) * expected[..., 3:4].astype(np.uint16) // 255
    grey = (base.sum(axis=2) // 3 // 4).astype(np.uint8)
    out = np.empty((h, w, 4), dtype=np.uint8)
    out[..., 0] = out[..., 1] = out[..., 2] = grey
    out[..., 3] = 255
    delta = np.abs(expected.astype(np.int16) - actual.astype(np.int16)).max(axis=2)
    mask = delta > 0
    if mask.any():
        out[mask, :3] = _ramp(delta[mask])
    return out


# The diff's colour scale: ±1, ±16 and ±255 (log2 0, 4 and 8), interpolated between.
_STOPS = ((0.0, (40, 110, 255)), (4.0, (255, 220, 0)), (8.0, (255, 0, 0)))


def _ramp(delta: np.ndarray) -> np.ndarray:
    """RGB (uint8, one row per value) of each difference ``delta`` (1..255)."""
    level = np.log2(delta.astype(np.float64))
    rgb = np.empty((delta.size, 3), dtype=np.float64)
    xs = [x for x, _ in _STOPS]
    for channel in range(3):
        rgb[:, channel] = np.interp(level, xs, [c[channel] for _, c in _STOPS])
    return np.rint(rgb).astype(np.uint8)
