"""Composition + frame → one static, well-formed SVG document (bytes).

The clock is resolved here, before the rasterizer sees anything
(docs/compositions.md, "What the rendered document contains"): presence and
fades, animated values, colours with alpha, fonts by exact face name, text
entities, images as ``data:`` URIs, the viewport. The output never holds a
``<script>``, a ``<style>`` sheet (an ``@font-face`` in one crashes ThorVG), an
unresolved family list or an external reference.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable

from lxml import etree

from ..config import load_config
from ..engine import site
from ..errors import NanoframesError
from ..model.color import format_color
from ..model.composition import Composition, aspect_of, local_name, presence_of
from ..model.geometry import Box, center, local_box
from ..model.limits import cyclic_uses
from ..model.svg import is_drawn, read_number
from ..model.timeline import clamp01, fmt, needs_auto_center, transform_to_svg, values_for
from ..text.content import collect
from ..text.fonts import Face, FontBook, Resolution, enforce, fallback_allowed, font_book
from ..text.layout import TextLayouts
from .clips import Clip, is_clip_href, load_clip
from .media import Image, is_composition_href, load_image
from .nested import NestedImage, load_nested
from .tree import (  # noqa: F401  (remove_keeping_tail, set_text, text_content: re-exported)
    COLOR_OPACITY,
    DROPPED_TAGS,
    HREF,
    XHREF,
    clean,
    clip_to,
    embed,
    fold_colour_alpha,
    inherited_opacity,
    normalise_style,
    opacity_of,
    opacity_to_group,
    place_image,
    plain_hex,
    remove_keeping_tail,
    safe_value,
    set_text,
    strip_directives,
    text_content,
    unprefixed,
)

NUMERIC_PROPS = frozenset(
    "x y width height cx cy r rx ry x1 y1 x2 y2 stroke-width stroke-dashoffset".split())
GEOMETRY_PROPS = frozenset(
    "x y width height cx cy r rx ry x1 y1 x2 y2 stroke-width".split())
OPACITY_PROPS = frozenset(("opacity", "fill-opacity", "stroke-opacity"))
# data: URIs in one rendered document, all references counted (docs/limits.md).
MAX_EMBEDDED_BYTES = 96 * 1024 * 1024
# ThorVG decodes each <image> reference on its own: an 8 KB PNG declaring 8192x8192
# is 256 MiB per reference (24 references took 6.2 GB). Two full-size images.
MAX_DECODED_BYTES = 512 * 1024 * 1024
# Attributes that mean a <text> has not been laid out yet.
LAYOUT_ATTRS = ("text-anchor", "data-bg", "data-wrap", "data-fit", "data-frame-text",
                "data-curve-d", "data-curve-circle")


class Baker:
    """Per-composition state for baking frames: everything that does not depend on t
    is worked out once (which animations hit which element, presence windows, font
    resolutions, image data)."""

    def __init__(self, comp: Composition, book: FontBook | None = None) -> None:
        self.comp = comp
        self.book = book or font_book(load_config(comp.project_root))
        els = comp.elements
        self.animations = [tuple(a for a in comp.animations if a.selector.matches(el))
                           for el in els]
        self.presence = [presence_of(el, comp.path) for el in els]
        cyclic = {id(el) for el in cyclic_uses(comp.root)}  # skipped, as renderers do
        self._cyclic = [i for i, el in enumerate(els) if id(el) in cyclic] if cyclic else []
        self.fonts: dict[int, Resolution] = {}
        self.sizes: dict[int, float] = {}
        self.images: dict[int, Image | NestedImage] = {}
        by_href: dict[str, Image] = {}  # one file referenced many times is resolved once
        # What one frame's document embeds (base64) and what ThorVG decodes from it
        # (width x height x 4 per reference), nested compositions' per instance.
        self.embedded_bytes = self.decoded_bytes = 0
        inline = 0  # inline data: images so far, named by position
        for i, el in enumerate(els):
            tag = local_name(el)
            if tag == "text":
                req = self.book.request(el)  # font_request, with the faces' ex
                self.fonts[i] = self.book.resolve(req)
                if self.fonts[i].refused:  # never silently another face
                    enforce(self.fonts[i], comp.path,
                            fallback_allowed(load_config(comp.project_root)))
                self.sizes[i] = req.size_px
            elif tag == "image" and self._drawn(el):
                aspect_of(el, comp.path)  # refuse an unknown data-aspect up front
                href = el.get(HREF) or el.get(XHREF) or ""
                if is_composition_href(href):
                    nested = self.images[i] = load_nested(self, i, el, href)
                    self._count_images(el, nested.baker.embedded_bytes,
                                       nested.baker.decoded_bytes)
                    continue
                if is_clip_href(href):  # clips.py: decoded once, a frame per instant
                    clip = self.images[i] = load_clip(el, href, comp.directory,
                                                      comp.project_root, comp.path)
                    self._count_images(el, max(map(len, clip.decoded.uris), default=0),
                                       clip.decoded.width * clip.decoded.height * 4)
                    continue
                if href.startswith("data:"):  # named by position: it has no path
                    inline += 1
                image = by_href.get(href) or load_image(
                    href, comp.directory, comp.project_root, comp.path, el.sourceline, inline)
                by_href[href] = self.images[i] = image
                self._count_images(el, len(image.data_uri), image.width * image.height * 4)
        # Layout specs are read here so a bad data-frame-text template fails at once.
        self.layout = TextLayouts(comp, self.fonts, self.sizes)
        self.measure: Callable[[Face, float, str], Box] | None = None
        self._cached_template = None
        self._pivots: dict[int, tuple[float, float] | None] = {}
        self.embedded: set[int] = set()  # dynamic images whose data URI the template holds
        self._spans: dict[int, tuple[int, ...]] = {}  # see _clipped_spans
        self._static_geometry: dict[int, bool] = {}  # see _pivot
        # elements whose authored colours may carry alpha to fold (the rest skip it)
        self._colours = [el.get("style") is not None or any(
            not plain_hex(el.get(prop)) for prop in COLOR_OPACITY if el.get(prop) is not None)
            for el in els]
        self.index: int | None = None
        self.t: float | None = None

    def _count_images(self, el, embedded: int, decoded: int) -> None:
        """Add one reference's bytes; past a limit, ``images-too-large`` (docs/limits.md)."""
        self.embedded_bytes += embedded
        self.decoded_bytes += decoded
        if self.embedded_bytes > MAX_EMBEDDED_BYTES:  # each reference: a copy in every frame
            raise NanoframesError(
                "images-too-large", f"the images embedded in one frame come to over "
                f"{MAX_EMBEDDED_BYTES:,} bytes (the limit) by line {el.sourceline}",
                self.comp.path)
        if self.decoded_bytes > MAX_DECODED_BYTES:  # ThorVG decodes every reference
            raise NanoframesError(
                "images-too-large", f"the images one frame draws decode to over "
                f"{MAX_DECODED_BYTES:,} bytes (width x height x 4 per reference; the limit) "
                f"by line {el.sourceline}", self.comp.path)

    def uses_video(self) -> bool:
        """Whether this film draws a video clip (its own, or a nested composition's)."""
        return any(isinstance(img, Clip) or (isinstance(img, NestedImage)
                                             and img.baker.uses_video())
                   for img in self.images.values())

    @staticmethod
    def _drawn(el) -> bool:
        return is_drawn(el)

    def faces(self) -> list[Face]:
        """The distinct faces this composition's text resolves to, in a stable order."""
        seen: dict[str, Face] = {}
        for res in self.fonts.values():
            seen.setdefault(res.face.name, res.face)
        for image in self.images.values():
            if isinstance(image, NestedImage):  # a child's text draws in this film too
                for face in image.baker.faces():
                    seen.setdefault(face.name, face)
        return [seen[k] for k in sorted(seen)]

    def inputs(self) -> tuple[tuple[str, str, str], ...]:
        """The files this film is drawn from, as this process read them: ``(kind,
        file, SHA-256)`` for the composition and each nested one (``source``), each
        image and clip (``media``) and each face (``font``), sorted. Another process
        that parsed the same files gets the same tuple only from the same versions."""
        from ..text.fonts import face_digest

        items = {("source", str(self.comp.path), self.comp.sha256)}
        for image in self.images.values():
            if isinstance(image, NestedImage):  # its source, images and faces
                items.update(image.baker.inputs())
            else:
                items.add(("media", str(image.path), image.sha256))
        items.update(("font", str(face.path), face_digest(face)) for face in self.faces())
        return tuple(sorted(items))

    def document(self, index: int | None = None, t: float | None = None) -> bytes:
        """The rendered document for frame ``index`` (or the instant ``t``).

        Only the elements that can change with time are worked on per frame
        (see ``_template``); everything else was resolved once.
        """
        with site.working_on(self.comp.path, index):  # text is measured by ThorVG
            return self._document(index, t)

    def _document(self, index: int | None, t: float | None) -> bytes:
        comp = self.comp
        if t is None:
            t = comp.time_of(index or 0)
        self.index, self.t = index, t  # the frame being baked, for per-frame text
        template, positions = self._template()
        root = copy.deepcopy(template)
        els = list(root.iter(etree.Element))
        absent = []
        for pos, i in positions:
            el = els[pos]
            presence = self.presence[i]
            fade = presence.factor(t) if presence else 1.0
            if fade <= 0.0:
                absent.append(el)
                continue
            self._resolve(i, el, t, fade)
            strip_directives(el)
        for el in absent:
            remove_keeping_tail(el)
        return etree.tostring(root, encoding="utf-8")

    def _is_dynamic(self, i: int, el) -> bool:
        """Whether element ``i`` can look different from one frame to the next."""
        if self.animations[i] or self.presence[i] is not None:
            return True
        if el.get("data-frame-text") is not None:
            return True
        if i in self.fonts and self._clipped_spans(i):
            return True
        href = el.get(HREF) or el.get(XHREF)
        return local_name(el) == "image" and (is_composition_href(href) or is_clip_href(href))

    def _clipped_spans(self, i: int) -> tuple[int, ...]:
        """Offsets (among the text's descendants) of spans with a presence window
        (worked out once per element: it is asked per frame)."""
        if i not in self._spans:
            count = sum(1 for _ in self.comp.elements[i].iterdescendants(etree.Element))
            self._spans[i] = tuple(k for k in range(count)
                                   if self.presence[i + 1 + k] is not None)
        return self._spans[i]

    def _template(self):
        """The document with every time-independent element already resolved, and
        the (position in document order, element index) of the dynamic ones."""
        if self._cached_template is not None:
            return self._cached_template
        comp = self.comp
        root = copy.deepcopy(comp.root)
        els = list(root.iter(etree.Element))  # aligned with comp.elements
        dynamic: dict[int, int] = {}
        for i, el in enumerate(els):
            if self._is_dynamic(i, el):
                dynamic[id(el)] = i
                if isinstance(self.images.get(i), Image):  # hrefs are not animatable:
                    embed(el, self.images[i])            # embed once, not per frame
                    self.embedded.add(i)
            else:
                self._resolve(i, el, None, 1.0)
        for i in self._cyclic:
            remove_keeping_tail(els[i])
        clean(root, keep=set(dynamic))
        root.set("width", str(comp.width))
        root.set("height", str(comp.height))
        root.set("viewBox", comp.view_box or f"0 0 {comp.width} {comp.height}")
        positions = [(pos, dynamic[id(el)]) for pos, el in enumerate(root.iter(etree.Element))
                     if id(el) in dynamic]
        del els
        root = unprefixed(root)  # same elements in the same order: positions hold
        self._cached_template = (root, positions)
        return self._cached_template

    def _resolve(self, i: int, el, t: float | None, fade: float) -> None:
        """Resolve one element in place: style, animated values at ``t`` (None for a
        static element), colour alpha, the fade, text and images."""
        normalise_style(el)
        if t is not None and self.animations[i]:
            self._animate(i, el, t)
        if self._colours[i]:
            fold_colour_alpha(el)
        if fade < 1.0:
            el.set("opacity", fmt(opacity_of(el, "opacity") * fade))
        if i in self.fonts:
            self._text(i, el, t)
        elif i in self.images:
            self._image(i, el)

    # --- per element ------------------------------------------------------------

    def _animate(self, i: int, el, t: float) -> None:
        values = values_for(self.animations[i], el, t, matched=True)
        transform = values.pop("transform", None)
        colours = []
        for prop, value in values.items():
            if value is None:
                continue
            if prop in OPACITY_PROPS and isinstance(value, float):
                el.set(prop, fmt(clamp01(value)))
            elif prop in COLOR_OPACITY and isinstance(value, tuple):
                colours.append((prop, value))  # after the opacities: alpha multiplies them
            elif prop in NUMERIC_PROPS and isinstance(value, float):
                if prop in ("width", "height", "r", "rx", "ry", "stroke-width"):
                    value = max(0.0, value)
                el.set(prop, fmt(value))
            elif isinstance(value, str) and safe_value(value):
                el.set(prop, value)
        for prop, value in colours:
            hex_, alpha = format_color(value)
            el.set(prop, hex_)
            if alpha < 1.0:
                pair = COLOR_OPACITY[prop]
                el.set(pair, fmt(opacity_of(el, pair) * alpha))
        if transform is not None:
            pivot = None
            if needs_auto_center(transform):
                pivot = self._pivot(i, el)
            motion = transform_to_svg(transform, pivot)
            if motion:
                own = el.get("transform", "").strip()
                el.set("transform", f"{own} {motion}".strip())

    def _pivot(self, i: int, el) -> tuple[float, float] | None:
        """Centre of the element's own geometry box; worked out once when nothing
        inside the element (itself included) changes its geometry over time."""
        if i in self._pivots:
            return self._pivots[i]
        pivot = center(local_box(el, self._measure_text))
        if i not in self._static_geometry:
            self._static_geometry[i] = self._geometry_is_static(i)
        if self._static_geometry[i]:
            self._pivots[i] = pivot
        return pivot

    def _geometry_is_static(self, i: int) -> bool:
        """No animated geometry on the element, no per-frame text, and nothing inside
        it that changes from frame to frame."""
        el = self.comp.elements[i]
        if el.get("data-frame-text") is not None:
            return False
        if any(track.prop in GEOMETRY_PROPS for anim in self.animations[i]
               for track in anim.tracks):
            return False
        inside = sum(1 for _ in el.iterdescendants(etree.Element))
        return not any(self._is_dynamic(j, self.comp.elements[j])
                       for j in range(i + 1, i + 1 + inside))

    def _text(self, i: int, el, t: float | None) -> None:
        res = self.fonts[i]
        el.set("font-family", res.face.name)
        for name in ("font-weight", "font-style"):
            el.attrib.pop(name, None)
        opacity = opacity_of(el, "opacity")
        el.attrib.pop("opacity", None)
        if t is not None:  # a clipped <tspan> that is absent now does not draw
            spans = list(el.iterdescendants(etree.Element))
            clipped = self._clipped_spans(i)
            # (an enclosing <text> may already have flattened this one's spans)
            if clipped and len(spans) > clipped[-1]:
                for k in clipped:
                    if self.presence[i + 1 + k].factor(t) <= 0.0:
                        remove_keeping_tail(spans[k])
        found = collect(el)  # characters, and positioned spans' pieces
        text = self.layout.content(i, found.text, t)
        # Layout writes font-size, positions, and wraps lines/chip in a <g> when needed.
        group, runs = self.layout.place(i, el, text, found.pieces)
        if group is not None:
            # ThorVG honours opacity on <g>: chip and lines fade as one picture.
            if opacity < 1.0:
                group.set("opacity", fmt(opacity))
        elif opacity < 1.0:
            # ThorVG ignores opacity on <text>: fold it into the paint opacities.
            for pair in ("fill-opacity", "stroke-opacity"):
                el.set(pair, fmt(inherited_opacity(el, pair) * opacity))
        for node, chars in runs:
            set_text(node, chars)

    def _measure_text(self, el) -> Box | None:
        """Renderer-exact ink box of a <text> in its own user space (fit, wrap and
        anchor applied), with the frame's text for a frame-text element."""
        if not any(el.get(name) is not None for name in LAYOUT_ATTRS):
            face = self._faces_by_name.get(el.get("font-family", ""))
            if face is not None:  # already laid out (static text, or a wrapped line)
                size = read_number(el, "font-size", 16.0, strict=False)
                ink = self.layout.measurer.ink(face, size, text_content(el))
                if ink.empty:
                    return None
                x = read_number(el, "x", 0.0, strict=False)
                y = read_number(el, "y", 0.0, strict=False)
                return (x + ink.x, y + ink.y, x + ink.x + ink.w, y + ink.y + ink.h)
        idx = self.layout.index_of(el)
        if idx is None:
            return None
        found = collect(el)
        text = self.layout.content(idx, found.text, self.t or 0.0)
        box = self.layout.box(idx, el, text, found.pieces)
        return None if box is None else (box.x, box.y, box.x + box.w, box.y + box.h)

    @functools.cached_property
    def _faces_by_name(self) -> dict[str, Face]:
        return {face.name: face for face in self.faces()}

    def _image(self, i: int, el) -> None:
        image = self.images[i]
        if isinstance(image, NestedImage):  # dynamic, so self.t is this frame's time
            image.inline(el, self.t or 0.0)  # nested.py: time mapping, fit, clip, ids
            return
        if isinstance(image, Clip):  # dynamic too: the clip's frame at this instant
            embed(el, image.uri_at(self.t or 0.0))
            place_image(el, i, image.width, image.height)
            opacity_to_group(el)  # ThorVG ignores opacity on <image>: fades need a group
            return
        if i not in self.embedded:
            embed(el, image)
        place_image(el, i, image.width, image.height)
        opacity_to_group(el)  # still images fade too: ThorVG ignores opacity on <image>


def bake(comp: Composition, index: int | None = None, t: float | None = None) -> bytes:
    """One-shot convenience: the document for one frame (builds a Baker)."""
    return Baker(comp).document(index, t)
