"""Elements that text layout adds to a frame's document: the group that holds
several lines (or characters on a curve), a chip's rectangle, further lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lxml import etree

from ..model.timeline import fmt
from .measure import Ink

if TYPE_CHECKING:
    from .layout import Chip

# Attributes that describe the whole text, not one line: they move to the wrapping <g>.
GROUP_ATTRS = ("id", "transform", "clip-path", "mask", "filter")


def ns_of(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    return tag[1:].split("}", 1)[0] if tag.startswith("{") else ""


def group_for(el) -> etree._Element:
    """A ``<g>`` in ``el``'s place that takes the attributes describing the whole text."""
    group = etree.Element(f"{{{ns_of(el)}}}g" if ns_of(el) else "g")
    el.addprevious(group)
    group.tail, el.tail = el.tail, None
    for name in GROUP_ATTRS:
        value = el.attrib.pop(name, None)
        if value is not None:
            group.set(name, value)
    return group


def chip_rect(el, chip: Chip, ink: Ink) -> etree._Element:
    ns = ns_of(el)
    rect = etree.Element(f"{{{ns}}}rect" if ns else "rect")
    for name, value in (("x", ink.x - chip.pad_x), ("y", ink.y - chip.pad_y),
                        ("width", ink.w + 2 * chip.pad_x), ("height", ink.h + 2 * chip.pad_y),
                        ("rx", chip.rx), ("ry", chip.rx)):
        rect.set(name, fmt(value))
    rect.set("fill", chip.fill)
    if chip.alpha < 1.0:
        rect.set("fill-opacity", fmt(chip.alpha))
    return rect


def line_copy(el) -> etree._Element:
    """A further line: the text's own paint attributes, no content (it is written after).
    Directives (data-*) are left behind: bake strips them from ``el`` alone."""
    attrib = {k: v for k, v in el.attrib.items() if not k.startswith("data-")}
    return etree.Element(el.tag, attrib=attrib)
