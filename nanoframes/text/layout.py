"""Measured text layout (docs/text.md): anchor, chips, wrap, fit and frame text.

ThorVG 1.0.4 ignores ``text-anchor``, ``<tspan>`` positions and ``opacity`` on
``<text>``, so nanoframes lays text out itself with renderer-exact ink
measurements (:mod:`.measure`) and hands the rasterizer only plain, positioned
single-line ``<text>`` elements. The rules, in the order they apply:

1. ``data-frame-text`` replaces the content with the template formatted for
   the frame (fields ``frame frames second time fps duration``).
2. ``data-fit="W"`` shrinks the font-size until the single line's ink width is
   at most W: the largest size on a 0.5 px grid below the authored size that
   fits, found by bisection (widths grow with size), never below
   ``data-fit-min`` (9), never above the authored size.
3. ``data-wrap="W"`` breaks the (fitted) text into lines whose ink width is at
   most W: breaks at spaces, around each East Asian wide character, and, for a
   word wider than W on its own, between characters. Line k sits at
   ``y + k × 1.2 × font-size``.
4. ``text-anchor`` places each line by its **ink** box (the format measures
   ink; ThorVG gives no advance widths): ``middle`` puts the centre of the ink
   on x, ``end`` puts its right edge on x, ``start`` leaves the pen at x as the
   rasterizer draws it (the ink begins a side bearing after x).
5. ``data-bg`` puts a rounded chip behind the union of the lines' ink boxes.

Text with ``data-curve-d`` or ``data-curve-circle`` is laid along that curve
instead (:mod:`.curve`): one ``<text>`` per character in a ``<g>``; fit, wrap,
chips and the text's own x/y do not apply to it.

Several lines or a chip are emitted as a ``<g>`` that takes the text's
transform, id, clip and opacity, so the chip moves and fades with its text.

Templates (rule 1) live in :mod:`.frame_text` and line breaking (rule 3) in
:mod:`.linebreak`; their public names are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from ..errors import NanoframesError
from ..model.color import format_color, parse_color
from ..model.path import Curve
from ..model.svg import first_number, read_number
from ..model.timeline import fmt
from .content import Piece
from .coverage import missing_characters
from .curve import CurveLayout, lay_along, read_curve
from .emit import GROUP_ATTRS, chip_rect, group_for, line_copy  # noqa: F401  (GROUP_ATTRS re-exported)
from .fonts import Face, face_x_height
from .frame_text import (  # noqa: F401  (re-exported: tests and callers import them here)
    FRAME_FIELDS,
    check_template,
    format_frame_text,
    frame_values,
)
from .linebreak import break_units, wrap_lines  # noqa: F401  (re-exported)
from .measure import Ink, Measurer, union
from .runs import anchor_shift, lay_pieces
from .style import inherited

LINE_PITCH = 1.2  # × font-size, between wrapped lines
FIT_STEP = 0.5  # px grid of fitted sizes: fine enough to look continuous, few measurements
DEFAULT_FIT_MIN = 9.0
CHIP_DEFAULTS = {"data-bg-pad-x": 12.0, "data-bg-pad-y": 8.0, "data-bg-rx": 10.0}
_CACHE_LIMIT = 4096  # laid-out (element, text) pairs kept; frame text makes one per frame

Measure = Callable[[float, str], Ink]  # (size px, text) -> ink box, face already bound


@dataclass(frozen=True)
class Chip:
    fill: str  # '#rrggbb'
    alpha: float
    pad_x: float
    pad_y: float
    rx: float


@dataclass(frozen=True)
class TextSpec:
    """What one ``<text>`` asks of layout, read once from the composition."""

    face: Face
    size: float
    anchor: str = "start"
    chip: Chip | None = None
    wrap: float | None = None
    fit: float | None = None
    fit_min: float = DEFAULT_FIT_MIN
    template: str | None = None
    curve: Curve | None = None  # data-curve-d / data-curve-circle


@dataclass(frozen=True)
class Line:
    text: str
    dx: float  # offset of this line's pen from the element's x (anchor shift)
    dy: float  # offset from the element's y (line pitch)
    ink: Ink  # relative to the element's x, y: dx and dy already applied
    paint: tuple[tuple[str, str], ...] = ()  # a positioned span's own fill, stroke...


@dataclass(frozen=True)
class Layout:
    size: float
    lines: tuple[Line, ...]

    @property
    def ink(self) -> Ink | None:
        return union([line.ink for line in self.lines])


@dataclass(frozen=True)
class Run:
    """One drawn line as ``nanoframes measure`` reports it."""

    element: int
    source_line: int | None
    id: str | None
    run: int
    face: str
    size: float
    text: str
    box: tuple[float, float, float, float]  # x, y, w, h in the text's user space
    # The same box through every transform above it, filled in by ``nanoframes
    # measure`` from the finished document (ancestors may animate after this text
    # was laid out, as static text is laid out once).
    canvas: tuple[float, float, float, float] | None = None
    along: bool = False  # a character on a curve: ``box`` already includes its rotation
    missing: tuple[str, ...] = ()  # characters the face has no glyph for


# --- pure layout ---------------------------------------------------------------


def fit_size(width_at: Callable[[float], float], size: float, limit: float,
             minimum: float) -> float:
    """The largest of ``size, size − 0.5, …, minimum`` whose ink width is ≤ ``limit``.

    Bisection over that fixed grid (ink width grows with size), so the answer
    and the number of measurements depend only on the inputs. When nothing
    fits, ``minimum`` (the text overflows; lint can say so).
    """
    if size <= minimum or width_at(size) <= limit:
        return size
    steps = math.floor((size - minimum) / FIT_STEP + 1e-9)
    grid = [size - k * FIT_STEP for k in range(1, steps + 1)]
    if not grid or grid[-1] > minimum:
        grid.append(minimum)
    lo, hi = 0, len(grid) - 1
    if width_at(grid[hi]) > limit:
        return minimum
    while lo < hi:
        mid = (lo + hi) // 2
        if width_at(grid[mid]) <= limit:
            hi = mid
        else:
            lo = mid + 1
    return grid[lo]


def lay_out(spec: TextSpec, text: str, measure: Measure) -> Layout:
    """Fit, wrap and anchor ``text`` (already the characters to draw)."""
    size = spec.size
    if spec.fit is not None:
        size = fit_size(lambda s: measure(s, text).w, size, spec.fit, spec.fit_min)
    if spec.wrap is not None:
        texts = wrap_lines(text, lambda s: measure(size, s).w, spec.wrap)
    else:
        texts = [text]
    lines = []
    for k, line in enumerate(texts):
        ink = measure(size, line)
        dx, dy = anchor_shift(ink, spec.anchor), k * LINE_PITCH * size
        lines.append(Line(line, dx, dy, ink.moved(dx, dy)))
    return Layout(size, tuple(lines))


# --- reading the composition -----------------------------------------------------


def read_spec(el, face: Face, size: float, file: Path | str | None) -> TextSpec:
    """The layout a source ``<text>`` asks for; errors name the file and line."""
    anchor = (inherited(el, "text-anchor") or "start").strip().lower()
    chip = None
    if el.get("data-bg") is not None:
        rgba = parse_color(el.get("data-bg"))
        if rgba is None:
            raise NanoframesError("attr-invalid", f"data-bg={el.get('data-bg')!r} is not a "
                                  "colour", file, el.sourceline)
        fill, alpha = format_color(rgba)
        pads = {k: read_number(el, k, v, strict=True, file=file, sign="non-negative")
                for k, v in CHIP_DEFAULTS.items()}
        chip = Chip(fill, alpha, pads["data-bg-pad-x"], pads["data-bg-pad-y"],
                    pads["data-bg-rx"])
    template = el.get("data-frame-text")
    if template is not None:
        check_template(template, file, el.sourceline)
    return TextSpec(
        face=face, size=size,
        anchor=anchor if anchor in ("start", "middle", "end") else "start",
        chip=chip, wrap=read_number(el, "data-wrap", strict=True, file=file, sign="positive"),
        fit=read_number(el, "data-fit", strict=True, file=file, sign="positive"),
        fit_min=read_number(el, "data-fit-min", DEFAULT_FIT_MIN, strict=True, file=file,
                            sign="positive") or DEFAULT_FIT_MIN,
        template=template, curve=read_curve(el, file),
    )


# --- per composition ---------------------------------------------------------------


class TextLayouts:
    """Every ``<text>`` of a composition: specs read (and validated) once, layouts
    cached per (element, text), and emission into each frame's document."""

    def __init__(self, comp, fonts: dict, sizes: dict[int, float],
                 measurer: Measurer | None = None) -> None:
        self.comp = comp
        self.measurer = measurer or Measurer()
        self.specs = {i: read_spec(comp.elements[i], fonts[i].face, sizes[i], comp.path)
                      for i in fonts}
        self._cache: dict[tuple[int, str], Layout] = {}
        self.runs: list[Run] | None = None  # set to [] to record what a document draws

    def content(self, i: int, authored: str, t: float | None) -> str:
        """The characters element ``i`` draws at ``t`` (None: a static element)."""
        template = self.specs[i].template
        if template is None:
            return authored
        comp = self.comp
        return format_frame_text(template, frame_values(t or 0.0, comp.fps, comp.frame_count,
                                                        comp.duration))

    def layout(self, i: int, text: str, pieces: tuple[Piece, ...] | None = None
               ) -> Layout | CurveLayout:
        spec = self.specs[i]
        if spec.curve is not None or spec.template is not None:
            pieces = None  # the curve or the template decides what is drawn where
        key = (i, text, pieces)
        found = self._cache.get(key)
        if found is None:

            def measure(size: float, s: str) -> Ink:
                return self.measurer.ink(spec.face, size, s)

            if pieces is not None:
                el = self.comp.elements[i]
                lines = tuple(Line(t, dx, dy, ink, paint) for t, dx, dy, ink, paint in lay_pieces(
                    pieces, spec.size, face_x_height(spec.face), spec.anchor, first_number(el, "x"),
                    first_number(el, "y"), lambda s: measure(spec.size, s)))
                found = Layout(spec.size, lines or (Line("", 0.0, 0.0, Ink(0, 0, 0, 0)),))
            elif spec.curve is not None:
                el = self.comp.elements[i]
                found = lay_along(spec.curve, text, spec.size, spec.anchor, measure,
                                  self.comp.path, el.sourceline)
            else:
                found = lay_out(spec, text, measure)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = found
        return found

    def index_of(self, el) -> int | None:
        """The element index of a (copied) ``<text>``, by source line and id."""
        same = [i for i in self.specs if self.comp.elements[i].sourceline == el.sourceline]
        exact = [i for i in same if self.comp.elements[i].get("id") == el.get("id")]
        return (exact or same or [None])[0]

    def box(self, i: int, el, text: str, pieces: tuple[Piece, ...] | None = None
            ) -> Ink | None:
        """The laid-out ink box of ``el`` in its own user space (for auto pivots)."""
        lay = self.layout(i, text, pieces)
        ink = lay.ink
        if isinstance(lay, CurveLayout):  # placed by the curve, not by x/y
            return ink
        return ink.moved(first_number(el, "x"), first_number(el, "y")) if ink else None

    def place(self, i: int, el, text: str, pieces: tuple[Piece, ...] | None = None
              ) -> tuple[etree._Element | None, list[tuple[etree._Element, str]]]:
        """Lay ``el`` out in a frame's document. Returns the wrapping group (None
        when the text stays one plain element) and each ``<text>`` with the
        characters it must draw; the caller writes them (as CDATA) and puts
        the opacity on the group, or folds it into the text's paint."""
        spec = self.specs[i]
        lay = self.layout(i, text, pieces)
        if isinstance(lay, CurveLayout):
            return self._place_along(i, el, lay)
        x, y = first_number(el, "x"), first_number(el, "y")
        for node in [el, *el.iterancestors()]:  # the rasterizer ignores it; layout did it
            node.attrib.pop("text-anchor", None)
        el.set("font-size", fmt(lay.size))
        ink = lay.ink
        if spec.chip is None and len(lay.lines) == 1:
            line = lay.lines[0]
            if line.dx:
                el.set("x", fmt(x + line.dx))
            if line.dy:
                el.set("y", fmt(y + line.dy))
            for name, value in line.paint:
                el.set(name, value)
            self._record(i, el, lay, x, y)
            return None, [(el, line.text)]
        group = group_for(el)
        if spec.chip is not None and ink is not None:
            group.append(chip_rect(el, spec.chip, ink.moved(x, y)))
        runs = []
        for line in lay.lines:
            node = el if not runs else line_copy(el)
            node.set("x", fmt(x + line.dx))
            node.set("y", fmt(y + line.dy))
            for name, value in line.paint:
                node.set(name, value)
            group.append(node)
            runs.append((node, line.text))
        self._record(i, el, lay, x, y)
        return group, runs

    def _place_along(self, i: int, el, lay: CurveLayout):
        """One ``<text>`` per character, each moved and turned onto the curve."""
        for node in [el, *el.iterancestors()]:
            node.attrib.pop("text-anchor", None)
        el.set("font-size", fmt(lay.size))
        group = group_for(el)
        runs = []
        for glyph in lay.glyphs:
            node = el if not runs else line_copy(el)
            node.set("x", fmt(-glyph.advance / 2))
            node.set("y", "0")
            node.set("transform", "matrix(" + ",".join(fmt(v) for v in glyph.matrix) + ")")
            group.append(node)
            runs.append((node, glyph.text))
        if not runs:  # nothing with ink: the element stays, drawing an empty string
            group.append(el)
            runs.append((el, ""))
        if self.runs is not None:
            source = self.comp.elements[i]
            for k, glyph in enumerate(lay.glyphs):
                ink = glyph.ink
                face = self.specs[i].face
                self.runs.append(Run(i, source.sourceline, source.get("id"), k,
                                     face.name, lay.size, glyph.text,
                                     (ink.x, ink.y, ink.w, ink.h), along=True,
                                     missing=missing_characters(face, glyph.text)))
        return group, runs

    def _record(self, i: int, el, lay: Layout, x: float, y: float) -> None:
        if self.runs is None:
            return
        source = self.comp.elements[i]
        for k, line in enumerate(lay.lines):
            ink = line.ink.moved(x, y)
            face = self.specs[i].face
            self.runs.append(Run(i, source.sourceline, source.get("id"), k,
                                 face.name, lay.size, line.text,
                                 (ink.x, ink.y, ink.w, ink.h),
                                 missing=missing_characters(face, line.text)))
