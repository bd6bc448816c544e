"""Colours: parse the forms authors write, interpolate, format for the rasterizer.

An RGBA here is ``(r, g, b, a)`` with r, g, b on 0..255 and a on 0..1, as floats
so interpolation does not round on the way. Only :func:`format_color` rounds and
clamps, and it splits alpha off: the rasterizer paints an ``rgba()`` or 8-digit
colour solid black, so alpha must reach it as ``fill-opacity``/``stroke-opacity``
(docs/thorvg.md).
"""

from __future__ import annotations

import math
import re

RGBA = tuple[float, float, float, float]

# The 147 SVG 1.1 colour keywords, plus CSS Color 4's rebeccapurple (authors
# copy it from CSS; naming it costs nothing and beats a silent "unknown").
SVG_COLOR_KEYWORDS: dict[str, tuple[int, int, int]] = {
    "aliceblue": (240, 248, 255), "antiquewhite": (250, 235, 215), "aqua": (0, 255, 255),
    "aquamarine": (127, 255, 212), "azure": (240, 255, 255), "beige": (245, 245, 220),
    "bisque": (255, 228, 196), "black": (0, 0, 0), "blanchedalmond": (255, 235, 205),
    "blue": (0, 0, 255), "blueviolet": (138, 43, 226), "brown": (165, 42, 42),
    "burlywood": (222, 184, 135), "cadetblue": (95, 158, 160), "chartreuse": (127, 255, 0),
    "chocolate": (210, 105, 30), "coral": (255, 127, 80), "cornflowerblue": (100, 149, 237),
    "cornsilk": (255, 248, 220), "crimson": (220, 20, 60), "cyan": (0, 255, 255),
    "darkblue": (0, 0, 139), "darkcyan": (0, 139, 139), "darkgoldenrod": (184, 134, 11),
    "darkgray": (169, 169, 169), "darkgreen": (0, 100, 0), "darkgrey": (169, 169, 169),
    "darkkhaki": (189, 183, 107), "darkmagenta": (139, 0, 139),
    "darkolivegreen": (85, 107, 47), "darkorange": (255, 140, 0), "darkorchid": (153, 50, 204),
    "darkred": (139, 0, 0), "darksalmon": (233, 150, 122), "darkseagreen": (143, 188, 143),
    "darkslateblue": (72, 61, 139), "darkslategray": (47, 79, 79),
    "darkslategrey": (47, 79, 79), "darkturquoise": (0, 206, 209),
    "darkviolet": (148, 0, 211), "deeppink": (255, 20, 147), "deepskyblue": (0, 191, 255),
    "dimgray": (105, 105, 105), "dimgrey": (105, 105, 105), "dodgerblue": (30, 144, 255),
    "firebrick": (178, 34, 34), "floralwhite": (255, 250, 240), "forestgreen": (34, 139, 34),
    "fuchsia": (255, 0, 255), "gainsboro": (220, 220, 220), "ghostwhite": (248, 248, 255),
    "gold": (255, 215, 0), "goldenrod": (218, 165, 32), "gray": (128, 128, 128),
    "grey": (128, 128, 128), "green": (0, 128, 0), "greenyellow": (173, 255, 47),
    "honeydew": (240, 255, 240), "hotpink": (255, 105, 180), "indianred": (205, 92, 92),
    "indigo": (75, 0, 130), "ivory": (255, 255, 240), "khaki": (240, 230, 140),
    "lavender": (230, 230, 250), "lavenderblush": (255, 240, 245),
    "lawngreen": (124, 252, 0), "lemonchiffon": (255, 250, 205), "lightblue": (173, 216, 230),
    "lightcoral": (240, 128, 128), "lightcyan": (224, 255, 255),
    "lightgoldenrodyellow": (250, 250, 210), "lightgray": (211, 211, 211),
    "lightgreen": (144, 238, 144), "lightgrey": (211, 211, 211), "lightpink": (255, 182, 193),
    "lightsalmon": (255, 160, 122), "lightseagreen": (32, 178, 170),
    "lightskyblue": (135, 206, 250), "lightslategray": (119, 136, 153),
    "lightslategrey": (119, 136, 153), "lightsteelblue": (176, 196, 222),
    "lightyellow": (255, 255, 224), "lime": (0, 255, 0), "limegreen": (50, 205, 50),
    "linen": (250, 240, 230), "magenta": (255, 0, 255), "maroon": (128, 0, 0),
    "mediumaquamarine": (102, 205, 170), "mediumblue": (0, 0, 205),
    "mediumorchid": (186, 85, 211), "mediumpurple": (147, 112, 219),
    "mediumseagreen": (60, 179, 113), "mediumslateblue": (123, 104, 238),
    "mediumspringgreen": (0, 250, 154), "mediumturquoise": (72, 209, 204),
    "mediumvioletred": (199, 21, 133), "midnightblue": (25, 25, 112),
    "mintcream": (245, 255, 250), "mistyrose": (255, 228, 225), "moccasin": (255, 228, 181),
    "navajowhite": (255, 222, 173), "navy": (0, 0, 128), "oldlace": (253, 245, 230),
    "olive": (128, 128, 0), "olivedrab": (107, 142, 35), "orange": (255, 165, 0),
    "orangered": (255, 69, 0), "orchid": (218, 112, 214), "palegoldenrod": (238, 232, 170),
    "palegreen": (152, 251, 152), "paleturquoise": (175, 238, 238),
    "palevioletred": (219, 112, 147), "papayawhip": (255, 239, 213),
    "peachpuff": (255, 218, 185), "peru": (205, 133, 63), "pink": (255, 192, 203),
    "plum": (221, 160, 221), "powderblue": (176, 224, 230), "purple": (128, 0, 128),
    "rebeccapurple": (102, 51, 153), "red": (255, 0, 0), "rosybrown": (188, 143, 143),
    "royalblue": (65, 105, 225), "saddlebrown": (139, 69, 19), "salmon": (250, 128, 114),
    "sandybrown": (244, 164, 96), "seagreen": (46, 139, 87), "seashell": (255, 245, 238),
    "sienna": (160, 82, 45), "silver": (192, 192, 192), "skyblue": (135, 206, 235),
    "slateblue": (106, 90, 205), "slategray": (112, 128, 144), "slategrey": (112, 128, 144),
    "snow": (255, 250, 250), "springgreen": (0, 255, 127), "steelblue": (70, 130, 180),
    "tan": (210, 180, 140), "teal": (0, 128, 128), "thistle": (216, 191, 216),
    "tomato": (255, 99, 71), "turquoise": (64, 224, 208), "violet": (238, 130, 238),
    "wheat": (245, 222, 179), "white": (255, 255, 255), "whitesmoke": (245, 245, 245),
    "yellow": (255, 255, 0), "yellowgreen": (154, 205, 50),
}

_HEX = re.compile(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})")
_NUM = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?%?"
# rgb()/rgba() with commas (CSS 3) or spaces and an optional "/ alpha" (CSS 4).
_FUNC = re.compile(
    rf"rgba?\(\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*(?:,\s*({_NUM})\s*)?\)"
    rf"|rgba?\(\s*({_NUM})\s+({_NUM})\s+({_NUM})\s*(?:/\s*({_NUM})\s*)?\)"
)


def _clamp(x: float, hi: float) -> float:
    # `not x > 0` also catches NaN, so nothing downstream sees it.
    if not x > 0.0:
        return 0.0
    return min(x, hi)


def _channel(text: str) -> float | None:
    value = float(text[:-1]) * 255.0 / 100.0 if text.endswith("%") else float(text)
    return _clamp(value, 255.0) if math.isfinite(value) else None


def _alpha(text: str) -> float | None:
    value = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    return _clamp(value, 1.0) if math.isfinite(value) else None


def parse_color(value: str) -> RGBA | None:
    """An author's colour as RGBA; ``None`` for ``none``, ``url()``,
    ``currentColor`` and anything unparseable (nothing to interpolate)."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    m = _HEX.fullmatch(text)
    if m is not None:
        digits = m.group(1)
        if len(digits) <= 4:  # #rgb / #rgba: each digit doubled
            digits = "".join(d + d for d in digits)
        r, g, b = (float(int(digits[i : i + 2], 16)) for i in (0, 2, 4))
        a = int(digits[6:8], 16) / 255.0 if len(digits) == 8 else 1.0
        return (r, g, b, a)
    if text == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    rgb = SVG_COLOR_KEYWORDS.get(text)
    if rgb is not None:
        return (float(rgb[0]), float(rgb[1]), float(rgb[2]), 1.0)
    m = _FUNC.fullmatch(text)
    if m is None:
        return None
    groups = m.groups()
    parts = groups[:4] if groups[0] is not None else groups[4:]
    channels = [_channel(p) for p in parts[:3]]
    # CSS forbids mixing numbers and percentages among r, g, b.
    if len({p.endswith("%") for p in parts[:3]}) != 1:
        return None
    alpha = _alpha(parts[3]) if parts[3] is not None else 1.0
    r, g, b = channels
    if r is None or g is None or b is None or alpha is None:
        return None
    return (r, g, b, alpha)


def format_color(c: RGBA) -> tuple[str, float]:
    """``('#rrggbb', alpha)``: channels rounded half-up and clamped to 0..255,
    alpha clamped to 0..1 (overshooting easings leave the range on purpose)."""
    r, g, b, a = c
    hexes = "".join(f"{math.floor(_clamp(float(v), 255.0) + 0.5):02x}" for v in (r, g, b))
    return "#" + hexes, _clamp(float(a), 1.0)


def lerp(a: float, b: float, p: float) -> float:
    # Exact at both ends and constant when a == b, whatever p's last bits are.
    if p == 0.0 or a == b:
        return a
    if p == 1.0:
        return b
    return a + (b - a) * p


def lerp_color(a: RGBA, b: RGBA, p: float) -> RGBA:
    """Per-channel interpolation in straight RGBA; p may leave 0..1 (overshoot)."""
    return (
        lerp(a[0], b[0], p),
        lerp(a[1], b[1], p),
        lerp(a[2], b[2], p),
        lerp(a[3], b[3], p),
    )
