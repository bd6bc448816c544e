"""Transform objects of the timeline: ``{"translate", "rotate", "scale", "center"}``.

docs/compositions.md, "Transforms and pivots": applied in the order translate, rotate,
scale; a pivot c around an operation is ``translate(c) op translate(-c)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .color import lerp
from .numbers import fmt, is_number


def _pair(v: Any) -> tuple[float, float] | None:
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(is_number(x) for x in v):
        return float(v[0]), float(v[1])
    return None


@dataclass(frozen=True)
class TransformParts:
    """A transform object normalised: identity defaults filled in."""

    translate: tuple[float, float] = (0.0, 0.0)
    rotate: float = 0.0
    rotate_pivot: tuple[float, float] | None = None  # from "rotate": [deg, cx, cy]
    scale: tuple[float, float] = (1.0, 1.0)
    scale_is_pair: bool = False  # written as [sx, sy]: keep that shape
    center: tuple[float, float] | str | None = None  # [cx, cy] or "auto"

    def to_value(self) -> dict[str, Any]:
        """Back to the JSON-shaped object of the timeline."""
        out: dict[str, Any] = {"translate": list(self.translate)}
        out["rotate"] = (
            [self.rotate, *self.rotate_pivot] if self.rotate_pivot is not None else self.rotate
        )
        out["scale"] = list(self.scale) if self.scale_is_pair else self.scale[0]
        if self.center is not None:
            out["center"] = self.center if isinstance(self.center, str) else list(self.center)
        return out


def parse_transform(value: Any) -> TransformParts | None:
    """The transform object of a keyframe, or ``None`` if any known key is
    malformed (lint reports it). Unknown keys are ignored here."""
    if not isinstance(value, Mapping):
        return None
    translate: tuple[float, float] | None = (0.0, 0.0)
    if "translate" in value:
        translate = _pair(value["translate"])
    rotate, pivot = 0.0, None
    if "rotate" in value:
        r = value["rotate"]
        if is_number(r):
            rotate = float(r)
        elif isinstance(r, (list, tuple)) and len(r) == 3 and all(is_number(x) for x in r):
            rotate, pivot = float(r[0]), (float(r[1]), float(r[2]))
        else:
            return None
    scale: tuple[float, float] | None = (1.0, 1.0)
    scale_is_pair = False
    if "scale" in value:
        s = value["scale"]
        if is_number(s):
            scale = (float(s), float(s))
        else:
            scale, scale_is_pair = _pair(s), True
    center: tuple[float, float] | str | None = None
    if "center" in value:
        c = value["center"]
        center = "auto" if c == "auto" else _pair(c)
        if center is None:
            return None
    if translate is None or scale is None:
        return None
    return TransformParts(translate, rotate, pivot, scale, scale_is_pair, center)


def _lerp_pair(a: tuple[float, float], b: tuple[float, float], p: float) -> tuple[float, float]:
    return lerp(a[0], b[0], p), lerp(a[1], b[1], p)


def _lerp_transform(a: TransformParts, b: TransformParts, p: float) -> TransformParts:
    # Pivots do not travel: they come from the arriving keyframe, else the other.
    return TransformParts(
        translate=_lerp_pair(a.translate, b.translate, p),
        rotate=lerp(a.rotate, b.rotate, p),
        rotate_pivot=b.rotate_pivot if b.rotate_pivot is not None else a.rotate_pivot,
        scale=_lerp_pair(a.scale, b.scale, p),
        scale_is_pair=a.scale_is_pair or b.scale_is_pair,
        center=b.center if b.center is not None else a.center,
    )


def needs_auto_center(value: Any) -> bool:
    """Whether this transform value pivots on the element's own geometry box."""
    if isinstance(value, TransformParts):
        return value.center == "auto"
    return isinstance(value, Mapping) and value.get("center") == "auto"


def transform_to_svg(
    value: Mapping[str, Any], auto_center: tuple[float, float] | None = None
) -> str:
    """The SVG transform list for a transform object ('' for the identity).

    Order translate, rotate, scale; a pivot c around op is
    ``translate(c) op translate(-c)`` and adjacent translates are merged, so
    ``center`` shared by rotate and scale costs one pair of translates. A
    malformed value draws as the identity (lint reports it).
    """
    parts = value if isinstance(value, TransformParts) else parse_transform(value)
    if parts is None:
        return ""
    if parts.center == "auto":
        center = auto_center if auto_center is not None else (0.0, 0.0)
    else:
        center = parts.center if isinstance(parts.center, tuple) else (0.0, 0.0)

    # (kind, args) ops; translates merge as they are pushed.
    ops: list[tuple[str, tuple[float, ...]]] = []

    def translate(x: float, y: float) -> None:
        if ops and ops[-1][0] == "translate":
            px, py = ops.pop()[1]
            x, y = px + x, py + y
        if x != 0.0 or y != 0.0:
            ops.append(("translate", (x, y)))

    def pivoted(op: tuple[str, tuple[float, ...]], c: tuple[float, float]) -> None:
        translate(*c)
        ops.append(op)
        translate(-c[0], -c[1])

    translate(*parts.translate)
    if parts.rotate != 0.0:
        pivot = parts.rotate_pivot if parts.rotate_pivot is not None else center
        pivoted(("rotate", (parts.rotate,)), pivot)
    if parts.scale != (1.0, 1.0):
        sx, sy = parts.scale
        pivoted(("scale", (sx,) if sx == sy else (sx, sy)), center)
    return " ".join(f"{kind}({','.join(fmt(a) for a in args)})" for kind, args in ops)


