"""Operations on a frame's document tree that need no Baker state.

What the rasterizer must not see is removed here (``clean``), ``style=`` and
colour alpha are turned into plain attributes ThorVG draws, text content is
written the way ThorVG reads it, and images are pointed at their bytes.
"""

from __future__ import annotations

import re

from lxml import etree

from ..model.color import format_color, parse_color
from ..model.svg import (
    PRESENTATION_PROPS,
    SVG_NS,
    UNDRAWN_TAGS,
    XLINK_NS,
    local_name,
    read_number,
)
from ..model.timeline import clamp01, fmt
from ..text.content import collect
from ..text.style import parse_style_attr
from .media import Image

HREF = "href"
XHREF = f"{{{XLINK_NS}}}href"
# A colour property and the opacity its alpha folds into.
COLOR_OPACITY = {"fill": "fill-opacity", "stroke": "stroke-opacity",
                 "stop-color": "stop-opacity", "flood-color": "flood-opacity"}
INHERITED_FONT_PROPS = ("font-family", "font-weight", "font-style", "font-size")
_URL = re.compile(r"url\(\s*['\"]?\s*([^)'\"\s]*)")
DROPPED_TAGS = UNDRAWN_TAGS


def safe_value(value: str) -> bool:
    """False for a value referencing anything but an element of this document."""
    return all(ref.startswith("#") for ref in _URL.findall(value))


def plain_hex(value: str) -> bool:
    return bool(re.fullmatch(r"\s*#[0-9a-fA-F]{6}\s*|\s*#[0-9a-fA-F]{3}\s*", value))


def remove_keeping_tail(el) -> None:
    """Remove an element but keep its tail text, which belongs to the parent."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def text_content(el) -> str:
    """The characters a <text> denotes (text/content.py: hidden spans, xml:space)."""
    return collect(el).text


def set_text(el, text: str) -> None:
    """Write text so ThorVG draws exactly these characters: as CDATA (it does not
    decode entities), split around any ']]>' (adjacent CDATA sections concatenate)."""
    for child in list(el):
        el.remove(child)
    chunks = text.split("]]>")
    el.text = etree.CDATA(chunks[0]) if len(chunks) == 1 else None
    if len(chunks) > 1:  # rare: ]]> inside text; ThorVG joins adjacent CDATA sections
        el.text = etree.CDATA(chunks[0] + "]]")
        for i, chunk in enumerate(chunks[1:]):
            tail = chunk + ("]]" if i < len(chunks) - 2 else "")
            span = etree.SubElement(el, f"{{{SVG_NS}}}tspan")
            span.text = etree.CDATA(">" + tail)


def embed(el, image: Image | str) -> None:
    """Point an <image> at its bytes (a data: URI, or an Image's) instead of a file."""
    for attr in (HREF, XHREF):
        el.attrib.pop(attr, None)
    el.set(HREF, image if isinstance(image, str) else image.data_uri)


def clip_to(el, i: int, x: float, y: float, w: float, h: float) -> None:
    root = el.getroottree().getroot()
    clip = etree.SubElement(root, f"{{{SVG_NS}}}clipPath", id=f"nf-clip-{i}")
    root.remove(clip)
    root.insert(0, clip)
    etree.SubElement(clip, f"{{{SVG_NS}}}rect", x=fmt(x), y=fmt(y), width=fmt(w), height=fmt(h))
    el.set("clip-path", f"url(#nf-clip-{i})")


def inherited_opacity(el, name: str) -> float:
    """An inherited paint opacity (fill-opacity, stroke-opacity) as it applies to ``el``."""
    for node in (el, *el.iterancestors()):
        if node.get(name) is not None:
            return opacity_of(node, name)
    return 1.0


def opacity_of(el, name: str) -> float:
    return clamp01(read_number(el, name, 1.0, strict=False, percent=True))


def normalise_style(el) -> None:
    """Move ``style=`` declarations of presentation properties onto attributes (style
    wins, as in CSS); anything else in it (geometry, the ``font`` shorthand, which
    text/style.py has read already) is not an attribute ThorVG may see."""
    style = el.attrib.pop("style", None)
    if style:
        for name, value in parse_style_attr(style).items():
            if name in PRESENTATION_PROPS:
                el.set(name, value)


def fold_colour_alpha(el) -> None:
    """ThorVG paints rgba() and 8-digit colours solid black: move alpha into *-opacity."""
    for prop, pair in COLOR_OPACITY.items():
        value = el.get(prop)
        if value is None or plain_hex(value):
            continue
        rgba = parse_color(value)
        if rgba is None:
            continue
        hex_, alpha = format_color(rgba)
        el.set(prop, hex_)
        if alpha < 1.0:
            el.set(pair, fmt(opacity_of(el, pair) * alpha))
            _carry_alpha(el, prop, pair, alpha)


def _carry_alpha(el, prop: str, pair: str, alpha: float) -> None:
    """Descendants that inherit ``prop`` but declare their own ``pair`` replace the
    folded opacity: multiply the colour's alpha into theirs instead."""
    for child in el:
        if not isinstance(child.tag, str) or child.get(prop) is not None:
            continue  # a comment, or an element with its own colour
        if child.get(pair) is not None:
            child.set(pair, fmt(opacity_of(child, pair) * alpha))
        else:
            _carry_alpha(child, prop, pair, alpha)


def clean(root, keep: set[int] = frozenset()) -> None:
    """Drop what the rasterizer must not see: scripts, style sheets, comments,
    nanoframes directives (data-*), and references that are not to this document.
    Elements whose ``id()`` is in ``keep`` keep their directives (they are
    resolved per frame, then stripped)."""
    for node in list(root.iter(etree.Comment, etree.PI)):
        remove_keeping_tail(node)
    for el in list(root.iter(etree.Element)):
        if local_name(el) in DROPPED_TAGS:
            remove_keeping_tail(el)
    for el in root.iter(etree.Element):
        if id(el) not in keep:
            strip_directives(el)
        if local_name(el) not in ("text", "tspan"):  # resolved onto each <text> already
            for name in INHERITED_FONT_PROPS:
                el.attrib.pop(name, None)
        for name, value in list(el.attrib.items()):
            if not safe_value(value):
                del el.attrib[name]
        if local_name(el) != "image":
            for name in (HREF, XHREF):
                ref = el.get(name)
                if ref is not None and not ref.startswith("#"):
                    del el.attrib[name]


def unprefixed(root):
    """``root`` itself when its SVG elements carry no prefix, else a copy in which
    they are in the default namespace: ThorVG reads ``<svg:rect>`` as no SVG at all
    (a prefixed document, ``<svg:svg xmlns:svg=...>``, is valid XML and valid SVG).
    Document order, attributes and text are kept exactly."""
    svg = f"{{{SVG_NS}}}"
    if all(el.prefix is None for el in root.iter(f"{svg}*")):
        return root
    nsmap = {p: ns for p, ns in root.nsmap.items() if p is not None and ns != SVG_NS}
    nsmap.update({None: SVG_NS, "xlink": XLINK_NS})
    out = etree.Element(root.tag, dict(root.attrib), nsmap=nsmap)
    out.text = root.text
    stack = [(root, out)]
    while stack:
        src, dst = stack.pop()
        for child in src:
            if not isinstance(child.tag, str):
                continue  # comments and PIs: clean() removed them already
            made = etree.SubElement(dst, child.tag, dict(child.attrib))
            made.text, made.tail = child.text, child.tail
            stack.append((child, made))
    return out


def strip_directives(el) -> None:
    for name in [n for n in el.attrib if n.startswith("data-")]:
        del el.attrib[name]


def natural_box(el, width: int, height: int) -> tuple[float, float]:
    """An ``<image>``'s box: its own width and height; a side it leaves out (or
    ``auto``) follows the picture's aspect ratio from the other; both left out, the
    picture's own size."""
    w = read_number(el, "width", None, strict=False)
    h = read_number(el, "height", None, strict=False)
    if w is None and h is None:
        return float(width), float(height)
    if w is None:
        return h * width / height, h
    if h is None:
        return w, w * height / width
    return w, h


def place_image(el, i: int, width: int, height: int) -> None:
    """Fit an ``<image>`` of ``width`` x ``height`` pixels into its declared box as
    ``data-aspect`` says. ThorVG ignores preserveAspectRatio on <image>, so the
    placement is computed here (and ``cover`` clips to the box)."""
    x, y = read_number(el, "x", 0.0, strict=False), read_number(el, "y", 0.0, strict=False)
    w, h = natural_box(el, width, height)
    aspect = (el.get("data-aspect") or "stretch").strip()
    if aspect in ("contain", "cover") and w > 0 and h > 0:
        fit = min if aspect == "contain" else max
        s = fit(w / width, h / height)
        fw, fh = width * s, height * s
        if aspect == "cover":
            clip_to(el, i, x, y, w, h)
        x, y, w, h = x + (w - fw) / 2, y + (h - fh) / 2, fw, fh
    for name, v in (("x", x), ("y", y), ("width", w), ("height", h)):
        el.set(name, fmt(v))
    el.set("preserveAspectRatio", "none")


def opacity_to_group(el) -> None:
    """Move ``el``'s opacity onto a ``<g>`` wrapped around it (ThorVG 1.0.4 draws an
    ``<image>`` at full opacity whatever its own ``opacity`` says)."""
    raw = el.attrib.pop("opacity", None)
    if raw is None:
        return
    tag = el.tag if isinstance(el.tag, str) else ""
    ns = tag[1:].split("}", 1)[0] if tag.startswith("{") else ""
    group = etree.Element(f"{{{ns}}}g" if ns else "g", opacity=raw)
    el.addprevious(group)
    group.tail, el.tail = el.tail, None
    group.append(el)
