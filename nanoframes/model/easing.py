"""Easing curves: segment progress in 0..1 -> eased progress (docs/compositions.md, "Easing").

Every curve is evaluated with plain IEEE-754 double arithmetic and, for cubic
beziers, a fixed number of bisection steps, so the same progress gives the same
bits on every machine. Progress is clamped to 0..1 first: the endpoints are exact
(0 -> 0.0, 1 -> 1.0) for every curve, while the output of an overshooting bezier
(``ease-out-back``) may leave 0..1 in between.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache

Easing = Callable[[float], float]

# 2**-52 of the parameter interval: past double precision near 1, so more steps
# change nothing; fixed so no answer depends on a tolerance.
_BISECTION_STEPS = 52


def _clamp_progress(p: float) -> float:
    # `not p > 0` also sends NaN to 0, so no curve ever sees NaN.
    if not p > 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return float(p)


def linear(p: float) -> float:
    return _clamp_progress(p)


def ease_in(p: float) -> float:
    p = _clamp_progress(p)
    return p * p


def ease_out(p: float) -> float:
    q = 1.0 - _clamp_progress(p)
    return 1.0 - q * q


def ease_in_out(p: float) -> float:
    p = _clamp_progress(p)
    return p * p * (3.0 - 2.0 * p)


def cubic_bezier(x1: float, y1: float, x2: float, y2: float) -> Easing:
    """The CSS ``cubic-bezier(x1, y1, x2, y2)`` curve from (0,0) to (1,1).

    With x1 and x2 in 0..1, x(s) is non-decreasing on 0..1, so bisection on s is
    always valid; it runs a fixed number of steps (no tolerance, no Newton step
    whose path could vary), then y is evaluated at the found s.
    """
    if not (0.0 <= x1 <= 1.0 and 0.0 <= x2 <= 1.0):
        raise ValueError(f"cubic-bezier x1 and x2 must lie in 0..1, got {x1}, {x2}")
    for v in (y1, y2):
        if not math.isfinite(v):
            raise ValueError(f"cubic-bezier y values must be finite, got {y1}, {y2}")
    # Power-basis coefficients: B(s) = ((a*s + b)*s + c)*s.
    cx = 3.0 * x1
    bx = 3.0 * (x2 - x1) - cx
    ax = 1.0 - cx - bx
    cy = 3.0 * y1
    by = 3.0 * (y2 - y1) - cy
    ay = 1.0 - cy - by

    def curve(p: float) -> float:
        p = _clamp_progress(p)
        if p == 0.0 or p == 1.0:
            return p
        lo, hi = 0.0, 1.0
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            if ((ax * mid + bx) * mid + cx) * mid < p:
                lo = mid
            else:
                hi = mid
        s = 0.5 * (lo + hi)
        return ((ay * s + by) * s + cy) * s

    curve.__name__ = f"cubic_bezier({x1}, {y1}, {x2}, {y2})"
    return curve


# The table of docs/compositions.md ("Easing"), in its order.
BEZIER_EASINGS: dict[str, tuple[float, float, float, float]] = {
    "ease-out-cubic": (0.215, 0.61, 0.355, 1.0),
    "ease-in-out-cubic": (0.645, 0.045, 0.355, 1.0),
    "ease-out-expo": (0.16, 1.0, 0.3, 1.0),
    "ease-out-back": (0.175, 0.885, 0.32, 1.275),
    "ease-in-back": (0.6, -0.28, 0.735, 0.045),
    "standard": (0.2, 0.0, 0.0, 1.0),
    "emphasized": (0.05, 0.7, 0.1, 1.0),
    "accelerate": (0.3, 0.0, 1.0, 1.0),
    "decelerate": (0.0, 0.0, 0.0, 1.0),
    "apple": (0.25, 0.1, 0.25, 1.0),
    "gentle": (0.4, 0.0, 0.2, 1.0),
}

NAMED_EASINGS: dict[str, Easing] = {
    "linear": linear,
    "ease-in": ease_in,
    "ease-out": ease_out,
    "ease-in-out": ease_in_out,
    **{name: cubic_bezier(*points) for name, points in BEZIER_EASINGS.items()},
}

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_CUBIC_BEZIER = re.compile(
    rf"cubic-bezier\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)"
)


@lru_cache(maxsize=256)
def _parse_named(name: str) -> Easing | None:
    key = name.strip().lower()
    named = NAMED_EASINGS.get(key)
    if named is not None:
        return named
    m = _CUBIC_BEZIER.fullmatch(key)
    if m is None:
        return None
    x1, y1, x2, y2 = (float(g) for g in m.groups())
    try:
        return cubic_bezier(x1, y1, x2, y2)
    except ValueError:  # x out of 0..1, or a number too large to be finite
        return None


def parse_ease(name: str | None) -> Easing | None:
    """The curve a keyframe's ``ease`` names; ``None`` if it names none.

    No ease (``None``) means linear. Names are case-insensitive and may carry
    surrounding whitespace, as CSS keywords do.
    """
    if name is None:
        return linear
    if not isinstance(name, str):
        return None
    return _parse_named(name)


def is_known_ease(name: str) -> bool:
    return parse_ease(name) is not None


def ease(name: str | None, p: float) -> float:
    """Eased progress; an unknown name renders linear (lint reports it)."""
    return (parse_ease(name) or linear)(p)
