"""Renderer-exact text measurement: ThorVG's own bounds query, never a probe render.

A measurement is the ink box ThorVG computes for a Text paint with the face,
size and string set (``Rasterizer.text_bounds``, ~7 µs): the same outlines the
SVG loader draws, so the box matches the rasterized ink to within a pixel of
antialiasing. Boxes are relative to the ``<text>`` anchor, i.e. for
``<text x="0" y="0">``; add the element's x/y to place them.
"""

from __future__ import annotations

from typing import NamedTuple

from ..engine.raster import Rasterizer, get_rasterizer
from .fonts import Face, face_bytes


class Ink(NamedTuple):
    """An ink box ``(x, y, w, h)`` in SVG user units, relative to the text anchor."""

    x: float
    y: float
    w: float
    h: float

    @property
    def empty(self) -> bool:
        return self.w <= 0.0 or self.h <= 0.0

    def moved(self, dx: float, dy: float) -> Ink:
        return Ink(self.x + dx, self.y + dy, self.w, self.h)


def union(boxes: list[Ink]) -> Ink | None:
    """The smallest box holding every non-empty box; None when all are empty."""
    real = [b for b in boxes if not b.empty]
    if not real:
        return None
    x0 = min(b.x for b in real)
    y0 = min(b.y for b in real)
    x1 = max(b.x + b.w for b in real)
    y1 = max(b.y + b.h for b in real)
    return Ink(x0, y0, x1 - x0, y1 - y0)


class Measurer:
    """Measures text with one process's rasterizer, registering each face once.

    ``Rasterizer.register_font`` is idempotent but hashes the face's bytes on
    every call (~0.3 ms for a 500 KB face, 40× a measurement), so the names this
    measurer has registered are remembered and the call is skipped after the first.
    """

    def __init__(self, rasterizer: Rasterizer | None = None) -> None:
        self._rasterizer = rasterizer
        self._registered: set[str] = set()

    @property
    def rasterizer(self) -> Rasterizer:
        # Resolved lazily so a Baker built before a fork measures with the child's.
        return self._rasterizer or get_rasterizer()

    def register(self, face: Face) -> None:
        if face.name not in self._registered:
            self.rasterizer.register_font(face.name, face_bytes(face))
            self._registered.add(face.name)

    def ink(self, face: Face, size_px: float, text: str) -> Ink:
        """Ink box of ``text`` drawn with ``face`` at ``size_px`` by ``<text x="0" y="0">``.

        ``text`` is the characters to draw (entities already decoded); text with
        no ink gives an empty box at the origin.
        """
        self.register(face)
        return Ink(*self.rasterizer.text_bounds(face.name, size_px, text))

    def width(self, face: Face, size_px: float, text: str) -> float:
        """Ink width: what wrap and fit compare against their limit (docs/text.md)."""
        return self.ink(face, size_px, text).w
