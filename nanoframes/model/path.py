"""Curves to lay text along: SVG path data and circles, sampled by arc length.

Deterministic by construction: a path is flattened with a fixed number of
pieces per segment (no tolerance, no adaptive refinement), arc length is the
sum of the pieces' lengths in path order, and the only functions used are
IEEE-754 ``+ − × ÷`` and ``sqrt`` (correctly rounded everywhere). Sines and
cosines (arcs, the circle's start angle) come from :func:`sin_cos` below, a
fixed polynomial, not the platform's libm, whose last bits may differ between
machines.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass

PIECES = 64  # straight pieces per curved segment (cubic, quadratic, arc)
CIRCLE_PIECES = 256  # pieces of a whole circle
_TOKEN = re.compile(r"[MmLlHhVvCcSsQqTtAaZz]|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ARGS = {"m": 2, "l": 2, "h": 1, "v": 1, "c": 6, "s": 4, "q": 4, "t": 2, "a": 7, "z": 0}
_HALF_PI_HI = 1.5707963267948966  # π/2 split in two for an exact-ish argument reduction
_HALF_PI_LO = 6.123233995736766e-17


def sin_cos(x: float) -> tuple[float, float]:
    """sin and cos of ``x`` radians from a fixed Taylor polynomial after reduction
    to [−π/4, π/4]: the same bits on every IEEE machine (about 1e-16 accurate)."""
    k = math.floor(x / _HALF_PI_HI + 0.5)
    r = (x - k * _HALF_PI_HI) - k * _HALF_PI_LO
    r2 = r * r
    s = r * (1 + r2 * (-1 / 6 + r2 * (1 / 120 + r2 * (-1 / 5040 + r2 * (
        1 / 362880 + r2 * (-1 / 39916800 + r2 * (1 / 6227020800)))))))
    c = 1 + r2 * (-1 / 2 + r2 * (1 / 24 + r2 * (-1 / 720 + r2 * (1 / 40320 + r2 * (
        -1 / 3628800 + r2 * (1 / 479001600 + r2 * (-1 / 87178291200)))))))
    quadrant = k % 4
    if quadrant == 0:
        return s, c
    if quadrant == 1:
        return c, -s
    if quadrant == 2:
        return -s, -c
    return -c, s


def atan2(y: float, x: float) -> float:
    """The angle of (x, y), from a fixed series (no libm): deterministic bits."""
    if x == 0.0 and y == 0.0:
        return 0.0
    ax, ay = abs(x), abs(y)
    swap = ay > ax
    t = (ax / ay) if swap else (ay / ax)  # 0..1
    shift = 0.0
    if t > 0.41421356237309503:  # tan(π/8): move to a small argument
        t, shift = (t - 1) / (t + 1), math.pi / 4
    t2 = t * t
    series, term = 0.0, t
    for n in range(0, 24):
        series += term / (2 * n + 1) * (1 if n % 2 == 0 else -1)
        term *= t2
    a = shift + series
    if swap:
        a = math.pi / 2 - a
    if x < 0:
        a = math.pi - a
    return -a if y < 0 else a


@dataclass(frozen=True)
class Curve:
    """A polyline with cumulative arc length; ``at(s)`` is a point and unit tangent."""

    points: tuple[tuple[float, float], ...]
    lengths: tuple[float, ...]  # lengths[k]: arc length from the start to points[k]

    @property
    def length(self) -> float:
        return self.lengths[-1] if self.lengths else 0.0

    def at(self, s: float) -> tuple[float, float, float, float]:
        """(x, y, tx, ty) at arc length ``s`` (clamped to the curve; the end pieces'
        tangents continue past either end)."""
        pts, lens = self.points, self.lengths
        k = min(max(bisect_right(lens, s) - 1, 0), len(pts) - 2)
        while k > 0 and lens[k + 1] == lens[k]:  # a zero-length piece has no tangent
            k -= 1
        while k < len(pts) - 2 and lens[k + 1] == lens[k]:
            k += 1
        (x0, y0), (x1, y1) = pts[k], pts[k + 1]
        piece = lens[k + 1] - lens[k]
        dx, dy = x1 - x0, y1 - y0
        if piece <= 0.0:
            return x0, y0, 1.0, 0.0
        u = (s - lens[k]) / piece
        return x0 + dx * u, y0 + dy * u, dx / piece, dy / piece


def _curve(points: list[tuple[float, float]]) -> Curve:
    lengths = [0.0]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        lengths.append(lengths[-1] + math.sqrt((x1 - x0) ** 2 + (y1 - y0) ** 2))
    if len(points) < 2:
        points = [*points, *points] if points else [(0.0, 0.0), (0.0, 0.0)]
        lengths = [0.0, 0.0]
    return Curve(tuple(points), tuple(lengths))


def circle(cx: float, cy: float, r: float, start_deg: float = 0.0) -> Curve:
    """A whole circle starting at ``start_deg`` and going clockwise on screen
    (SVG's y axis points down: 0° is 3 o'clock, 90° is 6 o'clock)."""
    a0 = start_deg * math.pi / 180
    points = []
    for k in range(CIRCLE_PIECES + 1):
        s, c = sin_cos(a0 + 2 * math.pi * k / CIRCLE_PIECES)
        points.append((cx + r * c, cy + r * s))
    return _curve(points)


def _arc(x0, y0, rx, ry, phi_deg, large, sweep, x1, y1) -> list[tuple[float, float]]:
    """An SVG elliptical arc as PIECES points after its start (SVG 1.1 F.6.5)."""
    if rx == 0 or ry == 0 or (x0 == x1 and y0 == y1):
        return [(x1, y1)]
    rx, ry = abs(rx), abs(ry)
    sp, cp = sin_cos(phi_deg * math.pi / 180)
    dx, dy = (x0 - x1) / 2, (y0 - y1) / 2
    x1p, y1p = cp * dx + sp * dy, -sp * dx + cp * dy
    lam = (x1p * x1p) / (rx * rx) + (y1p * y1p) / (ry * ry)
    if lam > 1:  # radii too small: scale them up just enough
        root = math.sqrt(lam)
        rx, ry = rx * root, ry * root
    num = rx * rx * ry * ry - rx * rx * y1p * y1p - ry * ry * x1p * x1p
    den = rx * rx * y1p * y1p + ry * ry * x1p * x1p
    coef = math.sqrt(max(0.0, num / den)) if den else 0.0
    if large == sweep:
        coef = -coef
    cxp, cyp = coef * rx * y1p / ry, -coef * ry * x1p / rx
    cx = cp * cxp - sp * cyp + (x0 + x1) / 2
    cy = sp * cxp + cp * cyp + (y0 + y1) / 2
    t1 = atan2((y1p - cyp) / ry, (x1p - cxp) / rx)
    t2 = atan2((-y1p - cyp) / ry, (-x1p - cxp) / rx)
    delta = t2 - t1
    if sweep and delta < 0:
        delta += 2 * math.pi
    elif not sweep and delta > 0:
        delta -= 2 * math.pi
    out = []
    for k in range(1, PIECES + 1):
        s, c = sin_cos(t1 + delta * k / PIECES)
        ex, ey = rx * c, ry * s
        out.append((cp * ex - sp * ey + cx, sp * ex + cp * ey + cy))
    out[-1] = (x1, y1)
    return out


def _bezier(p0, p1, p2, p3=None) -> list[tuple[float, float]]:
    out = []
    for k in range(1, PIECES + 1):
        u = k / PIECES
        v = 1 - u
        if p3 is None:  # quadratic
            out.append((v * v * p0[0] + 2 * v * u * p1[0] + u * u * p2[0],
                        v * v * p0[1] + 2 * v * u * p1[1] + u * u * p2[1]))
        else:
            out.append((v * v * v * p0[0] + 3 * v * v * u * p1[0] + 3 * v * u * u * p2[0]
                        + u * u * u * p3[0],
                        v * v * v * p0[1] + 3 * v * v * u * p1[1] + 3 * v * u * u * p2[1]
                        + u * u * u * p3[1]))
    return out


class PathError(ValueError):
    """Path data that cannot be read (the message says where)."""


def path_curve(d: str) -> Curve:
    """Flatten SVG path data (every command, arcs included) into one Curve. A
    second subpath (a later ``M``) continues the curve: text jumps across the gap
    without spending length on it."""
    tokens = _TOKEN.findall(d or "")
    if not tokens or tokens[0] not in ("M", "m"):
        raise PathError("path data must start with M or m")
    pts: list[tuple[float, float]] = []
    x = y = sx = sy = 0.0
    ctrl: tuple[float, float] | None = None  # last control point, for S and T
    cmd, prev, i = "", "", 0
    while i < len(tokens):
        if tokens[i].isalpha():
            cmd = tokens[i]
            i += 1
            if cmd in "zZ":
                pts.append((sx, sy))
                x, y, prev, ctrl = sx, sy, "z", None
                continue
        lo, rel = cmd.lower(), cmd.islower()
        n = _ARGS[lo]
        raw = tokens[i:i + n]
        if len(raw) < n or any(tok.isalpha() for tok in raw):
            raise PathError(f"command {cmd!r} needs {n} numbers")
        a = [float(tok) for tok in raw]
        i += n
        ox, oy = (x, y) if rel else (0.0, 0.0)
        start = (x, y)
        if lo == "m":
            x, y = ox + a[0], oy + a[1]
            sx, sy = x, y
            if pts and pts[-1] != (x, y):
                pts.append((math.nan, math.nan))  # a gap: no length across it
            pts.append((x, y))
            cmd = "l" if rel else "L"
        elif lo == "l":
            x, y = ox + a[0], oy + a[1]
            pts.append((x, y))
        elif lo == "h":
            x = ox + a[0]
            pts.append((x, y))
        elif lo == "v":
            y = (y if rel else 0.0) + a[0]
            pts.append((x, y))
        elif lo in "cs":
            if lo == "c":
                c1, c2, end = (ox + a[0], oy + a[1]), (ox + a[2], oy + a[3]), (ox + a[4], oy + a[5])
            else:
                c1 = (2 * x - ctrl[0], 2 * y - ctrl[1]) if ctrl and prev in "cs" else (x, y)
                c2, end = (ox + a[0], oy + a[1]), (ox + a[2], oy + a[3])
            pts += _bezier(start, c1, c2, end)
            x, y = end
            ctrl = c2
        elif lo in "qt":
            if lo == "q":
                c1, end = (ox + a[0], oy + a[1]), (ox + a[2], oy + a[3])
            else:
                c1 = (2 * x - ctrl[0], 2 * y - ctrl[1]) if ctrl and prev in "qt" else (x, y)
                end = (ox + a[0], oy + a[1])
            pts += _bezier(start, c1, end)
            x, y = end
            ctrl = c1
        else:  # arc
            end = (ox + a[5], oy + a[6])
            pts += _arc(x, y, a[0], a[1], a[2], a[3] != 0, a[4] != 0, end[0], end[1])
            x, y = end
        if lo not in "csqt":
            ctrl = None
        prev = lo
    return _gapped_curve(pts)


def _gapped_curve(points: list[tuple[float, float]]) -> Curve:
    """A Curve from points where a NaN pair marks a jump (no length is spent on it)."""
    out: list[tuple[float, float]] = []
    lengths: list[float] = []
    jump = False
    for p in points:
        if math.isnan(p[0]):
            jump = True
            continue
        if not out:
            out.append(p)
            lengths.append(0.0)
            continue
        x0, y0 = out[-1]
        step = 0.0 if jump else math.sqrt((p[0] - x0) ** 2 + (p[1] - y0) ** 2)
        out.append(p)
        lengths.append(lengths[-1] + step)
        jump = False
    if len(out) < 2:
        return _curve(out)
    return Curve(tuple(out), tuple(lengths))
