"""Geometry boxes of SVG elements, for ``"center": "auto"`` pivots and lint.

A box is ``(x0, y0, x1, y1)`` in the element's own user space: its descendants
included (through their transforms), its own transform excluded. Curves are
bounded by their control points, which can only make the box larger than the
ink; text is measured by a callback the caller supplies (renderer-exact).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from .svg import NUMBER, local_name, read_number

Box = tuple[float, float, float, float]
Matrix = tuple[float, float, float, float, float, float]  # a b c d e f, as SVG matrix()
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
TextMeasure = Callable[[object], "Box | None"]

_NUM = NUMBER
_TRANSFORM = re.compile(r"(matrix|translate|scale|rotate|skewX|skewY)\s*\(([^)]*)\)")
_PATH_TOKEN = re.compile(r"[MmLlHhVvCcSsQqTtAaZz]|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ARGS = {"m": 2, "l": 2, "h": 1, "v": 1, "c": 6, "s": 4, "q": 4, "t": 2, "a": 7, "z": 0}


def multiply(m: Matrix, n: Matrix) -> Matrix:
    """m · n (apply n first, then m)."""
    a, b, c, d, e, f = m
    A, B, C, D, E, F = n
    return (a * A + c * B, b * A + d * B, a * C + c * D, b * C + d * D,
            a * E + c * F + e, b * E + d * F + f)


def parse_transform(text: str | None) -> Matrix:
    m = IDENTITY
    for name, args in _TRANSFORM.findall(text or ""):
        v = [float(x) for x in _NUM.findall(args)]
        if name == "matrix" and len(v) == 6:
            op = tuple(v)
        elif name == "translate" and v:
            op = (1, 0, 0, 1, v[0], v[1] if len(v) > 1 else 0)
        elif name == "scale" and v:
            op = (v[0], 0, 0, v[1] if len(v) > 1 else v[0], 0, 0)
        elif name == "rotate" and v:
            r = math.radians(v[0])
            op = (math.cos(r), math.sin(r), -math.sin(r), math.cos(r), 0, 0)
            if len(v) == 3:
                op = multiply(multiply((1, 0, 0, 1, v[1], v[2]), op), (1, 0, 0, 1, -v[1], -v[2]))
        elif name == "skewX" and v:
            op = (1, 0, math.tan(math.radians(v[0])), 1, 0, 0)
        elif name == "skewY" and v:
            op = (1, math.tan(math.radians(v[0])), 0, 1, 0, 0)
        else:
            continue
        m = multiply(m, op)  # type: ignore[arg-type]
    return m


def apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def union(boxes: Iterable[Box | None]) -> Box | None:
    real = [b for b in boxes if b is not None]
    if not real:
        return None
    return (min(b[0] for b in real), min(b[1] for b in real),
            max(b[2] for b in real), max(b[3] for b in real))


def transform_box(m: Matrix, box: Box | None) -> Box | None:
    if box is None:
        return None
    pts = [apply(m, x, y) for x in (box[0], box[2]) for y in (box[1], box[3])]
    return (min(p[0] for p in pts), min(p[1] for p in pts),
            max(p[0] for p in pts), max(p[1] for p in pts))


def _points(pts: list[float]) -> Box | None:
    xs, ys = pts[0::2], pts[1::2]
    if not xs or not ys:
        return None
    return (min(xs), min(ys), max(xs), max(ys))


def path_box(d: str) -> Box | None:
    """Bound a path by its end and control points (arcs by their end points ± radii)."""
    tokens = _PATH_TOKEN.findall(d or "")
    pts: list[float] = []
    x = y = sx = sy = 0.0
    cmd = ""
    i = 0
    while i < len(tokens):
        if tokens[i].isalpha():
            cmd = tokens[i]
            i += 1
            if cmd in "zZ":
                x, y = sx, sy
                continue
        if not cmd:
            return None
        n = _ARGS[cmd.lower()]
        raw = tokens[i:i + n]
        if len(raw) < n or any(tok.isalpha() for tok in raw):
            break  # malformed data: bound what was read so far, as renderers do
        args = [float(tok) for tok in raw]
        i += n
        rel = cmd.islower()
        lo = cmd.lower()
        if lo == "h":
            x = x + args[0] if rel else args[0]
        elif lo == "v":
            y = y + args[0] if rel else args[0]
        elif lo == "a":
            nx, ny = (x + args[5], y + args[6]) if rel else (args[5], args[6])
            rx, ry = abs(args[0]), abs(args[1])
            pts += [x, y, nx, ny, min(x, nx) - rx, min(y, ny) - ry, max(x, nx) + rx,
                    max(y, ny) + ry]
            x, y = nx, ny
            continue
        else:
            for k in range(0, n, 2):
                px, py = args[k], args[k + 1]
                if rel:
                    px, py = px + x, py + y
                pts += [px, py]
            x, y = pts[-2], pts[-1]
            if lo == "m":
                sx, sy = x, y
                cmd = "l" if rel else "L"  # extra pairs after a moveto are linetos
        pts += [x, y]
    return _points(pts)


def local_box(el, measure_text: TextMeasure | None = None) -> Box | None:
    """The element's geometry box in its own user space (own transform excluded)."""
    tag = local_name(el)

    def numbers(*names: str) -> list[float]:
        # Lenient: a box is an estimate (pivots, lint); bad values are reported elsewhere.
        return [read_number(el, name, 0.0, strict=False) for name in names]

    if tag == "rect" or tag == "image":
        x, y, w, h = numbers("x", "y", "width", "height")
        return (x, y, x + w, y + h)
    if tag == "circle":
        cx, cy, r = numbers("cx", "cy", "r")
        return (cx - r, cy - r, cx + r, cy + r)
    if tag == "ellipse":
        cx, cy, rx, ry = numbers("cx", "cy", "rx", "ry")
        return (cx - rx, cy - ry, cx + rx, cy + ry)
    if tag == "line":
        return _points(numbers("x1", "y1", "x2", "y2"))
    if tag in ("polyline", "polygon"):
        return _points([float(v) for v in _NUM.findall(el.get("points", ""))])
    if tag == "path":
        return path_box(el.get("d", ""))
    if tag == "text":
        return measure_text(el) if measure_text else None
    if tag in ("g", "a", "svg", "switch"):
        return union(
            transform_box(parse_transform(child.get("transform")), local_box(child, measure_text))
            for child in el if isinstance(child.tag, str)
        )
    return None


def center(box: Box | None) -> tuple[float, float] | None:
    if box is None:
        return None
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
