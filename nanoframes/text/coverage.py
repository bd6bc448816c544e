"""Which characters of a text its face has no glyph for (lint's ``glyph-missing``,
``nanoframes measure``).

ThorVG draws a character its face does not map as the face's empty box (or
nothing), silently: Arabic or Japanese in a Latin face. The face's own
``cmap`` says which characters it maps (:meth:`nanoframes.text.sfnt.Sfnt.char_map`,
read once per face file version). Control and format characters (zero-width
joiners, direction marks) draw nothing by design and are not reported.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path

from ..files import open_regular
from .faces import Face
from .sfnt import CharMap, SfntError, read_face

MAX_LISTED = 8  # characters named in one finding
_SILENT = frozenset({"Cc", "Cf", "Zl", "Zp"})


@lru_cache(maxsize=64)
def _char_map(path: str, mtime_ns: int, size: int, index: int = 0) -> CharMap | None:
    try:
        with open_regular(path) as fh:
            return read_face(fh, index).char_map()
    except (OSError, SfntError, ValueError):
        return None


def char_map(face: Face) -> CharMap | None:
    """The face's character map (cached per file version); None when unreadable."""
    try:
        st = Path(face.path).stat()
    except OSError:
        return None
    return _char_map(str(face.path), st.st_mtime_ns, st.st_size, face.index)


def missing_characters(face: Face, text: str) -> tuple[str, ...]:
    """The distinct characters of ``text``, in order, that ``face`` maps to no glyph."""
    cmap = char_map(face)
    if cmap is None or not text:
        return ()
    out: dict[str, None] = {}
    for ch in text:
        if ch not in out and unicodedata.category(ch) not in _SILENT \
                and not cmap.has_glyph(ord(ch)):
            out[ch] = None
    return tuple(out)


def describe_missing(chars: tuple[str, ...]) -> str:
    """``'ع' (U+0639), 'ر' (U+0631)`` and how many more."""
    named = ", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in chars[:MAX_LISTED])
    more = len(chars) - MAX_LISTED
    return named + (f" and {more} more" if more > 0 else "")
