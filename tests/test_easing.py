"""Easing curves against their definitions (docs/compositions.md, "Easing")."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from nanoframes.model.easing import (
    BEZIER_EASINGS,
    NAMED_EASINGS,
    cubic_bezier,
    ease,
    is_known_ease,
    parse_ease,
)

CONTRACT_NAMES = {
    "linear", "ease-in", "ease-out", "ease-in-out", "ease-out-cubic", "ease-in-out-cubic",
    "ease-out-expo", "ease-out-back", "ease-in-back", "standard", "emphasized", "accelerate",
    "decelerate", "apple", "gentle",
}
PROGRESS = [0.01, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.99]

POLYNOMIALS = {
    "linear": lambda t: t,
    "ease-in": lambda t: t**2,
    "ease-out": lambda t: 1 - (1 - t) ** 2,
    "ease-in-out": lambda t: 3 * t**2 - 2 * t**3,
}


def reference_bezier(x1: float, y1: float, x2: float, y2: float, p: float) -> float:
    """Independent of the module: sample the Bernstein form densely, invert by
    linear interpolation of the sampled x(s) -> y(s) table."""
    s = np.linspace(0.0, 1.0, 400_001)
    u = 1.0 - s
    x = 3 * u * u * s * x1 + 3 * u * s * s * x2 + s**3
    y = 3 * u * u * s * y1 + 3 * u * s * s * y2 + s**3
    return float(np.interp(p, x, y))


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def test_every_contract_name_is_named():
    assert set(NAMED_EASINGS) == CONTRACT_NAMES


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
@pytest.mark.parametrize("p", PROGRESS)
def test_polynomial_curves(name, p):
    assert NAMED_EASINGS[name](p) == pytest.approx(POLYNOMIALS[name](p), abs=1e-15)


@pytest.mark.parametrize("name", sorted(BEZIER_EASINGS))
@pytest.mark.parametrize("p", PROGRESS)
def test_bezier_curves_match_independent_reference(name, p):
    x1, y1, x2, y2 = BEZIER_EASINGS[name]
    assert NAMED_EASINGS[name](p) == pytest.approx(reference_bezier(x1, y1, x2, y2, p), abs=1e-4)


def test_bezier_table_is_the_contracts():
    assert BEZIER_EASINGS == {
        "ease-out-cubic": (0.215, 0.61, 0.355, 1),
        "ease-in-out-cubic": (0.645, 0.045, 0.355, 1),
        "ease-out-expo": (0.16, 1, 0.3, 1),
        "ease-out-back": (0.175, 0.885, 0.32, 1.275),
        "ease-in-back": (0.6, -0.28, 0.735, 0.045),
        "standard": (0.2, 0, 0, 1),
        "emphasized": (0.05, 0.7, 0.1, 1),
        "accelerate": (0.3, 0, 1, 1),
        "decelerate": (0, 0, 0, 1),
        "apple": (0.25, 0.1, 0.25, 1),
        "gentle": (0.4, 0, 0.2, 1),
    }


@pytest.mark.parametrize("name", sorted(CONTRACT_NAMES))
def test_endpoints_are_exact_and_progress_is_clamped(name):
    f = NAMED_EASINGS[name]
    assert bits(f(0.0)) == bits(0.0)
    assert bits(f(1.0)) == bits(1.0)
    assert f(-0.5) == 0.0 and f(1.5) == 1.0
    assert f(float("nan")) == 0.0


def test_ease_out_back_overshoots_past_one():
    f = NAMED_EASINGS["ease-out-back"]
    peak = max(f(p / 100) for p in range(60, 81))
    assert peak > 1.05
    assert all(f(p / 100) < 1.0 for p in range(1, 30))


def test_ease_in_back_dips_below_zero_early():
    f = NAMED_EASINGS["ease-in-back"]
    assert min(f(p / 100) for p in range(1, 40)) < -0.05
    assert f(0.9) > 0.5


@pytest.mark.parametrize("name", sorted(CONTRACT_NAMES))
def test_deterministic_bits(name):
    f = NAMED_EASINGS[name]
    for p in PROGRESS:
        assert bits(f(p)) == bits(f(p))
        assert bits(ease(name, p)) == bits(f(p))


def test_rebuilt_bezier_gives_identical_bits():
    for name, points in BEZIER_EASINGS.items():
        g = cubic_bezier(*points)
        assert [bits(g(p)) for p in PROGRESS] == [bits(NAMED_EASINGS[name](p)) for p in PROGRESS]


def test_golden_values_pin_the_algorithm():
    # Exact bits: a change to the solver changes pixels, so it must be deliberate.
    assert NAMED_EASINGS["ease-out-back"](0.5).hex() == GOLDEN["ease-out-back"]
    assert NAMED_EASINGS["apple"](0.3).hex() == GOLDEN["apple"]
    assert NAMED_EASINGS["decelerate"](0.1).hex() == GOLDEN["decelerate"]


GOLDEN = {
    "ease-out-back": "0x1.114b21fd218a6p+0",
    "apple": "0x1.06d13ea9d7d56p-1",
    "decelerate": "0x1.c90ad695440bep-2",
}


def test_parse_ease_names_and_defaults():
    assert parse_ease(None) is NAMED_EASINGS["linear"]
    assert parse_ease("ease-in") is NAMED_EASINGS["ease-in"]
    assert parse_ease("  Ease-In ") is NAMED_EASINGS["ease-in"]
    assert parse_ease("bounce") is None
    assert parse_ease("") is None
    assert parse_ease(3) is None  # type: ignore[arg-type]


def test_parse_cubic_bezier():
    f = parse_ease("cubic-bezier(0.25, 0.1, 0.25, 1)")
    assert f is not None
    assert bits(f(0.3)) == bits(NAMED_EASINGS["apple"](0.3))
    g = parse_ease("cubic-bezier( .2 ,-1.5, 0.8, 2.5e0 )")  # y is free
    assert g is not None and g(0.0) == 0.0 and g(1.0) == 1.0
    assert g(0.5) == pytest.approx(reference_bezier(0.2, -1.5, 0.8, 2.5, 0.5), abs=1e-4)


@pytest.mark.parametrize(
    "text",
    [
        "cubic-bezier(1.1, 0, 0.5, 1)",  # x1 outside 0..1
        "cubic-bezier(0.1, 0, -0.5, 1)",  # x2 outside 0..1
        "cubic-bezier(0.1, 0, 0.5)",
        "cubic-bezier(0.1, 0, 0.5, 1, 2)",
        "cubic-bezier(a, 0, 0.5, 1)",
        "cubic-bezier(0.1, 1e999, 0.5, 1)",
        "cubic-bezier 0.1, 0, 0.5, 1",
    ],
)
def test_invalid_cubic_bezier_is_unknown(text):
    assert parse_ease(text) is None
    assert not is_known_ease(text)


def test_cubic_bezier_constructor_rejects_x_outside_unit():
    with pytest.raises(ValueError):
        cubic_bezier(-0.1, 0, 0.5, 1)


def test_is_known_ease():
    for name in CONTRACT_NAMES:
        assert is_known_ease(name)
    assert is_known_ease("cubic-bezier(0,0,1,1)")
    assert not is_known_ease("ease")  # CSS's keyword is not one of ours


def test_unknown_ease_renders_linear():
    assert ease("no-such-ease", 0.3) == 0.3
    assert ease(None, 0.3) == 0.3
    assert ease("ease-in", 0.5) == 0.25
