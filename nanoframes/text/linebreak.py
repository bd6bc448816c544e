"""Line breaking for ``data-wrap`` (docs/text.md): break units and greedy wrapping.

Text breaks at spaces; each East Asian wide or fullwidth character
(``unicodedata.east_asian_width`` W or F) is a break unit of its own; a word
wider than the limit on its own breaks between characters, keeping combining
marks with the character before them. Widths come from a caller-supplied
function (renderer-exact ink widths in practice), so this module draws nothing
and knows nothing about fonts.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def break_units(text: str) -> list[tuple[str, bool]]:
    """``text`` as ``(unit, space_before)`` pairs: words split at spaces, and each
    East Asian wide character a unit of its own (those lines may break anywhere
    between them). Combining marks stay with the character before them."""
    units: list[tuple[str, bool]] = []
    word, word_space, space = "", False, False
    for ch in text:
        if ch == " ":
            if word:
                units.append((word, word_space))
                word = ""
            space = True
        elif unicodedata.combining(ch) and not word and units:
            unit, before = units[-1]
            units[-1] = (unit + ch, before)
        elif _wide(ch):
            if word:
                units.append((word, word_space))
                word = ""
            units.append((ch, space))
            space = False
        else:
            if not word:
                word_space, space = space, False
            word += ch
    if word:
        units.append((word, word_space))
    return units


def _clusters(word: str) -> list[str]:
    out: list[str] = []
    for ch in word:
        if out and unicodedata.combining(ch):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _break_word(word: str, width: Callable[[str], float], limit: float) -> list[str]:
    """A word wider than ``limit`` in pieces that fit (at least one character each)."""
    pieces: list[str] = []
    piece = ""
    for cluster in _clusters(word):
        if piece and width(piece + cluster) > limit:
            pieces.append(piece)
            piece = cluster
        else:
            piece += cluster
    return pieces + [piece] if piece else pieces


def wrap_lines(text: str, width: Callable[[str], float], limit: float) -> list[str]:
    """Greedy line breaking with measured widths (each candidate line measured whole,
    so kerning across the join counts)."""
    lines: list[str] = []
    current = ""
    for unit, space in break_units(text):
        if current:
            candidate = current + (" " if space else "") + unit
            if width(candidate) <= limit:
                current = candidate
                continue
            lines.append(current)
        if width(unit) <= limit:
            current = unit
        else:
            *full, current = _break_word(unit, width, limit)
            lines.extend(full)
    if current:
        lines.append(current)
    return lines or [""]
