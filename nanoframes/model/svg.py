"""The SVG vocabulary nanoframes reads: namespaces, names, tags that never draw,
the composition suffix, and the one reader of numeric attributes.

Every module that reads an element's number goes through :func:`read_number`
and says at the call site how strict it is: ``strict=True`` where a bad value
is the author's mistake to report (``attr-invalid``, with the file and line),
``strict=False`` where the renderer's own reading decides and a bad value falls
back to the default (bake placing an image, a lint box, an auto pivot). Both
modes read the same grammar, so a value is a number in one place exactly when
it is a number in another.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Literal

from ..errors import NanoframesError

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XLINK_HREF = f"{{{XLINK_NS}}}href"

COMPOSITION_SUFFIX = ".nf.svg"
TIMELINE_TYPE = "application/nanoframes+json"  # the <script> that holds the timeline

# Elements whose content never draws: bake drops them, nothing inside them is
# baked, inlined or checked as drawn.
UNDRAWN_TAGS = frozenset(("script", "style", "foreignObject", "metadata"))
# The properties ``style=`` (or a sheet) may set that bake writes as attributes:
# SVG 1.1's presentation attributes, plus ``transform`` (one in SVG 2). Geometry
# (``x``, ``width``, ``r``...) is not among them: ``style="height:160px"`` does
# not size a rect, as in SVG 1.1 (docs/compositions.md, "Style sheets").
PRESENTATION_PROPS = frozenset("""
alignment-baseline baseline-shift clip clip-path clip-rule color color-interpolation
color-interpolation-filters color-profile color-rendering cursor direction display
dominant-baseline enable-background fill fill-opacity fill-rule filter flood-color
flood-opacity font-family font-size font-size-adjust font-stretch font-style
font-variant font-weight glyph-orientation-horizontal glyph-orientation-vertical
image-rendering kerning letter-spacing lighting-color marker-end marker-mid
marker-start mask opacity overflow pointer-events shape-rendering stop-color
stop-opacity stroke stroke-dasharray stroke-dashoffset stroke-linecap stroke-linejoin
stroke-miterlimit stroke-opacity stroke-width text-anchor text-decoration
text-rendering unicode-bidi visibility word-spacing writing-mode transform
paint-order mix-blend-mode isolation vector-effect
""".split())
# Containers whose content is drawn only where something references it (or never).
REFERENCED_ONLY_TAGS = frozenset((
    "defs", "clipPath", "mask", "pattern", "marker", "symbol", "linearGradient",
    "radialGradient", "filter",
))

# An SVG number: sign, digits, fraction, exponent. Used whole (``fullmatch``) by
# the attribute reader, and to find numbers inside lists and transforms.
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

# The exact decimals of the canvas (size, fps, duration), read as fractions. Bounded
# digits and exponent: Fraction("1e999999999") would compute 10**999999999.
DECIMAL = re.compile(r"^\s*[+-]?(\d{1,20}\.?\d{0,20}|\.\d{1,20})([eE][+-]?\d{1,2})?\s*$")

Sign = Literal["any", "non-negative", "positive"]


def local_name(el) -> str:
    """The tag without its namespace (``""`` for comments and processing instructions)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def href_of(el) -> str | None:
    """``href``, else ``xlink:href``."""
    return el.get("href") if el.get("href") is not None else el.get(XLINK_HREF)


def is_drawn(el) -> bool:
    """False when ``el`` sits inside an element whose content never draws."""
    return not any(local_name(a) in UNDRAWN_TAGS for a in el.iterancestors())


def is_composition_name(name: str) -> bool:
    return name.endswith(COMPOSITION_SUFFIX)


def composition_stem(name: str) -> str:
    """``title-card`` for ``title-card.nf.svg``; other names lose their last suffix."""
    if name.endswith(COMPOSITION_SUFFIX):
        return name[: -len(COMPOSITION_SUFFIX)]
    return Path(name).stem


def parse_number(raw: str, *, percent: bool = False) -> float | None:
    """The value of one attribute's text, or None when it is not a finite number.

    Surrounding spaces and a ``px`` unit are allowed; with ``percent``, ``50%``
    is 0.5. Python's ``float()`` is not the grammar: ``1_5``, ``nan`` and
    ``infinity`` are not numbers here.
    """
    text = raw.strip()
    per = 1
    if percent and text.endswith("%"):
        text, per = text[:-1].rstrip(), 100
    else:
        text = text.removesuffix("px").rstrip()
    if not NUMBER.fullmatch(text):
        return None
    value = float(text) / per if per != 1 else float(text)
    return value if math.isfinite(value) else None


def read_number(el, name: str, default: float | None = None, *, strict: bool,
                file: str | Path | None = None, sign: Sign = "any",
                percent: bool = False) -> float | None:
    """Attribute ``name`` of ``el`` as a number; ``default`` when it is absent.

    ``strict=True``: a value that is not a finite number, or has the wrong
    ``sign``, raises ``attr-invalid`` naming ``file`` and the element's line.
    ``strict=False``: such a value reads as ``default``.
    """
    raw = el.get(name)
    if raw is None:
        return default
    value = parse_number(raw, percent=percent)
    if value is not None and (sign == "any" or value > 0 or (sign == "non-negative"
                                                              and value == 0)):
        return value
    if not strict:
        return default
    shown = raw if len(raw) <= 40 else raw[:40] + "..."
    wanted = "a number" if sign == "any" else f"a {sign} number"
    raise NanoframesError("attr-invalid", f"{name}={shown!r} on <{local_name(el)}> is not "
                          f"{wanted}", file, el.sourceline)


def first_number(el, name: str, default: float = 0.0) -> float:
    """The first number of a list attribute (``x="10 20 30"`` positions each glyph in
    SVG; ThorVG and nanoframes' layout use the first); ``default`` when there is none."""
    m = NUMBER.search(el.get(name) or "")
    return float(m.group()) if m else default


def exact_number(text: str | None, code: str, what: str, file: str | Path | None,
                 line: int | None) -> Fraction:
    """``text`` as an exact fraction (the frame count is computed from these);
    anything else raises ``code``."""
    if text is None or not DECIMAL.match(text):
        shown = text if text is None or len(text) <= 40 else text[:40] + "..."
        raise NanoframesError(code, f"{what} must be a number, got {shown!r}", file, line)
    return Fraction(text.strip())
