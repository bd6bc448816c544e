"""Draft and high-density renders: the size a film is drawn at under ``--scale F``.

The document is the same at every scale (layout, measurement and pivots are in
the composition's own units); the rasterizer draws it onto a canvas of the
scaled size, so vectors and text outlines are redrawn at that size, not
resampled. Digests and the plugin always draw the authored size (scale 1).
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..errors import NanoframesError
from ..model.composition import MAX_PIXELS, MAX_SIDE

MIN_SCALE, MAX_SCALE = 0.01, 16.0


def scaled_size(width: int, height: int, scale: float, file=None) -> tuple[int, int]:
    """``round(side × scale)`` for each side (halves up, exact, at least 1 px);
    ``scale-invalid`` for a scale outside [0.01, 16] and ``canvas-too-large`` past
    the canvas limits."""
    if not (math.isfinite(scale) and MIN_SCALE <= scale <= MAX_SCALE):
        raise NanoframesError("scale-invalid", f"--scale {scale} must be a number from "
                              f"{MIN_SCALE} to {MAX_SCALE:g}", file)
    if scale == 1:
        return width, height
    exact = Fraction(repr(scale))
    w, h = (max(1, math.floor(side * exact + Fraction(1, 2))) for side in (width, height))
    if w > MAX_SIDE or h > MAX_SIDE or w * h > MAX_PIXELS:
        raise NanoframesError("canvas-too-large", f"--scale {scale} draws {w}x{h}; the limit "
                              f"is {MAX_SIDE} px a side and {MAX_PIXELS:,} pixels", file)
    return w, h
