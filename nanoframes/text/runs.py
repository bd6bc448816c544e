"""Positioned pieces of one ``<text>`` laid out as runs (docs/text.md, "Positioned
spans").

SVG's rules, with measured advances: a piece starts where the previous one
ended (the pen moves by the previous piece's advance), unless its span gives
an absolute ``x`` or ``y``; ``dx``/``dy`` then move the pen. A piece with an
absolute position starts a new *chunk*, and ``text-anchor`` places each chunk
by its ink, as it places a line.

ThorVG gives no advance widths, only ink boxes, so the advance of a string is
measured between two sentinel glyphs: ``ink("H" + s + "H")``'s right edge
minus ``ink("HH")``'s. The sentinels' side bearings cancel, and spaces inside
are not trimmed; ThorVG applies no kerning, so the difference is the advance.
"""

from __future__ import annotations

from collections.abc import Callable

from .content import Piece
from .measure import Ink, union

_SENTINEL = "H"


def anchor_shift(ink: Ink | None, anchor: str) -> float:
    """How far to move the pen so the ink sits on x as ``anchor`` says."""
    if ink is None or ink.empty or anchor == "start":
        return 0.0
    if anchor == "middle":
        return -(ink.x + ink.w / 2)
    return -(ink.x + ink.w)  # end


def advance(measure: Callable[[str], Ink], text: str) -> float:
    """How far drawing ``text`` moves the pen (see the module's docstring)."""
    if not text:
        return 0.0
    wrapped = measure(_SENTINEL + text + _SENTINEL)
    bare = measure(_SENTINEL * 2)
    return (wrapped.x + wrapped.w) - (bare.x + bare.w)


def lay_pieces(pieces: tuple[Piece, ...], size: float, ex: float, anchor: str, x0: float,
               y0: float, measure: Callable[[str], Ink]
               ) -> list[tuple[str, float, float, Ink, tuple[tuple[str, str], ...]]]:
    """``(text, dx, dy, ink, paint)`` of each piece with ink, relative to the text's
    own ``x0``, ``y0``; ``measure`` is bound to the face and size, ``ex`` is the
    face's x-height in em."""

    def _px(value) -> float | None:
        if value is None or isinstance(value, float):
            return value
        number, unit = value
        return number * size * (ex if unit == "ex" else 1.0)

    placed: list[list] = []  # [text, pen x, pen y, ink, paint, chunk]
    cx = cy = 0.0
    chunk = 0
    for piece in pieces:
        x, y = _px(piece.x), _px(piece.y)
        if x is not None or y is not None:
            chunk += 1
        if x is not None:
            cx = x - x0
        if y is not None:
            cy = y - y0
        cx += _px(piece.dx) or 0.0
        cy += _px(piece.dy) or 0.0
        body = piece.text.strip(" ")
        if body:  # ThorVG trims the spaces around a run: the pen skips them instead
            lead = piece.text[:len(piece.text) - len(piece.text.lstrip(" "))]
            pen = cx + advance(measure, lead)
            placed.append([body, pen, cy, measure(body).moved(pen, cy), piece.paint, chunk])
        cx += advance(measure, piece.text)
    for number in {p[5] for p in placed}:
        members = [p for p in placed if p[5] == number]
        shift = anchor_shift(union([p[3] for p in members]), anchor)
        for p in members:
            p[1] += shift
            p[3] = p[3].moved(shift, 0.0)
    return [(text, dx, dy, ink, paint) for text, dx, dy, ink, paint, _ in placed]
