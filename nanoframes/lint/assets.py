"""Checks on what a composition draws with: image files, nested compositions,
font families and paint colours.

Asset problems carry the error code the renderer itself would stop with
(``image-missing``, ``image-outside``, ``nested-cycle``...), so a lint finding
and a render failure name the same thing the same way.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..bake.media import is_composition_href, load_image
from ..errors import NanoframesError
from ..model.color import parse_color
from ..model.composition import Composition
from ..model.svg import href_of, is_drawn, local_name
from ..text.content import collect
from ..text.coverage import describe_missing, missing_characters
from ..text.fonts import (
    Resolution,
    fallback_allowed,
    font_book,
    is_generic,
    parse_family_list,
)
from ..text.style import font_request, parse_style_attr
from .findings import ERROR, WARNING, Finding, finding

if TYPE_CHECKING:
    from .canvas import Context

PAINT_ATTRS = ("fill", "stroke", "stop-color", "flood-color", "lighting-color", "data-bg")
MAX_LISTED_FAMILIES = 12
_FIELD = re.compile(r"\{[^{}]*\}")  # a data-frame-text field: digits, drawn by any face


def check(comp: Composition, ctx: Context) -> Iterator[Finding]:
    yield from _images(comp)
    yield from _fonts(comp, ctx)
    yield from _palette(comp)
    if ctx.baker is None:
        yield from _baker_error(comp)


def _images(comp: Composition) -> Iterator[Finding]:
    from ..bake.clips import is_clip_href, load_clip
    from ..bake.nested import children, resolve_child

    nested = False
    loaded: set[str] = set()  # an image referenced many times is checked once
    inline = 0  # data: images are named by position, as bake names them
    for el in comp.elements:
        if local_name(el) != "image" or not is_drawn(el):
            continue
        href = href_of(el) or ""
        inline += href.startswith("data:")
        try:
            if is_composition_href(href):
                resolve_child(comp, el, href)
                nested = True
            elif is_clip_href(href):  # decoded once per process: the render reuses it
                load_clip(el, href, comp.directory, comp.project_root, comp.path)
            elif href not in loaded:
                load_image(href, comp.directory, comp.project_root, comp.path, el.sourceline,
                           inline)
                loaded.add(href)
        except NanoframesError as err:
            yield finding(ERROR, err.code, el, None, err.message, fatal=True)
    if nested:
        try:
            children(comp)  # cycles, depth, and each child's own parse errors
        except NanoframesError as err:
            where = "" if err.file == str(comp.path) else f"in {err.file}: "
            yield finding(ERROR, err.code, comp.root, None, where + err.message, fatal=True)


def _baker_error(comp: Composition) -> Iterator[Finding]:
    """Whatever else stopped the renderer's setup (e.g. no bundled font face)."""
    from ..bake.baker import Baker

    try:
        Baker(comp)
    except NanoframesError as err:
        if not err.code.startswith(("image-", "nested-", "clip-", "face-")):
            yield finding(ERROR, err.code, comp.root, None, err.message, fatal=True)


def _fonts(comp: Composition, ctx: Context) -> Iterator[Finding]:
    from ..config import load_config

    config = load_config(comp.project_root)
    book = ctx.baker.book if ctx.baker is not None else font_book(config)
    allowed = fallback_allowed(config)
    families = sorted(book.families(), key=str.casefold)
    for el in comp.elements:
        if local_name(el) != "text" or not is_drawn(el):
            continue
        req = font_request(el)
        res = book.resolve(req)
        yield from _travel(el, res.face)
        yield from _refused(el, res, allowed)
        named = [f for f in parse_family_list(req.family) if not is_generic(f)]
        if not named or not res.fallback or res.refused:
            continue
        close: list[str] = []
        for name in named:
            close += [c for c in difflib.get_close_matches(name, families, 3, 0.5)
                      if c not in close]
        listed = close or families[:MAX_LISTED_FAMILIES]
        more = "" if close or len(families) <= MAX_LISTED_FAMILIES else \
            f" and {len(families) - MAX_LISTED_FAMILIES} more (nanoframes fonts lists them)"
        yield finding(WARNING, "font-unresolved", el, None,
                      f"font-family {req.family!r} names no loaded face "
                      f"({', '.join(repr(n) for n in named)}); it draws with the default face "
                      f"{res.face.family!r}. Values that resolve: "
                      f"{', '.join(repr(f) for f in listed)}{more}")


def _refused(el, res: Resolution, allowed: bool) -> Iterator[Finding]:
    """Each face the text would have drawn with but may not: what, why, and what it
    draws with instead (an error for a font-dirs face, unless the fallback is allowed)."""
    for item in res.refused:
        fatal = item.face.origin == "project" and not allowed
        why = item.reason if item.code == "face-format" else f"is refused: {item.reason}"
        yield finding(ERROR if fatal else WARNING, item.code, el, None,
                      f"face {item.where} ({item.face.family!r}) {why}; "
                      + ("the film is refused rather than drawn with "
                         f"{res.face.family!r} (--allow-fallback allows that)" if fatal else
                         f"the text draws with {res.face.family!r} ({res.face.label}) "
                         "instead"), fatal=fatal)


def _travel(el, face) -> Iterator[Finding]:
    """A face from the host's font folders; characters the face cannot draw."""
    if not face.travels:
        yield finding(WARNING, "font-host", el, None,
                      f"the text draws with {face.family!r} ({face.path.name}) from this "
                      f"machine's font directory {str(face.path.parent)!r}, which is neither "
                      "bundled nor in the project's font-dirs: on a machine without that "
                      "file it draws with another face, and the film's fonts identity "
                      "changes. Copy the file into a font-dirs directory of the project")
    template = el.get("data-frame-text")
    text = _FIELD.sub("", template) if template is not None else collect(el).text
    missing = missing_characters(face, text)
    if missing:
        yield finding(WARNING, "glyph-missing", el, None,
                      f"face {face.name!r} ({face.family}) has no glyph for "
                      f"{describe_missing(missing)}: they draw as empty boxes or not at "
                      "all. Name a family that covers them in font-family")


def _paints(comp: Composition) -> Iterator[str]:
    for el in comp.elements:
        if not is_drawn(el):
            continue
        style = parse_style_attr(el.get("style"))
        for name in PAINT_ATTRS:
            for value in (el.get(name), style.get(name)):
                if value:
                    yield value
    for anim in comp.animations:
        for kf in anim.keyframes:
            for prop in ("fill", "stroke"):
                value = kf.values.get(prop)
                if isinstance(value, str):
                    yield value


def _palette(comp: Composition) -> Iterator[Finding]:
    budget = comp.palette_budget
    if budget is None:
        return
    colours: dict[tuple[int, int, int], str] = {}
    for value in _paints(comp):
        rgba = parse_color(value)
        if rgba is None:  # none, url(#...), currentColor: not a declared colour
            continue
        # Alpha variants of one colour are one palette entry.
        key = (round(rgba[0]), round(rgba[1]), round(rgba[2]))
        colours.setdefault(key, "#" + "".join(f"{c:02x}" for c in key))
    if len(colours) > budget:
        yield finding(ERROR, "palette-budget", comp.root, None,
                      f"{len(colours)} distinct paint colours, more than "
                      f"data-palette-budget={budget}: {', '.join(sorted(colours.values()))}")
