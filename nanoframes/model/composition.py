"""Parse a ``*.nf.svg`` file into an immutable :class:`Composition`.

Safe on hostile input: lxml with no network, no DTD, no entity expansion (a
DOCTYPE is refused outright), and hard limits on file size, depth, element
count, ``<use>`` fan-out, canvas size and frame count. Every problem is a
:class:`NanoframesError` with a stable code, the file and the line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path

from lxml import etree

from ..config import find_project_root
from ..errors import NanoframesError
from .timeline import Animation, parse_timeline

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
TIMELINE_TYPE = "application/nanoframes+json"

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

# Attributes whose value is a number (possibly with a unit): NaN/inf are refused.
NUMERIC_ATTRS = frozenset(
    "x y width height cx cy r rx ry x1 y1 x2 y2 opacity fill-opacity stroke-opacity "
    "stroke-width stroke-dashoffset font-size stop-opacity data-start data-duration "
    "data-fade data-bg-pad-x data-bg-pad-y data-bg-rx data-wrap data-fit data-fit-min "
    "data-speed data-in".split()
)
_NONFINITE = re.compile(r"(?i)\b(nan|inf|infinity)\b")
# Bounded digits and exponent: Fraction("1e999999999") would compute 10**999999999.
_DECIMAL = re.compile(r"^\s*[+-]?(\d{1,20}\.?\d{0,20}|\.\d{1,20})([eE][+-]?\d{1,2})?\s*$")
# A DOCTYPE can only sit in the prolog (after the XML declaration, comments, PIs).
# Each PI/comment can match one way only (no lazy scan across its end), so a prolog
# of many PIs is linear, not exponential backtracking.
_DOCTYPE = re.compile(rb"^(?:\xef\xbb\xbf)?\s*(?:<\?(?:[^?]|\?(?!>))*\?>\s*"
                      rb"|<!--(?:[^-]|-(?!->))*-->\s*)*<!DOCTYPE")


def local_name(el) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def href_of(el) -> str | None:
    return el.get("href") if el.get("href") is not None else el.get(f"{{{XLINK_NS}}}href")


@dataclass(frozen=True)
class Presence:
    start: float
    end: float          # math.inf when the element stays until the film ends
    fade: float

    def factor(self, t: float) -> float:
        """0 when absent; else the fade factor min(1, (t-start)/fade, (end-t)/fade)."""
        if not (self.start <= t < self.end):
            return 0.0
        if self.fade <= 0:
            return 1.0
        return min(1.0, (t - self.start) / self.fade, (self.end - t) / self.fade)


@dataclass(frozen=True)
class Composition:
    """A parsed composition. Treat ``root`` as read-only: bake works on copies."""

    path: Path
    project_root: Path
    width: int
    height: int
    fps: Fraction
    duration: Fraction
    frame_count: int
    id: str
    view_box: str | None
    safe_margin: float | None
    palette_budget: int | None
    animations: tuple[Animation, ...]
    root: etree._Element = field(repr=False, compare=False)
    # The bytes, when parsed from text (``nanoframes.load``): ``path`` is then a name in
    # the directory relative references resolve against, with no file behind it.
    text: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def directory(self) -> Path:
        return self.path.parent

    def time_of(self, index: int) -> float:
        """Frame ``index`` is at t = index / fps (exact rational, then float)."""
        return float(Fraction(index) / self.fps)

    @cached_property
    def elements(self) -> tuple[etree._Element, ...]:
        """Every element in document order (the order bake's per-frame copy shares)."""
        return tuple(self.root.iter(etree.Element))

    def error(self, code: str, message: str, el=None) -> NanoframesError:
        return NanoframesError(code, message, self.path, getattr(el, "sourceline", None))


def _decimal(text: str | None, code: str, what: str, path: Path, line: int | None) -> Fraction:
    if text is None or not _DECIMAL.match(text):
        shown = text if text is None or len(text) <= 40 else text[:40] + "..."
        raise NanoframesError(code, f"{what} must be a number, got {shown!r}", path, line)
    return Fraction(text.strip())


def _number(el, name: str, path: Path, default: float | None = None) -> float | None:
    raw = el.get(name)
    if raw is None:
        return default
    text = raw.strip().removesuffix("px")
    if not _DECIMAL.match(text):  # not Python's float(): "1_5" or "nan" are not numbers
        raise NanoframesError("attr-invalid", f"{name}={raw!r} on <{local_name(el)}> is not a "
                              "number", path, el.sourceline)
    value = float(text)
    if not math.isfinite(value):
        raise NanoframesError("attr-invalid", f"{name}={raw!r} on <{local_name(el)}> is not "
                              "finite", path, el.sourceline)
    return value


number_attr = _number  # public name for other modules reading numeric directives


ASPECTS = ("stretch", "contain", "cover")


def aspect_of(el, path: Path) -> str:
    """An image's ``data-aspect`` (stretch by default); anything else is an error."""
    raw = el.get("data-aspect")
    aspect = "stretch" if raw is None else raw.strip()
    if aspect not in ASPECTS:
        raise NanoframesError("attr-invalid", f"data-aspect={raw!r} on <{local_name(el)}> must "
                              f"be one of {', '.join(ASPECTS)}", path, el.sourceline)
    return aspect


def presence_of(el, path: Path) -> Presence | None:
    """The clip window of an element, or None when it has no presence attributes.

    Without ``data-duration`` the element stays until the film ends, and that end is
    where a ``data-fade`` fades it out (CONTRACT.md §2). The root's ``data-duration``
    is the film's length, not a clip: the root has no presence.
    """
    parent = el.getparent()
    if parent is None or el.get("data-start") is None and el.get("data-duration") is None \
            and el.get("data-fade") is None:
        return None
    start = _number(el, "data-start", path, 0.0)
    length = _number(el, "data-duration", path, None)
    fade = _number(el, "data-fade", path, 0.0)
    if (length is not None and length < 0) or fade < 0:
        raise NanoframesError("attr-invalid", f"negative data-duration/data-fade on "
                              f"<{local_name(el)}>", path, el.sourceline)
    if length is None and fade > 0:
        film = el.getroottree().getroot().get("data-duration", "1.0")
        if _DECIMAL.match(film):  # else parse refuses it as duration-invalid
            length = max(0.0, float(Fraction(film.strip())) - start)
    return Presence(start, math.inf if length is None else start + length, fade)


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
        huge_tree=False, remove_comments=False, remove_pis=True, collect_ids=False,
    )


def _out_of_range(value: str) -> bool:
    """A numeric attribute (units and % aside) beyond what bake can do arithmetic on."""
    try:
        number = float(re.sub(r"(?i)(px|pt|em|%)\s*$", "", value.strip()))
    except ValueError:
        return False
    return not abs(number) <= MAX_MAGNITUDE


def _check_timeline(animations, element_count: int, path: Path, line: int | None) -> None:
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


def _check_tree(root, path: Path) -> None:
    """Depth, element count (with <use> expanded) and attribute sanity."""
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
            text_chars += sum(len(s) for s in el.itertext())
            if text_chars > MAX_TEXT_CHARS:
                raise NanoframesError("text-too-long", f"more than {MAX_TEXT_CHARS} characters "
                                      "of text", path, el.sourceline)
        if depth > 1:
            presence_of(el, path)  # refuse bad data-start/-duration/-fade at parse time
        if el.get("id"):
            ids.setdefault(el.get("id"), el)
        stack.extend((child, depth + 1) for child in el)
    _check_use(root, ids, path, count)


def _check_use(root, ids: dict, path: Path, plain_count: int) -> None:
    """Refuse <use> bombs: count the elements the references would expand to."""
    uses = [el for el in root.iter(f"{{{SVG_NS}}}use", "use")]
    if not uses:
        return
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
            total += 1
            if local_name(node) == "use":
                target = (href_of(node) or "")
                if not target.startswith("#"):
                    raise NanoframesError("use-external", f"<use> may only reference an element"
                                          f" of this file by #id, got {target!r}", path,
                                          node.sourceline)
                ref = ids.get(target[1:])
                if ref is not None:
                    total += expanded(ref, trail + (key,))
            if total > MAX_ELEMENTS:
                raise NanoframesError("use-bomb", f"<use> references expand to more than "
                                      f"{MAX_ELEMENTS} elements", path, node.sourceline)
        sizes[key] = total
        return total

    if expanded(root, ()) + plain_count > MAX_ELEMENTS:
        raise NanoframesError("use-bomb", f"<use> references expand to more than "
                              f"{MAX_ELEMENTS} elements", path, uses[0].sourceline)


def parse(path: str | Path, project_root: str | Path | None = None) -> Composition:
    """Read and validate one composition file."""
    path = Path(path).absolute()
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise NanoframesError("file-too-large", f"{size} bytes; the limit is "
                                  f"{MAX_FILE_BYTES}", path)
        data = path.read_bytes()
    except FileNotFoundError:
        raise NanoframesError("file-missing", "no such file", path) from None
    except IsADirectoryError:
        raise NanoframesError("file-unreadable", "is a directory", path) from None
    except OSError as exc:
        raise NanoframesError("file-unreadable", exc.strerror or str(exc), path) from None
    root_dir = Path(project_root).resolve() if project_root else find_project_root(path.parent)
    return parse_bytes(data, path, root_dir)


def parse_bytes(data: bytes, path: Path, project_root: Path) -> Composition:
    if not data.strip():
        raise NanoframesError("xml-malformed", "the file is empty", path)
    doctype = _DOCTYPE.match(data)
    if doctype:  # refused before libxml2 reads its internal subset (entity bombs)
        raise NanoframesError("xml-doctype", "a DOCTYPE (and so any entity) is not allowed",
                              path, data.count(b"\n", 0, doctype.end()) + 1)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not data.lstrip().startswith(b"<?xml") or b"encoding" not in data[:200]:
            raise NanoframesError("xml-encoding", f"not UTF-8 (byte {exc.start})", path,
                                  data.count(b"\n", 0, exc.start) + 1) from None
    try:
        tree = etree.fromstring(data, _parser()).getroottree()
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        msg = str(exc.msg if hasattr(exc, "msg") else exc).split(", line")[0]
        # One line: libxml2 may append the unfinished text (a CDATA section, a NUL).
        msg = (msg.strip().splitlines() or ["not well-formed XML"])[0]
        if msg.startswith("Excessive depth"):  # libxml2's own cap, which is MAX_DEPTH
            raise NanoframesError("too-deep", f"elements nest deeper than {MAX_DEPTH} levels",
                                  path, line) from None
        if msg.startswith("Unsupported encoding"):
            raise NanoframesError("xml-encoding", msg, path, line) from None
        raise NanoframesError("xml-malformed", msg, path, line) from None
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        at = data.find(b"<!DOCTYPE")
        raise NanoframesError("xml-doctype", "a DOCTYPE (and so any entity) is not allowed",
                              path, data.count(b"\n", 0, at) + 1 if at >= 0 else 1)
    root = tree.getroot()
    if local_name(root) != "svg":
        raise NanoframesError("not-svg", f"the root element is <{local_name(root)}>, not <svg>",
                              path, root.sourceline)
    _check_tree(root, path)
    line = root.sourceline

    def size_attr(name: str) -> int:
        raw = root.get(f"data-{name}") or root.get(name)
        if raw is None:
            raise NanoframesError("size-missing", f"the root <svg> needs data-{name}", path, line)
        text = raw.strip().removesuffix("px")
        value = _decimal(text, "size-invalid", f"data-{name}", path, line)
        if value.denominator != 1 or value <= 0:
            raise NanoframesError("size-invalid", f"data-{name} must be a positive integer, got "
                                  f"{raw!r}", path, line)
        if value > MAX_SIDE:
            raise NanoframesError("canvas-too-large", f"data-{name}={raw} exceeds {MAX_SIDE} px",
                                  path, line)
        return int(value)

    width, height = size_attr("width"), size_attr("height")
    if width * height > MAX_PIXELS:
        raise NanoframesError("canvas-too-large", f"{width}x{height} exceeds {MAX_PIXELS} pixels",
                              path, line)
    fps = _decimal(root.get("data-fps", "30"), "fps-invalid", "data-fps", path, line)
    if not 0 < fps <= MAX_FPS:
        raise NanoframesError("fps-invalid", f"data-fps must be in (0, {MAX_FPS}], got "
                              f"{root.get('data-fps')!r}", path, line)
    duration = _decimal(root.get("data-duration", "1.0"), "duration-invalid", "data-duration",
                        path, line)
    if not 0 < duration <= MAX_DURATION:
        raise NanoframesError("duration-invalid", f"data-duration must be in (0, {MAX_DURATION}]"
                              f" seconds, got {root.get('data-duration')!r}", path, line)
    exact = duration * fps
    frames = max(1, int(exact + Fraction(1, 2)))  # round half up, exactly
    if frames > MAX_FRAMES:
        raise NanoframesError("too-many-frames", f"{frames} frames exceeds {MAX_FRAMES}",
                              path, line)

    def optional(name: str) -> float | None:
        return _number(root, name, path)

    budget = optional("data-palette-budget")
    animations: list[Animation] = []
    for script in root.iter(f"{{{SVG_NS}}}script", "script"):
        if (script.get("type") or "").strip() == TIMELINE_TYPE:
            parsed = parse_timeline(script.text or "", file=path, line=script.sourceline)
            _check_timeline(parsed, 0, path, script.sourceline)  # its numbers, at its line
            animations.extend(parsed)
    # Renumber so "later animation wins" holds across several timeline scripts.
    animations = [_renumber(a, i) for i, a in enumerate(animations)]
    _check_timeline(animations, sum(1 for _ in root.iter(etree.Element)), path, line)
    return Composition(
        path=path,
        project_root=project_root,
        width=width,
        height=height,
        fps=fps,
        duration=duration,
        frame_count=frames,
        id=root.get("data-composition-id") or path.name.removesuffix(".svg").removesuffix(".nf"),
        view_box=root.get("viewBox"),
        safe_margin=optional("data-safe-margin"),
        palette_budget=None if budget is None else int(budget),
        animations=tuple(animations),
        root=root,
    )


def _renumber(anim: Animation, index: int) -> Animation:
    from dataclasses import replace

    return anim if anim.index == index else replace(anim, index=index)
