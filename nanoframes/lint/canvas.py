"""Where elements are on the canvas over time: off-canvas pivots, never-visible
elements, text inside the safe margin.

Boxes are geometry boxes (``geometry.local_box``: curves bounded by their
control points, text measured by the renderer), mapped through every
ancestor's transform, authored and animated, at sampled times. Samples are the
film's frames (evenly thinned past ``MAX_SAMPLES``) plus every keyframe time, so
a check sees what a frame would draw.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import NanoframesError
from ..model.composition import Composition
from ..model.geometry import (
    IDENTITY,
    Box,
    Matrix,
    center,
    local_box,
    multiply,
    parse_transform,
    transform_box,
)
from ..model.numbers import evenly_spaced
from ..model.svg import (
    REFERENCED_ONLY_TAGS,
    UNDRAWN_TAGS,
    first_number,
    local_name,
    read_number,
)
from ..model.timeline import needs_auto_center, transform_to_svg, values_for
from ..model.transform import TransformParts
from .findings import ERROR, WARNING, Finding, finding
from .timeline import window

MAX_SAMPLES = 240
# Elements under these never draw by themselves.
NON_RENDERING = UNDRAWN_TAGS | REFERENCED_ONLY_TAGS | {"title", "desc"}
GEOMETRY = frozenset("x y width height cx cy r rx ry x1 y1 x2 y2".split())
DRAWABLE = frozenset((
    "rect", "circle", "ellipse", "line", "polyline", "polygon", "path", "text", "image",
))


@dataclass
class Context:
    """One composition prepared for geometry questions."""

    comp: Composition
    measure: Callable[[Any], Box | None] | None
    baker: Any = None
    animations: dict[Any, tuple] = field(default_factory=dict)
    index: dict[Any, int] = field(default_factory=dict)  # element -> its index in bake

    @classmethod
    def build(cls, comp: Composition) -> Context:
        from ..bake.baker import Baker

        try:
            baker = Baker(comp)
        except NanoframesError:
            baker = None  # assets.check reports why; geometry checks go on without text
        anims = {el: tuple(a for a in comp.animations if a.selector.matches(el))
                 for el in comp.elements}
        measure = baker._measure_text if baker is not None else _plain_measure(comp)
        index = {el: i for i, el in enumerate(comp.elements)}
        return cls(comp, _tolerant(measure), baker, anims, index)

    # --- geometry at t -------------------------------------------------------------

    def animated(self, el, t: float) -> tuple[Any, Any]:
        """(a copy of ``el`` with its animated geometry at ``t``, its transform value)."""
        anims = self.animations.get(el, ())
        if not anims:
            return el, None
        values = values_for(anims, el, t)
        motion = values.pop("transform", None)
        geometry = {k: v for k, v in values.items()
                    if k in GEOMETRY and isinstance(v, float)}
        if not geometry:
            return el, motion
        moved = copy.copy(el)  # keeps the source line, so text measurement finds its face
        for k, v in geometry.items():
            moved.set(k, repr(max(0.0, v) if k in ("width", "height", "r", "rx", "ry") else v))
        return moved, motion

    def own_matrix(self, el, t: float, pivot_override: str | None = None) -> Matrix:
        """The element's authored transform followed by its animated motion at ``t``."""
        moved, motion = self.animated(el, t)
        m = parse_transform(el.get("transform"))
        if isinstance(motion, TransformParts):
            if pivot_override == "auto":
                motion = replace(motion, center="auto")
            pivot = center(local_box(moved, self.measure)) if needs_auto_center(motion) else None
            m = multiply(m, parse_transform(transform_to_svg(motion, pivot)))
        return m

    def to_canvas(self, el, t: float) -> Matrix:
        """Ancestors' transforms (authored and animated) down to, not including, ``el``."""
        chain = list(el.iterancestors())[::-1]
        m = self.view_matrix()
        for node in chain:
            if node is self.comp.root:
                continue
            m = multiply(m, self.own_matrix(node, t))
        return m

    def view_matrix(self) -> Matrix:
        comp = self.comp
        if not comp.view_box:
            return IDENTITY
        try:
            vx, vy, vw, vh = (float(v) for v in comp.view_box.replace(",", " ").split())
        except ValueError:
            return IDENTITY
        if vw <= 0 or vh <= 0:
            return IDENTITY
        s = min(comp.width / vw, comp.height / vh)
        return (s, 0.0, 0.0, s, (comp.width - vw * s) / 2 - vx * s,
                (comp.height - vh * s) / 2 - vy * s)

    def box(self, el, t: float, pivot_override: str | None = None) -> Box | None:
        """``el``'s box on the canvas at ``t`` (None when it has no measurable geometry)."""
        try:
            moved, _ = self.animated(el, t)
            moved = self.sized(moved)
            own = local_box(moved, self.measure)
            if own is None:
                return None
            m = multiply(self.to_canvas(el, t), self.own_matrix(el, t, pivot_override))
            return transform_box(m, own)
        except (ValueError, OverflowError, ZeroDivisionError):
            return None  # geometry the renderer cannot read either (the render reports it)

    def sized(self, el):
        """An ``<image>`` without width/height draws at its natural size (the picture's
        pixels, or the nested composition's canvas): give the box that size."""
        if local_name(el) != "image" or (el.get("width") and el.get("height")) \
                or self.baker is None:
            return el
        index = self.index.get(el)
        image = self.baker.images.get(index) if index is not None else None
        if image is None:
            return el
        from ..bake.tree import natural_box

        natural = getattr(image, "film", None)
        size = (natural.comp.width, natural.comp.height) if natural else \
            (image.width, image.height)
        box = natural_box(el, *size)  # a side left out keeps the aspect ratio, as drawn
        el = copy.copy(el)
        for name, value in zip(("width", "height"), box):
            if not el.get(name):
                el.set(name, repr(float(value)))
        return el

    def on_canvas(self, box: Box) -> bool:
        return box[2] > 0 and box[0] < self.comp.width and box[3] > 0 \
            and box[1] < self.comp.height

    # --- time ------------------------------------------------------------------------

    def animated_chain(self, el) -> bool:
        return any(self.animations.get(n) for n in (el, *el.iterancestors()))

    def first_frame(self, el) -> float | None:
        """The time of the first frame at which ``el`` is present, or None if none is."""
        comp = self.comp
        start, end = window(comp, el)
        i = max(0, math.ceil(start * comp.fps))
        while i < comp.frame_count and comp.time_of(i) < start:  # float vs exact edge
            i += 1
        if i >= comp.frame_count or not comp.time_of(i) < end:
            return None
        return comp.time_of(i)

    def samples(self, el) -> list[float]:
        """Frame times (thinned) and keyframe times at which ``el`` is present."""
        comp = self.comp
        first = self.first_frame(el)
        if first is None:
            return []
        if not self.animated_chain(el):
            return [first]  # nothing moves: one present frame tells all
        start, end = window(comp, el)
        n = comp.frame_count
        times = {comp.time_of(i) for i in evenly_spaced(n, MAX_SAMPLES)} | {first}
        for node in (el, *el.iterancestors()):
            for anim in self.animations.get(node, ()):
                times.update(kf.t for kf in anim.keyframes)
        last = comp.time_of(n - 1)
        return sorted(t for t in times if start <= t < end and 0.0 <= t <= last)

    def opacity(self, el, t: float) -> float:
        """Authored or animated opacity of ``el`` and its ancestors, multiplied."""
        total = 1.0
        for node in (el, *el.iterancestors()):
            value: Any = None
            if self.animations.get(node):
                value = values_for(self.animations[node], node, t).get("opacity")
            if not isinstance(value, float):
                value = read_number(node, "opacity", 1.0, strict=False, percent=True)
            total *= min(1.0, max(0.0, value))
        return total


def _tolerant(measure: Callable[[Any], Box | None]) -> Callable[[Any], Box | None]:
    """Lint reports; it must not stop on text the renderer would reject for its own
    reasons (the render reports those): an unmeasurable text simply has no box."""
    def safe(el) -> Box | None:
        try:
            return measure(el)
        except (NanoframesError, ValueError, TypeError):
            return None

    return safe


def _plain_measure(comp: Composition) -> Callable[[Any], Box | None]:
    """Text ink boxes without a Baker (when an asset stops the renderer's setup): the
    resolved face and size, start-anchored, measured by the rasterizer itself."""
    from ..bake.baker import text_content
    from ..config import load_config
    from ..engine.raster import get_rasterizer
    from ..text.fonts import face_bytes, font_book
    book = font_book(load_config(comp.project_root))

    def measure(el) -> Box | None:
        req = book.request(el)
        face = book.resolve(req).face
        rast = get_rasterizer()
        rast.register_font(face.name, face_bytes(face))
        x, y, w, h = rast.text_bounds(face.name, req.size_px, text_content(el))
        ox, oy = first_number(el, "x"), first_number(el, "y")  # as layout places it
        return (ox + x, oy + y, ox + x + w, oy + y + h)

    return measure


def _rendered(el) -> bool:
    return not any(local_name(a) in NON_RENDERING for a in (el, *el.iterancestors()))


def check(ctx: Context) -> Iterator[Finding]:
    for el in ctx.comp.elements:
        if not _rendered(el):
            continue
        tag = local_name(el)
        yield from _pivotless(ctx, el)
        if tag in DRAWABLE:
            yield from _never_on_canvas(ctx, el)
        if tag == "text" and ctx.comp.safe_margin is not None:
            yield from _safe_margin(ctx, el)


def _pivotless_at(motion: Any) -> bool:
    from ..model.timeline import parse_transform as parts_of

    parts = motion if isinstance(motion, TransformParts) else parts_of(motion)
    if parts is None or parts.center is not None:
        return False
    return (parts.rotate != 0.0 and parts.rotate_pivot is None) or parts.scale != (1.0, 1.0)


def _pivotless(ctx: Context, el) -> Iterator[Finding]:
    if not any("transform" in a.properties() for a in ctx.animations.get(el, ())):
        return
    for t in ctx.samples(el):
        _, motion = ctx.animated(el, t)
        if not _pivotless_at(motion):
            continue
        actual = ctx.box(el, t)
        pivoted = ctx.box(el, t, pivot_override="auto")
        if actual is None or pivoted is None:
            return
        if not ctx.on_canvas(actual) and ctx.on_canvas(pivoted):
            yield finding(WARNING, "pivotless-off-canvas", el, t,
                          "its rotate/scale pivots on the origin (0,0) and throws it off the "
                          'canvas; add "center": "auto" (or a [cx, cy] pivot) to turn it in place')
            return


def _never_on_canvas(ctx: Context, el) -> Iterator[Finding]:
    samples = ctx.samples(el)
    if not samples:
        start, end = window(ctx.comp, el)
        last = ctx.comp.time_of(ctx.comp.frame_count - 1)
        yield finding(WARNING, "never-on-canvas", el, None,
                      f"its presence window {start:g}–{end:g} s holds no frame of the film "
                      f"(frames run 0–{last:g} s)")
        return
    for t in samples:
        box = ctx.box(el, t)
        if box is None or ctx.on_canvas(box):
            return
    yield finding(WARNING, "never-on-canvas", el, None,
                  f"its box never overlaps the {ctx.comp.width}x{ctx.comp.height} canvas "
                  f"while present ({len(samples)} times sampled)")


def _safe_margin(ctx: Context, el) -> Iterator[Finding]:
    margin = float(ctx.comp.safe_margin or 0.0)
    w, h = ctx.comp.width, ctx.comp.height
    for t in ctx.samples(el):
        if ctx.opacity(el, t) <= 0.0:
            continue
        box = ctx.box(el, t)
        if box is None or not ctx.on_canvas(box):
            continue
        edges = [name for name, inside in (
            ("left", box[0] >= margin), ("top", box[1] >= margin),
            ("right", box[2] <= w - margin), ("bottom", box[3] <= h - margin)) if not inside]
        if edges:
            yield finding(ERROR, "safe-margin", el, t,
                          f"text ink ({box[0]:.1f}, {box[1]:.1f})–({box[2]:.1f}, {box[3]:.1f}) "
                          f"comes within data-safe-margin={margin:g} px of the "
                          f"{', '.join(edges)} edge{'s' if len(edges) > 1 else ''}")
            return
