"""CSS-ish reading of the font properties of an SVG element.

ThorVG only reads ``font-family``/``font-size`` written on the ``<text>`` itself
(docs/thorvg.md, "Text"), so nanoframes computes the inherited values here, the way
a browser would: a ``style=`` declaration beats the presentation attribute on
the same element, and an unset or ``inherit`` value defers to the parent. An
invalid value is ignored like a browser ignores it, so the parent's value (or
the default) applies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

DEFAULT_SIZE_PX = 16.0
DEFAULT_WEIGHT = 400
EX_PER_EM = 0.5  # 1ex where a face does not give its x-height: CSS's fallback, half an em

_COMMENT = re.compile(r"/\*.*?(\*/|$)", re.DOTALL)
_SIZE = re.compile(r"^([+]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*([a-z%]*)$", re.IGNORECASE)
# Absolute lengths in px (CSS: 1in = 96px = 72pt).
_UNITS = {"": 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54,
          "mm": 96 / 25.4, "q": 96 / 101.6}
_SIZE_KEYWORDS = {"xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0,
                  "large": 18.0, "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0}
_WEIGHT_KEYWORDS = {"normal": 400, "bold": 700}


@dataclass(frozen=True)
class FontRequest:
    """What an element asks for: the raw family list and the computed values."""

    family: str | None = None
    weight: int = DEFAULT_WEIGHT
    style: str = "normal"
    size_px: float = DEFAULT_SIZE_PX


def split_unquoted(text: str, sep: str) -> list[str]:
    """Split ``text`` at ``sep`` except inside single or double quotes (CSS lists and
    declarations); an unterminated quote runs to the end."""
    parts: list[str] = []
    buf: list[str] = []
    quote = ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == sep:
            parts.append("".join(buf))
            buf = []
            continue
        buf.append(ch)
    parts.append("".join(buf))
    return parts


def parse_style_attr(style: str | None) -> dict[str, str]:
    """``"font-family: 'A; B', serif; font-weight:bold"`` → ``{property: value}``.

    Property names are lower-cased, values stripped (``!important`` dropped);
    declarations without a name or a colon are skipped rather than raised on.
    Semicolons inside quotes do not split. A later duplicate wins, as in CSS.
    The ``font`` shorthand is expanded into the longhands it sets
    (:func:`expand_font`); an invalid one is ignored, as CSS ignores it.
    """
    out: dict[str, str] = {}
    if not style:
        return out
    for part in split_unquoted(_COMMENT.sub(" ", style), ";"):
        name, sep, value = part.partition(":")
        name = name.strip().lower()
        value = value.strip()
        if value.lower().endswith("!important"):
            value = value[: -len("!important")].rstrip()
        if sep and value and re.fullmatch(r"-?[a-z_][a-z0-9_-]*", name):
            if name == "font":
                out.update(expand_font(value) or {})
            else:
                out[name] = value
    return out


_FONT_STYLES = ("normal", "italic", "oblique")
_FONT_VARIANTS = ("small-caps",)
_FONT_STRETCHES = ("ultra-condensed", "extra-condensed", "condensed", "semi-condensed",
                   "semi-expanded", "expanded", "extra-expanded", "ultra-expanded")


def expand_font(value: str) -> dict[str, str] | None:
    """The CSS ``font`` shorthand → its longhands, or None when invalid.

    ``[style || variant || weight || stretch] size[/line-height] family``: the
    size and the family are required; what the shorthand leaves out is reset to
    its initial value (CSS Fonts 4 §2.8). System fonts (``caption``...) are not
    read (None).
    """
    tokens = split_unquoted(value.strip(), " ")
    words = [t for t in tokens if t]
    out = {"font-style": "normal", "font-weight": "normal"}
    for k, word in enumerate(words):
        low = word.lower()
        if low == "normal" or low in _FONT_VARIANTS or low in _FONT_STRETCHES:
            continue
        if low in _FONT_STYLES:
            out["font-style"] = low
            continue
        if low in ("bold", "bolder", "lighter") or (
                re.fullmatch(r"\d+(?:\.\d+)?", low) and _parse_weight(low) is not None):
            out["font-weight"] = low  # a bare number is a weight, never a size
            continue
        size, _, _ = word.partition("/")
        if _parse_size(size, lambda: DEFAULT_SIZE_PX) is None:
            return None
        rest = words[k + 1:]
        if "/" in word and word.endswith("/") or rest[:1] == ["/"]:  # "12px/ 1.5", "12px / 1.5"
            rest = rest[2:] if rest[:1] == ["/"] else rest[1:]
        elif rest and rest[0].startswith("/"):
            rest = rest[1:]
        family = " ".join(rest).strip()
        if not family:
            return None
        out["font-size"] = size
        out["font-family"] = family
        return out
    return None


def _own_value(element: Any, name: str) -> str | None:
    """The value set on this element itself: ``style=`` first, then the attribute."""
    get = getattr(element, "get", None)
    if get is None:  # comments and processing instructions carry no style
        return None
    declared = parse_style_attr(get("style")).get(name)
    if declared is not None:
        return declared
    attr = get(name)
    if attr is None or not attr.strip():
        return None
    return attr.strip()


def _declarations(element: Any, name: str) -> Iterator[str]:
    """Every value of ``name`` from the element up through its ancestors, nearest first."""
    node = element
    while node is not None:
        value = _own_value(node, name)
        if value is not None and value.lower() != "inherit":
            yield value
        node = node.getparent()


def inherited(element: Any, name: str) -> str | None:
    """The nearest declared value of ``name`` (element, then ancestors); None if nowhere."""
    return next(_declarations(element, name), None)


def _parse_weight(value: str) -> int | str | None:
    """An absolute weight, or ``"bolder"``/``"lighter"``, or None when invalid."""
    v = value.strip().lower()
    if v in _WEIGHT_KEYWORDS:
        return _WEIGHT_KEYWORDS[v]
    if v in ("bolder", "lighter"):
        return v
    try:
        number = float(v)
    except ValueError:
        return None
    if not 1 <= number <= 1000:  # CSS Fonts 4 range; outside it is invalid
        return None
    return min(900, max(100, round(number)))


def _relative_weight(keyword: str, parent: int) -> int:
    # CSS Fonts 4 table for bolder/lighter against the inherited weight.
    if keyword == "bolder":
        return 400 if parent < 350 else 700 if parent < 550 else 900
    return 100 if parent < 550 else 400 if parent < 750 else 700


def _computed_weight(element: Any) -> int:
    node = element
    while node is not None:
        raw = _own_value(node, "font-weight")
        parsed = _parse_weight(raw) if raw is not None else None
        if isinstance(parsed, int):
            return parsed
        if isinstance(parsed, str):
            return _relative_weight(parsed, _computed_weight(node.getparent()))
        node = node.getparent()
    return DEFAULT_WEIGHT


def _parse_style(value: str) -> str | None:
    v = value.strip().lower()
    if v in ("normal", "italic"):
        return v
    if v == "oblique" or v.startswith("oblique "):  # "oblique 10deg": angle not used
        return "oblique"
    return None


def _parse_size(value: str, parent_px: Callable[[], float],
                parent_ex: Callable[[], float] = lambda: EX_PER_EM) -> float | None:
    """px for a font-size value; None when invalid. ``em``/``%`` scale the parent's size,
    ``ex`` the parent's size times its face's x-height (``parent_ex``, in em)."""
    v = value.strip().lower()
    if v in _SIZE_KEYWORDS:
        return _SIZE_KEYWORDS[v]
    m = _SIZE.match(v)
    if not m:
        return None
    number, unit = float(m.group(1)), m.group(2)
    if unit in _UNITS:
        px = number * _UNITS[unit]
    elif unit == "rem":
        px = number * DEFAULT_SIZE_PX
    elif unit in ("em", "%"):
        px = number * parent_px() / (100 if unit == "%" else 1)
    elif unit == "ex":
        px = number * parent_px() * parent_ex()
    else:
        return None
    return px if 0 < px < float("inf") else None


def _computed_size(element: Any, ex_of: Callable[[Any], float] | None = None) -> float:
    node = element
    while node is not None:
        raw = _own_value(node, "font-size")
        if raw is not None and raw.lower() != "inherit":
            parent = node.getparent()
            px = _parse_size(raw, partial(_computed_size, parent, ex_of),
                             partial(ex_of, parent) if ex_of else lambda: EX_PER_EM)
            if px is not None:
                return px
        node = node.getparent()
    return DEFAULT_SIZE_PX


def font_request(element: Any, ex_of: Callable[[Any], float] | None = None) -> FontRequest:
    """The font an lxml element asks for, with inheritance resolved. ``ex_of(node)``
    is 1ex in em for the font ``node`` (None: the root's parent) draws with; without
    it, CSS's fallback of half an em."""
    family = inherited(element, "font-family")
    style = next(
        (s for s in map(_parse_style, _declarations(element, "font-style")) if s), "normal"
    )
    return FontRequest(
        family=family,
        weight=_computed_weight(element),
        style=style,
        size_px=_computed_size(element, ex_of),
    )
