"""The hard limits on a composition, and the checks that enforce them before
anything is baked (docs/limits.md).

Each limit refuses input instead of allocating without bound, or refuses what
ThorVG is known to crash on or to draw wrongly; each refusal is a
:class:`NanoframesError` with a stable code, the file and the line.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

from lxml import etree

from ..errors import NanoframesError
from .presence import presence_of
from .svg import SVG_NS, href_of, local_name

# Hard limits (docs/limits.md). Each refuses input instead of allocating without bound.
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 256          # ThorVG silently draws nothing past ~2,192 nested groups
MAX_ELEMENTS = 20_000    # after <use> expansion
MAX_SIDE = 16_384        # pixels per canvas side
MAX_PIXELS = 64 * 1024 * 1024
MAX_FRAMES = 100_000
MAX_FPS = 240
MAX_DURATION = 3_600     # seconds
MAX_ATTRIBUTES = 256     # per element (lxml reads attributes in quadratic time)
MAX_TEXT_CHARS = 100_000  # in all <text>: ThorVG stalls or crashes on a million glyphs
MAX_MAGNITUDE = 1e9      # |number| in attributes and the timeline: bake's arithmetic stays finite
MAX_TIMELINE_WORK = 2_000_000  # elements x (animations + keyframes): bake matches each pair
# data-frame-text: a width or precision in a format spec; past it the formatted text
# is whatever the author asks for (".100000000f" segfaulted ThorVG's text bounds).
MAX_FORMAT_NUMBER = 64
# Characters a formatted field's value takes beyond its precision (sign, digits of
# 99,999 frames or 3,600 s, grouping, point, exponent, %): its length is at most
# max(width, precision + this), so the generated text is bounded before formatting.
FIELD_SLACK = 24
# Paint parameters, relative to the larger side of the canvas (or viewBox) in user
# units: a stroke wider than 4 sides covers the canvas anyway; ThorVG's round joins
# on stroke-width 1e8 did not finish in 60 s. A blur deviation past one side is a
# flat wash; stdDeviation 1e8 took 40 s a frame.
MAX_STROKE_SIDES = 4
MAX_BLUR_SIDES = 1

# Attributes whose value is a number (possibly with a unit): NaN/inf are refused.
NUMERIC_ATTRS = frozenset(
    "x y width height cx cy r rx ry x1 y1 x2 y2 opacity fill-opacity stroke-opacity "
    "stroke-width stroke-dashoffset font-size stop-opacity data-start data-duration "
    "data-fade data-bg-pad-x data-bg-pad-y data-bg-rx data-wrap data-fit data-fit-min "
    "data-speed data-in".split()
)
_NONFINITE = re.compile(r"(?i)\b(nan|inf|infinity)\b")


def _out_of_range(value: str) -> bool:
    """A numeric attribute (units and % aside) beyond what bake can do arithmetic on."""
    try:
        number = float(re.sub(r"(?i)(px|pt|em|%)\s*$", "", value.strip()))
    except ValueError:
        return False
    return not abs(number) <= MAX_MAGNITUDE


def check_timeline(animations, element_count: int, path: Path, line: int | None) -> None:
    """Refuse a timeline bake cannot evaluate in bounded time with finite arithmetic."""
    keyframes = sum(len(a.keyframes) for a in animations)
    if element_count * (len(animations) + keyframes) > MAX_TIMELINE_WORK:
        raise NanoframesError("timeline-too-large", f"{len(animations)} animations with "
                              f"{keyframes} keyframes over {element_count} elements exceed "
                              f"{MAX_TIMELINE_WORK} element-keyframe pairs", path, line)
    for anim in animations:
        for kf in anim.keyframes:
            stack = [kf.t, *kf.values.values()]
            if kf.ease:  # the numbers of cubic-bezier(...)
                stack.extend(float(n) for n in re.findall(r"\d+\.?\d*(?:[eE][+-]?\d+)?",
                                                          kf.ease))
            while stack:
                value = stack.pop()
                if isinstance(value, dict):
                    stack.extend(value.values())
                elif isinstance(value, (list, tuple)):
                    stack.extend(value)
                elif isinstance(value, (int, float)) and not isinstance(value, bool) \
                        and not abs(value) <= MAX_MAGNITUDE:
                    raise NanoframesError("timeline-number", f"timeline value {value:g} in "
                                          f"{anim.target!r} exceeds \u00b1{MAX_MAGNITUDE:g}",
                                          path, line)


def frame_text_chars(template: str, path: Path, line: int | None) -> int:
    """The most characters ``template`` can format to, from its specs alone; a width
    or precision over ``MAX_FORMAT_NUMBER`` is ``frame-text`` (naming the attribute).
    A template :mod:`string` cannot read is left to ``text.frame_text.check_template``."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return len(template)
    total = 0
    for literal, name, spec, _conversion in parsed:
        total += len(literal)
        if name is None:
            continue
        numbers = [int(n) for n in re.findall(r"\d+", spec or "")]  # width, precision
        if any(n > MAX_FORMAT_NUMBER for n in numbers):
            shown = template if len(template) <= 60 else template[:57] + "..."
            raise NanoframesError("frame-text", f"data-frame-text={shown!r}: {{{name}:{spec[:20]}}}"
                                  f" asks for a width or precision over {MAX_FORMAT_NUMBER}",
                                  path, line)
        total += max(numbers, default=0) + FIELD_SLACK
    return total


def drawn_text(el, path: Path) -> tuple[int, int]:
    """(characters, drawn elements) of one ``<text>``: frame text counted at its most,
    before it is formatted; text on a curve draws one ``<text>`` per character."""
    template = el.get("data-frame-text")
    if template is not None:
        chars = frame_text_chars(template, path, el.sourceline)
    else:
        chars = sum(len(s) for s in el.itertext())
    on_curve = el.get("data-curve-d") is not None or el.get("data-curve-circle") is not None
    return chars, 1 + (chars if on_curve else 0)


def check_tree(root, path: Path) -> int:
    """Depth, element count (with <use>, curve text and frame text expanded) and
    attribute sanity; returns the number of elements the document draws at most."""
    count = text_chars = 0
    ids: dict[str, etree._Element] = {}
    stack = [(root, 1)]
    while stack:
        el, depth = stack.pop()
        if not isinstance(el.tag, str):
            continue
        count += 1
        if depth > MAX_DEPTH:
            raise NanoframesError("too-deep", f"elements nest deeper than {MAX_DEPTH} levels",
                                  path, el.sourceline)
        if count > MAX_ELEMENTS:
            raise NanoframesError("too-many-elements", f"more than {MAX_ELEMENTS} elements",
                                  path, el.sourceline)
        if len(el.attrib) > MAX_ATTRIBUTES:
            raise NanoframesError("too-many-attributes", f"<{local_name(el)}> has more than "
                                  f"{MAX_ATTRIBUTES} attributes", path, el.sourceline)
        for name, value in el.attrib.items():
            if depth == 1 and name in ("width", "height", "data-duration"):
                continue  # the canvas: parse_bytes refuses these with their own codes
            if name in NUMERIC_ATTRS and (_NONFINITE.search(value) or _out_of_range(value)):
                raise NanoframesError("attr-invalid", f"{name}={value[:40]!r} on "
                                      f"<{local_name(el)}> is not a finite number within "
                                      f"\u00b1{MAX_MAGNITUDE:g}", path, el.sourceline)
        if local_name(el) == "text":
            chars, drawn = drawn_text(el, path)
            text_chars += chars
            if text_chars > MAX_TEXT_CHARS:
                raise NanoframesError("text-too-long", f"more than {MAX_TEXT_CHARS} characters "
                                      "of text (frame text counted at its longest)", path,
                                      el.sourceline)
            if drawn > 1:
                count += drawn - 1
                if count > MAX_ELEMENTS:
                    raise NanoframesError("too-many-elements", f"more than {MAX_ELEMENTS} "
                                          "elements (each character on a curve is one)", path,
                                          el.sourceline)
        if depth > 1:
            presence_of(el, path)  # refuse bad data-start/-duration/-fade at parse time
        if el.get("id"):
            ids.setdefault(el.get("id"), el)
        stack.extend((child, depth + 1) for child in el)
    return check_use(root, ids, path, count)


def cyclic_uses(root, ids: dict | None = None) -> list:
    """The ``<use>`` elements whose reference leads back to themselves (directly, or
    through other ``<use>``s), in document order. Renderers skip such a reference;
    bake removes these and draws the rest (lint: ``use-cycle``).

    A ``<use>`` U leads to every ``<use>`` inside the element it references (that
    element included); U is cyclic when it lies on a cycle of that graph, found
    with an iterative Tarjan (15,000 chained ``<use>``s must not recurse)."""
    uses = [el for el in root.iter(f"{{{SVG_NS}}}use", "use")]
    if not uses:
        return []
    if ids is None:
        ids = {}
        for el in root.iter(etree.Element):
            if el.get("id"):
                ids.setdefault(el.get("id"), el)
    inside: dict[int, list] = {}  # target -> the <use>s in its subtree

    def edges(use) -> list:
        target = ids.get((href_of(use) or "").removeprefix("#")) \
            if (href_of(use) or "").startswith("#") else None
        if target is None:
            return []
        if id(target) not in inside:
            inside[id(target)] = [n for n in target.iter(f"{{{SVG_NS}}}use", "use")]
        return inside[id(target)]

    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list = []
    cyclic: set[int] = set()
    for start in uses:
        if id(start) in index:
            continue
        work = [(start, iter(edges(start)))]
        index[id(start)] = low[id(start)] = len(index)
        stack.append(start)
        on_stack.add(id(start))
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if id(nxt) not in index:
                    index[id(nxt)] = low[id(nxt)] = len(index)
                    stack.append(nxt)
                    on_stack.add(id(nxt))
                    work.append((nxt, iter(edges(nxt))))
                elif id(nxt) in on_stack:
                    low[id(node)] = min(low[id(node)], index[id(nxt)])
                    if nxt is node:
                        cyclic.add(id(node))  # a self-loop
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[id(parent)] = min(low[id(parent)], low[id(node)])
            if low[id(node)] == index[id(node)]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(id(member))
                    component.append(member)
                    if member is node:
                        break
                if len(component) > 1:
                    cyclic.update(id(m) for m in component)
    return [u for u in uses if id(u) in cyclic]


def check_use(root, ids: dict, path: Path, plain_count: int) -> int:
    """Refuse <use> bombs: count the elements the references would expand to (text
    on a curve counted per character; a cyclic ``<use>``, which bake removes, expands
    to nothing); returns the count."""
    uses = [el for el in root.iter(f"{{{SVG_NS}}}use", "use")]
    if not uses:
        return plain_count
    skipped = {id(el) for el in cyclic_uses(root, ids)}
    sizes: dict[int, int] = {}

    def expanded(el, trail: tuple) -> int:
        key = id(el)
        if key in sizes:
            return sizes[key]
        if key in trail:
            raise NanoframesError("use-cycle", "<use> references form a cycle", path,
                                  el.sourceline)
        if len(trail) > MAX_DEPTH:
            raise NanoframesError("use-bomb", f"<use> references chain deeper than {MAX_DEPTH}",
                                  path, el.sourceline)
        total = 0
        for node in el.iter(etree.Element):
            total += drawn_text(node, path)[1] if local_name(node) == "text" else 1
            if local_name(node) == "use":
                target = (href_of(node) or "")
                if not target.startswith("#"):
                    raise NanoframesError("use-external", f"<use> may only reference an element"
                                          f" of this file by #id, got {target!r}", path,
                                          node.sourceline)
                ref = ids.get(target[1:])
                if ref is not None and id(node) not in skipped:
                    total += expanded(ref, trail + (key,))
            if total > MAX_ELEMENTS:
                raise NanoframesError("use-bomb", f"<use> references expand to more than "
                                      f"{MAX_ELEMENTS} elements", path, node.sourceline)
        sizes[key] = total
        return total

    total = expanded(root, ())
    if total + plain_count > MAX_ELEMENTS:
        raise NanoframesError("use-bomb", f"<use> references expand to more than "
                              f"{MAX_ELEMENTS} elements", path, uses[0].sourceline)
    return total


_STYLE_DECL = re.compile(r"(?i)(?:^|;)\s*(stroke-width|stdDeviation)\s*:\s*([^;]*)")


def _numbers(value: str) -> list[float]:
    out = []
    for token in re.findall(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", value or ""):
        try:
            out.append(abs(float(token)))
        except ValueError:  # pragma: no cover - the pattern only finds numbers
            pass
    return out


def user_side(width: int, height: int, view_box: str | None) -> float:
    """The larger side of the canvas in user units (the viewBox's, where it is larger)."""
    side = float(max(width, height))
    box = _numbers(view_box or "")
    if len(box) == 4:
        side = max(side, box[2], box[3])
    return side


def check_paint(root, animations, side: float, path: Path) -> None:
    """Stroke widths and blur deviations (attributes, ``style=`` and timeline values)
    bounded relative to ``side`` (``user_side``): past it, work in ThorVG grows with
    the value, not the picture."""
    bounds = {"stroke-width": MAX_STROKE_SIDES * side, "stdDeviation": MAX_BLUR_SIDES * side}

    def refuse(name: str, value: object, where: str, line: int | None) -> NanoframesError:
        sides = MAX_STROKE_SIDES if name == "stroke-width" else MAX_BLUR_SIDES
        return NanoframesError("attr-invalid", f"{name}={str(value)[:40]!r} on {where} exceeds "
                               f"{bounds[name]:g} ({sides} x the canvas's larger side)", path,
                               line)

    for el in root.iter(etree.Element):
        found = [(name, el.get(name)) for name in bounds if el.get(name) is not None]
        found += [(m.group(1), m.group(2)) for m in _STYLE_DECL.finditer(el.get("style") or "")]
        for name, value in found:
            key = "stdDeviation" if name.lower() == "stddeviation" else name.lower()
            if any(n > bounds[key] for n in _numbers(value)):
                raise refuse(key, value, f"<{local_name(el)}>", el.sourceline)
    for anim in animations:
        for kf in anim.keyframes:
            value = kf.values.get("stroke-width")
            numbers = _numbers(value) if isinstance(value, str) else [value] \
                if isinstance(value, (int, float)) and not isinstance(value, bool) else []
            if any(abs(n) > bounds["stroke-width"] for n in numbers):
                raise refuse("stroke-width", value, f"the timeline's {anim.target!r}", None)
