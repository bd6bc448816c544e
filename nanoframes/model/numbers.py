"""Numbers as nanoframes reads and writes them: deterministic text, clamping,
evenly spaced samples."""

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




def evenly_spaced(count: int, n: int) -> tuple[int, ...]:
    """``n`` evenly spaced positions in ``range(count)``, first and last included;
    all of them when ``n >= count``. Integer arithmetic, so the same on every machine."""
    if n < 1:
        raise ValueError(f"a sample needs at least one position, got {n}")
    if n >= count:
        return tuple(range(count))
    if n == 1:
        return (0,)
    span, steps = count - 1, n - 1
    # round(i * span / steps), half up; strictly increasing because span >= steps
    return tuple((2 * i * span + steps) // (2 * steps) for i in range(n))
