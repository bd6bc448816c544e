"""Nested compositions: an ``<image>`` whose href is another ``.nf.svg``
(docs/compositions.md, "Nested compositions").

The child is baked at the mapped time ``child_t = data-in + (t - data-start) x
data-speed`` and its content is inlined in place of the ``<image>``. ThorVG 1.0.4
ignores ``x``/``y``/``width``/``height``/``viewBox``/``preserveAspectRatio`` on a
nested ``<svg>`` (measured: the content draws at its own coordinates, unscaled),
so the placement is a ``<g transform>`` we compute, clipped to the declared box
and the child's canvas with a ``clipPath`` (ThorVG honours both, by pixels).

Every id inside an inlined child gets a prefix unique to the ``<image>`` it
replaces, and so does every ``url(#...)`` and ``href="#..."`` that points at one,
so two instances (or a child and its parent) never collide.
"""

from __future__ import annotations

import copy
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lxml import etree

from ..errors import NanoframesError
from ..model.composition import Composition, parse
from ..model.geometry import Matrix, multiply
from ..model.limits import MAX_ELEMENTS
from ..model.svg import SVG_NS, XLINK_HREF, href_of, is_drawn, local_name, read_number
from ..model.timeline import fmt
from .media import is_composition_href, resolve_reference
from .timing import Timing, read_timing
from .tree import natural_box

if TYPE_CHECKING:
    from .baker import Baker
    from .media import Image

MAX_NESTING = 8  # compositions inside compositions; deeper is 'nested-too-deep'
_CACHED_FRAMES = 16  # parsed child frames kept per child (instances share them)
# Root attributes of the child's rendered document that are about its viewport,
# not inherited presentation: everything else moves onto the inlined group.
_VIEWPORT_ATTRS = frozenset((
    "width", "height", "viewBox", "x", "y", "preserveAspectRatio", "version", "id",
    "transform", "class", "baseProfile",
))
_URL_REF = re.compile(r"url\(\s*(['\"]?)#")
_XML_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                              huge_tree=True)  # our own output: data: images may be large


# --- the graph of compositions ------------------------------------------------------

def nested_images(comp: Composition) -> list[tuple[etree._Element, str]]:
    """The drawn ``<image>`` elements of ``comp`` whose href names a composition."""
    out = []
    for el in comp.elements:
        if local_name(el) == "image" and is_drawn(el):  # as bake inlines them
            href = href_of(el) or ""
            if is_composition_href(href):
                out.append((el, href))
    return out


def resolve_child(comp: Composition, el, href: str) -> Path:
    """The child file, sandboxed to the parent's project (errors: image-outside/-missing)."""
    return resolve_reference(href, comp.directory, comp.project_root, comp.path, el.sourceline)


def _name(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _walk(comp: Composition, parsed: dict[Path, Composition]) -> list[Path]:
    """Depth-first over nested compositions: cycles, depth and the total number of
    elements once every instance is inlined (a fan-out bomb) are errors."""
    order: dict[Path, None] = {}
    sizes: dict[Path, int] = {}  # elements a composition inlines to, itself included
    heights: dict[Path, int] = {}  # levels of nesting below a composition
    root = comp.project_root.resolve()

    def visit(c: Composition, chain: tuple[Path, ...]) -> int:
        total = c.drawn or len(c.elements)  # curve text and <use> expanded
        height = 0
        for el, href in nested_images(c):
            path = resolve_child(c, el, href)
            if path in chain:
                names = " -> ".join(_name(p, root) for p in (*chain, path))
                raise NanoframesError("nested-cycle", f"compositions include each other: "
                                      f"{names}", c.path, el.sourceline)
            if len(chain) + heights.get(path, 0) > MAX_NESTING:
                raise NanoframesError("nested-too-deep", f"compositions nest more than "
                                      f"{MAX_NESTING} levels deep at {href!r}", c.path,
                                      el.sourceline)
            order.setdefault(path, None)
            if path not in sizes:
                if path not in parsed:
                    parsed[path] = parse(path, comp.project_root)
                sizes[path] = visit(parsed[path], (*chain, path))
            total += sizes[path]
            height = max(height, heights[path] + 1)
            if total > MAX_ELEMENTS:
                raise NanoframesError("nested-bomb", f"nested compositions inline to more "
                                      f"than {MAX_ELEMENTS} elements (at {href!r})", c.path,
                                      el.sourceline)
        heights[chain[-1]] = height
        return total

    visit(comp, (comp.path.resolve(),))
    return list(order)


def children(comp: Composition) -> list[Path]:
    """Every composition ``comp`` inlines, recursively, de-duplicated, in discovery order.

    Raises ``nested-cycle``, ``nested-too-deep``, or the child's own parse or
    reference error. Identity hashes these files' sources, media and fonts into
    the parent's (see ``source_extras`` and ``all_images``).
    """
    return _walk(comp, {})


# --- time and placement ------------------------------------------------------------

def child_time(child: Composition, t: float, at: Timing) -> float:
    """``in + (t - start) x speed``, wrapped modulo the child's film length when looping,
    else clamped to the child's first and last frame times."""
    ct = at.in_ + (t - at.start) * at.speed
    last = child.time_of(child.frame_count - 1)
    if at.loop:
        period = float(child.frame_count / child.fps)  # N/fps: seamless for a loop
        ct = ct % period
        return ct if ct < period else 0.0  # -1e-17 % p == p in floats
    return min(max(ct, 0.0), last)


def _view_box(child: Composition) -> tuple[float, float, float, float]:
    if child.view_box:
        nums = [float(v) for v in re.split(r"[\s,]+", child.view_box.strip()) if v]
        if len(nums) == 4 and nums[2] > 0 and nums[3] > 0:
            return nums[0], nums[1], nums[2], nums[3]
    return 0.0, 0.0, float(child.width), float(child.height)


def _fit(vw: float, vh: float, w: float, h: float, par: str) -> tuple[float, float, float, float]:
    """preserveAspectRatio: (scale x, scale y, offset x, offset y) of a vw x vh box in w x h."""
    words = par.split()
    align = words[0] if words else "xMidYMid"
    if align == "none":
        return w / vw, h / vh, 0.0, 0.0
    s = (max if "slice" in words[1:] else min)(w / vw, h / vh)
    frac = {"Min": 0.0, "Mid": 0.5, "Max": 1.0}
    fx = frac.get(align[1:4], 0.5)
    fy = frac.get(align[5:8], 0.5)
    return s, s, (w - vw * s) * fx, (h - vh * s) * fy


ASPECT_PAR = {"stretch": "none", "contain": "xMidYMid meet", "cover": "xMidYMid slice"}


def placement(child: Composition, x: float, y: float, w: float, h: float, aspect: str,
              root_par: str | None) -> tuple[Matrix, tuple[float, float, float, float]]:
    """The child-user-space -> parent matrix and the clip rect (x0, y0, x1, y1) in the parent.

    Two fits compose: the child's viewBox into its canvas (as its own root
    would draw it), then its canvas into the declared box per ``data-aspect``.
    The clip is the box intersected with the child's canvas.
    """
    cw, ch = float(child.width), float(child.height)
    sx, sy, ox, oy = _fit(cw, ch, w, h, ASPECT_PAR.get(aspect, "none"))
    vx, vy, vw, vh = _view_box(child)
    vsx, vsy, vox, voy = _fit(vw, vh, cw, ch, root_par or "xMidYMid meet")
    canvas: Matrix = (sx, 0.0, 0.0, sy, x + ox, y + oy)
    view: Matrix = (vsx, 0.0, 0.0, vsy, vox - vx * vsx, voy - vy * vsy)
    cx0, cy0, cx1, cy1 = x + ox, y + oy, x + ox + cw * sx, y + oy + ch * sy
    clip = (max(x, cx0), max(y, cy0), min(x + w, cx1), min(y + h, cy1))
    return multiply(canvas, view), clip


# --- inlining ------------------------------------------------------------------------

def prefix_ids(root, prefix: str) -> None:
    """Prefix every id in ``root`` and every local reference to one."""
    for el in root.iter(etree.Element):
        for name, value in el.attrib.items():
            if name == "id":
                el.set(name, prefix + value)
            elif name in ("href", XLINK_HREF):
                if value.startswith("#"):
                    el.set(name, "#" + prefix + value[1:])
            elif "url(" in value:
                el.set(name, _URL_REF.sub(lambda m: f"url({m.group(1)}#{prefix}", value))


@dataclass
class ChildFilm:
    """One child composition, baked on demand; shared by all its instances in a parent."""

    comp: Composition
    baker: Baker
    _frames: OrderedDict[float, etree._Element] = field(default_factory=OrderedDict)

    def root_at(self, t: float) -> etree._Element:
        """The child's rendered document at ``t``, parsed (do not mutate: copy it)."""
        root = self._frames.get(t)
        if root is None:
            root = etree.fromstring(self.baker.document(None, t), _XML_PARSER)
            self._frames[t] = root
            if len(self._frames) > _CACHED_FRAMES:
                self._frames.popitem(last=False)
        else:
            self._frames.move_to_end(t)
        return root


@dataclass
class NestedImage:
    """An ``<image>`` of the parent that inlines a child composition."""

    href: str
    film: ChildFilm
    prefix: str
    timing: Timing

    @property
    def path(self) -> Path:
        return self.film.comp.path

    @property
    def baker(self) -> Baker:
        return self.film.baker

    def time(self, t: float) -> float:
        return child_time(self.film.comp, t, self.timing)

    def inline(self, el, t: float) -> None:
        """Turn ``el`` (the parent's ``<image>``, already animated) into the child's frame."""
        child = self.film.comp
        # Lenient, as bake places a plain <image>: a bad box falls back to the default.
        x, y = read_number(el, "x", 0.0, strict=False), read_number(el, "y", 0.0, strict=False)
        w, h = natural_box(el, child.width, child.height)  # one side given: keep the aspect
        aspect = (el.get("data-aspect") or "stretch").strip()
        source = self.film.root_at(self.time(t))
        for name in ("x", "y", "width", "height", "preserveAspectRatio", "href",
                     XLINK_HREF):
            el.attrib.pop(name, None)
        # The <image> becomes a group: its id, class, transform, opacity (with the
        # fade already folded in) and clip-path keep applying to the whole child.
        el.tag = f"{{{SVG_NS}}}g"
        for node in list(el):
            el.remove(node)
        el.text = None
        if w <= 0 or h <= 0:
            return
        matrix, (x0, y0, x1, y1) = placement(child, x, y, w, h, aspect,
                                             source.get("preserveAspectRatio"))
        if x1 <= x0 or y1 <= y0:
            return
        clip_id = f"{self.prefix}viewport"
        defs = etree.SubElement(el, f"{{{SVG_NS}}}defs")
        clip = etree.SubElement(defs, f"{{{SVG_NS}}}clipPath", id=clip_id)
        etree.SubElement(clip, f"{{{SVG_NS}}}rect", x=fmt(x0), y=fmt(y0),
                         width=fmt(x1 - x0), height=fmt(y1 - y0))
        clipped = etree.SubElement(el, f"{{{SVG_NS}}}g", {"clip-path": f"url(#{clip_id})"})
        inner = etree.SubElement(clipped, f"{{{SVG_NS}}}g",
                                 transform="matrix(" + ",".join(fmt(v) for v in matrix) + ")")
        for name, value in source.attrib.items():
            if name not in _VIEWPORT_ATTRS:
                inner.set(name, value)
        content = copy.deepcopy(source)
        prefix_ids(content, self.prefix)
        for node in list(content):
            inner.append(node)


def unique_prefix(index: int, taken: set[str]) -> str:
    """``nfc<index>-``, lengthened until no id of the parent starts with it."""
    base = f"nfc{index}"
    while any(i.startswith(base + "-") for i in taken):
        base += "x"
    return base + "-"


def load_nested(baker: Baker, index: int, el, href: str) -> NestedImage:
    """Bake-side setup for one nested ``<image>``: validate the graph once per parent,
    build (or reuse) the child's Baker, read the time mapping. The child's Baker is
    of the parent's class, so this module never imports ``baker`` (no cycle)."""
    comp = baker.comp
    state = baker.__dict__.setdefault("_nested_state", {})
    if "children" not in state:
        _walk(comp, state.setdefault("parsed", {}))  # cycles/depth before any child bakes
        state["children"] = {}
        state["ids"] = {e.get("id") for e in comp.elements if e.get("id")}
    path = resolve_child(comp, el, href)
    films: dict[Path, ChildFilm] = state["children"]
    if path not in films:
        child = state["parsed"].get(path) or parse(path, comp.project_root)
        films[path] = ChildFilm(child, type(baker)(child, baker.book))
    return NestedImage(href=href, film=films[path], prefix=unique_prefix(index, state["ids"]),
                       timing=read_timing(el, comp.path))


def all_images(baker: Baker) -> list[tuple[Baker, Image]]:
    """Every raster image drawn by ``baker`` and its nested children, with the baker
    (so its composition) that references it: the media part of the identity."""
    from .clips import Clip
    from .media import Image as _Image

    out: list[tuple[Baker, Image]] = []
    for image in baker.images.values():
        if isinstance(image, (_Image, Clip)):  # a clip's bytes are media too
            out.append((baker, image))
        elif isinstance(image, NestedImage):
            out.extend(all_images(image.baker))
    return out


def child_sources(comp: Composition) -> list[tuple[str, Composition]]:
    """``(child path relative to comp's directory, parsed child)`` for every nested
    composition, recursively, sorted by path. The identity layer digests each child's
    source into the parent's, so editing a child (or a grandchild) moves ``source``."""
    import os

    base = comp.directory.resolve()
    parsed: dict[Path, Composition] = {}
    paths = _walk(comp, parsed)
    return sorted(((Path(os.path.relpath(p, base)).as_posix(), parsed[p]) for p in paths),
                  key=lambda item: item[0])
