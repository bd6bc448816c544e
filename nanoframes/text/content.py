"""What a ``<text>`` says: its characters, and where its positioned spans start.

ThorVG flattens a ``<text>``'s spans into one run and drops their positions,
collapses every run of XML whitespace and trims the ends (docs/thorvg.md,
"Text"), so the characters and runs are read here, the way SVG defines them:

- A descendant with ``display="none"`` (attribute or ``style=``) draws
  nothing; the text after it (its tail) still belongs to its parent.
- ``xml:space="preserve"`` (on the text or an ancestor) keeps every space:
  newlines and tabs become spaces, nothing is collapsed or trimmed. The
  spaces ThorVG would lose (leading, trailing, and all but the first of a
  run) are written as no-break spaces (U+00A0), which it keeps and which
  faces draw with the advance of a space. Otherwise whitespace collapses to
  one space and the ends are trimmed, as SVG does by default.
- A ``<tspan>`` with ``x``, ``y``, ``dx`` or ``dy`` starts a positioned piece
  (:class:`Piece`): layout draws each piece as its own ``<text>``. Only the
  first value of a list is read (per-character positions are not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .style import parse_style_attr

XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
NBSP = "\u00a0"
POSITION_ATTRS = ("x", "y", "dx", "dy")
# What a positioned piece keeps of its span's own paint (the text's face and size apply).
PIECE_PAINT = ("fill", "stroke", "fill-opacity", "stroke-opacity", "stroke-width")
_WS = re.compile(r"\s+")
_XML_WS = re.compile(r"[ \t\n\r]")
_LENGTH = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(px|em|ex)?\s*$")


@dataclass(frozen=True)
class Piece:
    """A run of characters and how it is positioned: ``x``/``y`` absolute (None:
    where the previous piece ended), ``dx``/``dy`` relative, each in user units
    or as ``(number, "em"|"ex")``."""

    text: str
    x: object = None
    y: object = None
    dx: object = None
    dy: object = None
    paint: tuple[tuple[str, str], ...] = ()

    @property
    def positioned(self) -> bool:
        return any(v is not None for v in (self.x, self.y, self.dx, self.dy))


@dataclass(frozen=True)
class Content:
    text: str  # every character drawn, in order
    pieces: tuple[Piece, ...] | None  # None: no positioned span, one run


def _local(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    return tag.rsplit("}", 1)[-1]


def _hidden(el) -> bool:
    value = parse_style_attr(el.get("style")).get("display", el.get("display"))
    return (value or "").strip().lower() == "none"


def _preserving(el) -> bool:
    for node in (el, *el.iterancestors()):
        value = node.get(XML_SPACE)
        if value is not None:
            return value.strip() == "preserve"
    return False


def length(value: str | None):
    """The first of a list of lengths: a float (px), ``(n, "em"|"ex")`` or None."""
    if value is None:
        return None
    first = value.replace(",", " ").split()
    m = _LENGTH.match(first[0]) if first else None
    if not m:
        return None
    number = float(m.group(1))
    return (number, m.group(2)) if m.group(2) in ("em", "ex") else number


def _paint(el) -> tuple[tuple[str, str], ...]:
    style = parse_style_attr(el.get("style"))
    found = ((name, style.get(name, el.get(name))) for name in PIECE_PAINT)
    return tuple((name, value) for name, value in found if value is not None)


def _walk(el, top: bool, out: list[list]) -> None:
    """Append ``[text, span or None]`` segments; a positioned span opens a new one."""
    if not top and _hidden(el):
        return
    opens = not top and _local(el) == "tspan" and any(el.get(a) is not None
                                                        for a in POSITION_ATTRS)
    if opens:
        out.append(["", el])
    if el.text and isinstance(el.tag, str):
        out[-1][0] += el.text
    for child in el:
        if isinstance(child.tag, str):
            _walk(child, False, out)
        if child.tail:
            out[-1][0] += child.tail
    if opens:  # what follows continues where this span ended: a piece of its own
        out.append(["", None])


def _collapse(text: str, preserve: bool, first: bool, last: bool) -> str:
    if preserve:
        text = _XML_WS.sub(" ", text)
        text = re.sub(r"(?<= ) ", NBSP, text)  # the 2nd, 3rd... of a run
        lead = len(text) - len(text.lstrip(" "))
        text = NBSP * lead + text[lead:]
        trail = len(text) - len(text.rstrip(" "))
        return text[:len(text) - trail] + NBSP * trail
    text = _WS.sub(" ", text)
    return text.lstrip(" ") if first else text


def collect(el) -> Content:
    """The characters a ``<text>`` draws, and its pieces where a span is positioned."""
    segments: list[list] = [["", None]]
    _walk(el, True, segments)
    preserve = _preserving(el)
    if all(span is None for _, span in segments):
        whole = "".join(text for text, _ in segments)
        return Content(_collapse(whole, preserve, True, True).rstrip(" "), None)
    pieces: list[Piece] = []
    previous_space = True  # collapsing runs across pieces, as one text
    for text, span in segments:
        text = _collapse(text, preserve, previous_space, False)
        if not preserve and previous_space:
            text = text.lstrip(" ")
        if text:
            previous_space = text.endswith(" ")
        if not text and span is None:
            continue
        if span is None:
            pieces.append(Piece(text))
        else:
            pieces.append(Piece(text, length(span.get("x")), length(span.get("y")),
                                length(span.get("dx")), length(span.get("dy")), _paint(span)))
    if pieces and not preserve:
        pieces[-1] = Piece(pieces[-1].text.rstrip(" "), *_rest(pieces[-1]))
    return Content("".join(p.text for p in pieces), tuple(pieces))


def _rest(piece: Piece) -> tuple:
    return piece.x, piece.y, piece.dx, piece.dy, piece.paint
