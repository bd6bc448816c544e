"""Text along a curve: ``data-curve-d="PATH"`` and ``data-curve-circle="cx,cy,r[,deg]"``.

Each character (a base character with its combining marks) gets an advance
measured by the rasterizer: how far the right edge of the measured ink of
``text[:k] + "|"`` moves when the character is added (the end mark keeps a
trailing space's width in the measurement, and the difference carries kerning).
Characters follow one another along the curve by those advances from its
start (``text-anchor`` moves the whole run: ``middle`` centres it on the
curve's length, ``end`` ends it at the curve's end), and each is drawn as its
own ``<text>`` whose baseline centre sits on the curve at the middle of its
advance, rotated to the curve's tangent there. Whitespace advances but draws
nothing. The curve is sampled by :mod:`nanoframes.model.path` (fixed
subdivision, no libm), so the placement is the same on every machine.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import NanoframesError
from ..model.path import Curve, PathError, circle, path_curve
from .measure import Ink, union

CURVE_ATTRS = ("data-curve-d", "data-curve-circle")
MAX_CURVE_CHARS = 1000  # characters on one curve: each costs a measurement of its prefix
_END_MARK = "|"

Measure = Callable[[float, str], Ink]  # (size px, text) -> ink box


@dataclass(frozen=True)
class Glyph:
    """One character placed on the curve."""

    text: str
    advance: float
    matrix: tuple[float, float, float, float, float, float]  # glyph space -> text space
    ink: Ink  # the drawn ink, axis-aligned, in the text's user space


@dataclass(frozen=True)
class CurveLayout:
    size: float
    glyphs: tuple[Glyph, ...]
    advance: float  # the run's whole length along the curve
    length: float  # the curve's length

    @property
    def ink(self) -> Ink | None:
        return union([g.ink for g in self.glyphs])


def read_curve(el, file) -> Curve | None:
    """The curve a ``<text>`` asks to follow, or None; a bad value is ``attr-invalid``."""
    d, ring = el.get("data-curve-d"), el.get("data-curve-circle")
    if d is not None and ring is not None:
        raise NanoframesError("attr-invalid", "data-curve-d and data-curve-circle are both "
                              "set; give one curve", file, el.sourceline)
    if d is not None:
        try:
            curve = path_curve(d)
        except (PathError, ValueError, OverflowError) as exc:
            raise NanoframesError("attr-invalid", f"data-curve-d: {exc}", file,
                                  el.sourceline) from None
        if not all(abs(v) <= 1e9 for p in curve.points for v in p):
            raise NanoframesError("attr-invalid", "data-curve-d: coordinates beyond ±1e9",
                                  file, el.sourceline)
        return curve
    if ring is not None:
        parts = ring.replace(",", " ").split()
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) not in (3, 4) or not all(abs(v) <= 1e9 for v in values) \
                or values[2] <= 0:
            raise NanoframesError("attr-invalid", f"data-curve-circle={ring!r} must be "
                                  "'cx,cy,r' or 'cx,cy,r,startDeg' with r > 0", file,
                                  el.sourceline)
        return circle(*values)
    return None


def clusters(text: str) -> list[str]:
    """Characters with their combining marks attached (one placed glyph each)."""
    out: list[str] = []
    for ch in text:
        if out and unicodedata.combining(ch):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def advances(measure: Measure, size: float, chars: list[str]) -> list[float]:
    """Each character's advance, from the rasterizer's measurement of prefixes."""
    def right(prefix: str) -> float:
        ink = measure(size, prefix + _END_MARK)
        return ink.x + ink.w

    out, before, prefix = [], right(""), ""
    for ch in chars:
        prefix += ch
        after = right(prefix)
        out.append(max(0.0, after - before))
        before = after
    return out


def lay_along(curve: Curve, text: str, size: float, anchor: str, measure: Measure,
              file=None, line: int | None = None) -> CurveLayout:
    """Place ``text`` along ``curve`` (see the module docstring)."""
    chars = clusters(text)
    if len(chars) > MAX_CURVE_CHARS:
        raise NanoframesError("text-too-long", f"{len(chars)} characters on one curve; the "
                              f"limit is {MAX_CURVE_CHARS}", file, line)
    adv = advances(measure, size, chars)
    total = sum(adv)
    start = 0.0
    if anchor == "middle":
        start = (curve.length - total) / 2
    elif anchor == "end":
        start = curve.length - total
    glyphs, s = [], start
    for ch, a in zip(chars, adv):
        if not ch.isspace():
            x, y, tx, ty = curve.at(s + a / 2)
            matrix = (tx, ty, -ty, tx, x, y)
            own = measure(size, ch).moved(-a / 2, 0.0)
            glyphs.append(Glyph(ch, a, matrix, _through(matrix, own)))
        s += a
    return CurveLayout(size, tuple(glyphs), total, curve.length)


def _through(m, ink: Ink) -> Ink:
    """The axis-aligned box of ``ink`` through the matrix ``m`` (a b c d e f)."""
    if ink.empty:
        return ink
    a, b, c, d, e, f = m
    xs, ys = [], []
    for x in (ink.x, ink.x + ink.w):
        for y in (ink.y, ink.y + ink.h):
            xs.append(a * x + c * y + e)
            ys.append(b * x + d * y + f)
    return Ink(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
