"""Parse a ``*.nf.svg`` file into an immutable :class:`Composition`.

Safe on hostile input: lxml with no network, no DTD, no entity expansion (a
DOCTYPE is refused outright), and the hard limits of :mod:`.limits` on file
size, depth, element count, ``<use>`` fan-out, canvas size and frame count.
Every problem is a :class:`NanoframesError` with a stable code, the file and
the line.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path

from lxml import etree

from ..config import find_project_root
from ..errors import NanoframesError
from ..files import read_regular
from .css import apply_sheets
from .limits import (
    MAX_DEPTH,
    MAX_DURATION,
    MAX_FILE_BYTES,
    MAX_FPS,
    MAX_FRAMES,
    MAX_PIXELS,
    MAX_SIDE,
    check_paint,
    check_timeline,
    check_tree,
    user_side,
)
from .presence import Presence, presence_of  # noqa: F401  (re-exported: the model's API)
from .svg import (  # noqa: F401  (re-exported: modules import the vocabulary here too)
    SVG_NS,
    TIMELINE_TYPE,
    XLINK_NS,
    exact_number,
    href_of,
    local_name,
    read_number,
)
from .timeline import Animation, parse_timeline

# A DOCTYPE can only sit in the prolog (after the XML declaration, comments, PIs).
# Each PI/comment can match one way only (no lazy scan across its end), so a prolog
# of many PIs is linear, not exponential backtracking.
_DOCTYPE = re.compile(rb"^(?:\xef\xbb\xbf)?\s*(?:<\?(?:[^?]|\?(?!>))*\?>\s*"
                      rb"|<!--(?:[^-]|-(?!->))*-->\s*)*<!DOCTYPE")


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
    # SHA-256 of the bytes parsed: how a worker process that parses the file again
    # shows it read the same version (Baker.inputs).
    sha256: str = field(default="", repr=False, compare=False)
    # Elements it draws at most: <use> expanded, one per character of curve text
    # (limits.check_tree); nested compositions add theirs (bake.nested).
    drawn: int = field(default=0, repr=False, compare=False)

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


ASPECTS = ("stretch", "contain", "cover")


def aspect_of(el, path: Path) -> str:
    """An image's ``data-aspect`` (stretch by default); anything else is an error."""
    raw = el.get("data-aspect")
    aspect = "stretch" if raw is None else raw.strip()
    if aspect not in ASPECTS:
        raise NanoframesError("attr-invalid", f"data-aspect={raw!r} on <{local_name(el)}> must "
                              f"be one of {', '.join(ASPECTS)}", path, el.sourceline)
    return aspect


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
        huge_tree=False, remove_comments=False, remove_pis=True, collect_ids=False,
    )


def parse(path: str | Path, project_root: str | Path | None = None) -> Composition:
    """Read and validate one composition file."""
    path = Path(path).absolute()
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise NanoframesError("file-too-large", f"{size} bytes; the limit is "
                                  f"{MAX_FILE_BYTES}", path)
        data = read_regular(path)  # never a FIFO or a device: a read that would not end
    except FileNotFoundError:
        raise NanoframesError("file-missing", "no such file", path) from None
    except IsADirectoryError:
        raise NanoframesError("file-unreadable", "is a directory", path) from None
    except OSError as exc:
        raise NanoframesError("file-unreadable", exc.strerror or str(exc), path) from None
    root_dir = Path(project_root).resolve() if project_root else find_project_root(path.parent)
    return parse_bytes(data, path, root_dir)


def from_text(data: bytes, path: Path, project_root: Path | None) -> Composition:
    """A composition parsed from its text (``nanoframes.load``), keeping the bytes: the
    same text parses to the same composition in any process (a drawing worker)."""
    from dataclasses import replace

    return replace(parse_bytes(data, path, project_root), text=data)


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
    drawn = check_tree(root, path)
    apply_sheets(root, path)  # <style> rules onto style= (css.py); bake drops the sheets
    line = root.sourceline

    def size_attr(name: str) -> int:
        raw = root.get(f"data-{name}") or root.get(name)
        if raw is None:
            raise NanoframesError("size-missing", f"the root <svg> needs data-{name}", path, line)
        text = raw.strip().removesuffix("px")
        value = exact_number(text, "size-invalid", f"data-{name}", path, line)
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
    fps = exact_number(root.get("data-fps", "30"), "fps-invalid", "data-fps", path, line)
    if not 0 < fps <= MAX_FPS:
        raise NanoframesError("fps-invalid", f"data-fps must be in (0, {MAX_FPS}], got "
                              f"{root.get('data-fps')!r}", path, line)
    duration = exact_number(root.get("data-duration", "1.0"), "duration-invalid", "data-duration",
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
        return read_number(root, name, strict=True, file=path)

    budget = optional("data-palette-budget")
    animations: list[Animation] = []
    for script in root.iter(f"{{{SVG_NS}}}script", "script"):
        if (script.get("type") or "").strip() == TIMELINE_TYPE:
            parsed = parse_timeline(script.text or "", file=path, line=script.sourceline)
            check_timeline(parsed, 0, path, script.sourceline)  # its numbers, at its line
            animations.extend(parsed)
    # Renumber so "later animation wins" holds across several timeline scripts.
    animations = [_renumber(a, i) for i, a in enumerate(animations)]
    check_timeline(animations, sum(1 for _ in root.iter(etree.Element)), path, line)
    check_paint(root, animations, user_side(width, height, root.get("viewBox")), path)
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
        sha256=hashlib.sha256(data).hexdigest(),
        drawn=drawn,
    )


def _renumber(anim: Animation, index: int) -> Animation:
    from dataclasses import replace

    return anim if anim.index == index else replace(anim, index=index)
