"""Presence: when an element is on screen (``data-start``, ``data-duration``) and
how it fades in and out (``data-fade``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ..errors import NanoframesError
from .svg import DECIMAL, local_name, read_number


@dataclass(frozen=True)
class Presence:
    start: float
    end: float          # math.inf when the element stays until the film ends
    fade: float

    def factor(self, t: float) -> float:
        """0 when absent; else the fade factor min(1, (t-start)/fade, (end-t)/fade)."""
        if not (self.start <= t < self.end):
            return 0.0
        if self.fade <= 0:
            return 1.0
        return min(1.0, (t - self.start) / self.fade, (self.end - t) / self.fade)


def presence_of(el, path: Path) -> Presence | None:
    """The clip window of an element, or None when it has no presence attributes.

    Without ``data-duration`` the element stays until the film ends, and that end is
    where a ``data-fade`` fades it out (docs/compositions.md, "Presence"). The
    root's ``data-duration`` is the film's length, not a clip: the root has no
    presence.
    """
    parent = el.getparent()
    if parent is None or el.get("data-start") is None and el.get("data-duration") is None \
            and el.get("data-fade") is None:
        return None
    start = read_number(el, "data-start", 0.0, strict=True, file=path)
    length = read_number(el, "data-duration", None, strict=True, file=path)
    fade = read_number(el, "data-fade", 0.0, strict=True, file=path)
    if (length is not None and length < 0) or fade < 0:
        raise NanoframesError("attr-invalid", f"negative data-duration/data-fade on "
                              f"<{local_name(el)}>", path, el.sourceline)
    if length is None and fade > 0:
        film = el.getroottree().getroot().get("data-duration", "1.0")
        if DECIMAL.match(film):  # else parse refuses it as duration-invalid
            length = max(0.0, float(Fraction(film.strip())) - start)
    return Presence(start, math.inf if length is None else start + length, fade)
