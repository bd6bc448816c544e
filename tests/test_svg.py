"""The SVG vocabulary (nanoframes/model/svg.py): one number grammar, read strictly or
leniently as each call site says; the undrawn tags; the composition suffix."""

from __future__ import annotations

import pytest
from lxml import etree

from nanoframes.errors import NanoframesError
from nanoframes.model.numbers import evenly_spaced
from nanoframes.model.svg import (
    COMPOSITION_SUFFIX,
    composition_stem,
    first_number,
    is_composition_name,
    is_drawn,
    parse_number,
    read_number,
)


def el(**attrs: str):
    return etree.fromstring(etree.tostring(etree.Element("rect", attrs)))


@pytest.mark.parametrize("raw, expected", [
    ("12", 12.0), (" -3.5 ", -3.5), (".5", 0.5), ("1e3", 1000.0), ("10px", 10.0),
    ("10 px", 10.0), ("+2", 2.0), ("1E-2", 0.01),
])
def test_numbers(raw: str, expected: float) -> None:
    assert parse_number(raw) == expected


@pytest.mark.parametrize("raw", ["", "  ", "1_5", "nan", "inf", "infinity", "12pt", "10%",
                                 "1,5", "abc", "1e999", "--1", "10 20"])
def test_not_numbers(raw: str) -> None:
    assert parse_number(raw) is None


def test_percent_only_where_asked() -> None:
    assert parse_number("50%", percent=True) == 0.5
    assert parse_number("50%") is None
    assert parse_number("0.25", percent=True) == 0.25


def test_absent_is_the_default_in_both_modes() -> None:
    assert read_number(el(), "x", 7.0, strict=True) == 7.0
    assert read_number(el(), "x", 7.0, strict=False) == 7.0
    assert read_number(el(), "x", strict=True) is None


@pytest.mark.parametrize("raw", ["", "wide", "nan", "1_0"])
def test_strict_refuses_what_lenient_defaults(raw: str) -> None:
    element = el(x=raw)
    assert read_number(element, "x", 3.0, strict=False) == 3.0
    with pytest.raises(NanoframesError) as info:
        read_number(element, "x", 3.0, strict=True, file="comp.nf.svg")
    assert info.value.code == "attr-invalid"
    assert "x=" in info.value.message and "<rect>" in info.value.message
    assert info.value.file == "comp.nf.svg"


def test_sign() -> None:
    assert read_number(el(w="0"), "w", strict=True, sign="non-negative") == 0.0
    with pytest.raises(NanoframesError, match="positive number"):
        read_number(el(w="0"), "w", strict=True, sign="positive")
    with pytest.raises(NanoframesError, match="non-negative number"):
        read_number(el(w="-1"), "w", strict=True, sign="non-negative")
    assert read_number(el(w="-1"), "w", 5.0, strict=False, sign="non-negative") == 5.0


def test_first_number_of_a_list() -> None:
    assert first_number(el(x="10 20 30"), "x") == 10.0
    assert first_number(el(x="-4.5,2"), "x") == -4.5
    assert first_number(el(), "x") == 0.0


def test_undrawn_ancestors() -> None:
    root = etree.fromstring('<svg xmlns="http://www.w3.org/2000/svg"><g><rect/></g>'
                            '<metadata><g><image/></g></metadata>'
                            '<foreignObject><rect/></foreignObject></svg>')
    drawn = {etree.QName(e).localname + str(is_drawn(e)) for e in root.iter("{*}rect", "{*}image")}
    assert drawn == {"rectTrue", "imageFalse", "rectFalse"}


def test_suffix() -> None:
    assert COMPOSITION_SUFFIX == ".nf.svg"
    assert is_composition_name("a.nf.svg") and not is_composition_name("a.svg")
    assert composition_stem("title-card.nf.svg") == "title-card"
    assert composition_stem("plain.svg") == "plain"


@pytest.mark.parametrize("count, n, expected", [
    (10, 1, (0,)), (10, 2, (0, 9)), (10, 4, (0, 3, 6, 9)), (3, 5, (0, 1, 2)), (0, 3, ()),
])
def test_evenly_spaced(count: int, n: int, expected: tuple[int, ...]) -> None:
    assert evenly_spaced(count, n) == expected


def test_evenly_spaced_needs_a_position() -> None:
    with pytest.raises(ValueError):
        evenly_spaced(10, 0)
