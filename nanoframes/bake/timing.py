"""Where a nested film or a video clip sits in its parent's time.

Both are an ``<image>`` with the same four directives: ``data-start`` (when it
begins, in the parent's seconds), ``data-in`` (where in its own time it begins),
``data-speed`` and ``data-loop``. Its own time at parent time ``t`` is
``in + (t - start) x speed``; how that is wrapped or held at the ends is the
caller's (a nested film clamps to its frames, a clip holds its first and last).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.svg import read_number

_FALSEY = frozenset(("false", "0", "no", "off"))


@dataclass(frozen=True)
class Timing:
    start: float = 0.0
    in_: float = 0.0
    speed: float = 1.0
    loop: bool = False


def read_timing(el, file: Path | str | None) -> Timing:
    """The four directives of ``el``; a value that is not a number is ``attr-invalid``."""
    def number(name: str, default: float) -> float:
        return read_number(el, name, default, strict=True, file=file)

    raw = el.get("data-loop")  # present (any value but false/0/no/off) means wrap
    return Timing(number("data-start", 0.0), number("data-in", 0.0), number("data-speed", 1.0),
                  raw is not None and raw.strip().lower() not in _FALSEY)
