"""Numbers as nanoframes reads and writes them: deterministic text, clamping."""

from __future__ import annotations

import math


def is_number(v: object) -> bool:
    """A JSON number (bool is an int in Python, but not a number in JSON)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fmt(x: float) -> str:
    """A number as bake writes it: 6 decimals at most, no trailing zeros, no '-0'.

    ``'%.6f'`` is correctly rounded by CPython's own dtoa, so the text is the same
    on every machine.
    """
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"cannot write a non-finite number: {x!r}")
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def clamp01(x: float) -> float:
    x = float(x)
    if not x > 0.0:  # also NaN
        return 0.0
    return min(x, 1.0)


