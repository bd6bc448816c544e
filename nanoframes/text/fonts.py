"""Font discovery and CSS-ish family resolution (docs/text.md).

ThorVG matches one exact registered name and silently falls back otherwise
(docs/thorvg.md, "Text"), so nanoframes resolves every ``font-family`` list to one
:class:`Face` itself and writes that face's ``name`` into the rendered document.

Candidates, in order: the bundled faces (package data, the default first),
configured project font directories, then the host's font directories. Finding
and reading face files is :mod:`nanoframes.text.faces`; its public names are
re-exported here, where the rest of nanoframes has always imported them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import ALLOW_FALLBACK_ENV
from ..errors import NanoframesError
from .faces import (
    FONT_SUFFIXES,
    Face,
    bundled_fonts_dir,
    drawable_faces,
    face_bytes,
    face_digest,
    face_file,
    face_meta,
    face_x_height,
    font_files,
    host_font_dirs,
    unique_name,
)
from .sanitize import face_problem, warn_once
from .style import DEFAULT_WEIGHT, FontRequest, font_request, split_unquoted

if TYPE_CHECKING:
    from ..config import Config

__all__ = [
    "FONT_SUFFIXES", "GENERIC_FAMILIES", "STYLES", "Face", "FontBook", "Refused", "Resolution",
    "enforce", "fallback_allowed", "refusal",
    "bundled_fonts_dir", "describe_fonts", "face_bytes", "face_digest", "face_file", "face_meta",
    "family_selector", "font_book", "font_files", "host_font_dirs", "is_generic",
    "parse_family_list",
]

GENERIC_FAMILIES = frozenset({
    "serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "math", "emoji",
    "fangsong", "ui-serif", "ui-sans-serif", "ui-monospace", "ui-rounded",
    "-apple-system", "blinkmacsystemfont",
})
STYLES = ("normal", "italic", "oblique")
# Style preference per requested style (CSS Fonts 4 §5.2, font-style step).
_STYLE_ORDER = {
    "normal": ("normal", "oblique", "italic"),
    "italic": ("italic", "oblique", "normal"),
    "oblique": ("oblique", "italic", "normal"),
}


FORMAT_ADVICE = ("has CFF (PostScript) outlines, which ThorVG 1.0.4 does not draw: use a "
                 "TrueType-outline (glyf) build of the face")


@dataclass(frozen=True)
class Refused:
    """A face the text would have drawn with, refused: ``code`` is ``face-format``
    (a format ThorVG does not draw) or ``face-rejected`` (it failed the check)."""

    face: Face
    code: str
    reason: str

    @property
    def where(self) -> str:
        """The face file's path, with ``#N`` for a face of a collection."""
        return str(self.face.path.parent / self.face.label)


@dataclass(frozen=True)
class Resolution:
    face: Face
    fallback: bool
    family_value: str | None  # the requested font-family value, as written
    matched: str | None = None  # the list entry that selected the face; None on fallback
    refused: tuple[Refused, ...] = ()  # faces passed over, in the order they were tried


def parse_family_list(value: str | None) -> list[str]:
    """A CSS font-family list → names, in order.

    Commas outside quotes separate names; a quoted name keeps its inner text
    exactly; an unquoted name has its whitespace collapsed; case is preserved;
    generic names stay as written (see :func:`is_generic`). Empty entries and
    an unterminated quote are tolerated, never raised on.
    """
    if not value:
        return []
    names = []
    for part in split_unquoted(value, ","):
        part = part.strip()
        if part[:1] in ("'", '"'):
            q = part[0]
            end = part.find(q, 1)
            name = part[1:end] if end > 0 else part[1:]
        else:
            name = " ".join(part.split())
        if name.strip():
            names.append(name)
    return names


def is_generic(name: str) -> bool:
    return name.strip().lower() in GENERIC_FAMILIES


def _weight_order(weights: Iterable[int], wanted: int) -> list[int]:
    """Available weights in CSS Fonts 4 preference order for ``wanted``."""
    ws = sorted(set(weights))
    exact = [w for w in ws if w == wanted]
    lighter = [w for w in reversed(ws) if w < wanted]
    heavier = [w for w in ws if w > wanted]
    if 400 <= wanted <= 500:  # up to 500 first, then lighter, then heavier
        return exact + [w for w in heavier if w <= 500] + lighter + [
            w for w in heavier if w > 500]
    return exact + (heavier + lighter if wanted > 500 else lighter + heavier)


class FontBook:
    """The candidate faces of one project on this machine, and resolution over them."""

    def __init__(
        self,
        bundled_dir: Path | str | None = None,
        project_dirs: Iterable[Path | str] = (),
        host_dirs: Iterable[Path | str] | None = None,
    ) -> None:
        bundled = Path(bundled_dir) if bundled_dir is not None else bundled_fonts_dir()
        hosts = host_font_dirs() if host_dirs is None else tuple(Path(d) for d in host_dirs)
        sources = [(bundled, "bundled"), *((Path(d), "project") for d in project_dirs),
                   *((d, "host") for d in hosts)]
        faces: list[Face] = []
        legacies: list[str | None] = []
        seen_paths: set[str] = set()
        taken: set[str] = set()
        undrawable: list[Face] = []
        for directory, origin in sources:
            entries = []
            for path, index, meta in drawable_faces(directory, seen_paths):
                if meta.outlines == "glyf":
                    entries.append((path, index, meta))
                else:  # found and named, never drawn: never given a name in ThorVG
                    undrawable.append(Face(path, meta.family, meta.weight, meta.style,
                                           origin, "", index))
            if origin == "bundled" and entries:
                # The default family is the first bundled file's; its regular face leads.
                family = entries[0][2].family.casefold()
                same = [e for e in entries if e[2].family.casefold() == family]
                lead = _pick([(e[2].weight, e[2].style, e) for e in same], DEFAULT_WEIGHT,
                             "normal")
                entries.remove(lead)
                entries.insert(0, lead)
            for path, index, meta in entries:
                name = unique_name(f"{path.stem}-face{index}" if index else path.stem, taken)
                faces.append(Face(path, meta.family, meta.weight, meta.style,
                                  origin, name, index))
                legacies.append(meta.legacy)
        self.bundled_dir = bundled
        self.faces: tuple[Face, ...] = tuple(faces)
        self._families: dict[str, list[Face]] = {}
        for face in self.faces:
            self._families.setdefault(face.family.casefold(), []).append(face)
        # CFF faces: found and named so text naming them is told why they do not draw.
        self.undrawable: tuple[Face, ...] = tuple(undrawable)
        self._undrawable: dict[str, list[Face]] = {}
        for face in self.undrawable:
            self._undrawable.setdefault(face.family.casefold(), []).append(face)
        # Legacy family names (nameID 1, e.g. "DejaVu Sans Condensed" under the
        # typographic family "DejaVu Sans") select a face when no family has that
        # name: the only way to reach width variants, as there is no font-stretch.
        self._aliases: dict[str, list[Face]] = {}
        self._alias_of: dict[Face, str] = {}
        for face, legacy in zip(self.faces, legacies):
            if legacy and legacy.casefold() not in self._families:
                self._aliases.setdefault(legacy.casefold(), []).append(face)
                self._alias_of[face] = legacy

    @property
    def default(self) -> Face:
        """The fallback face: the first bundled face (regular)."""
        if not self.faces or self.faces[0].origin != "bundled":
            raise NanoframesError("font-missing", "no usable bundled font face in "
                                  f"{self.bundled_dir}: the fallback face is undefined "
                                  "(the faces are package data: reinstall nanoframes)")
        return self.faces[0]

    def alias_of(self, face: Face) -> str | None:
        """The legacy family name that also selects ``face``, if any."""
        return self._alias_of.get(face)

    def families(self) -> dict[str, list[Face]]:
        """Family name (as the first candidate spells it) → its faces, candidate order."""
        return {faces[0].family: list(faces) for faces in self._families.values()}

    def resolve(
        self,
        request_or_family: FontRequest | str | None,
        weight: int = DEFAULT_WEIGHT,
        style: str = "normal",
    ) -> Resolution:
        """The face a ``font-family`` value (with weight and style) draws with."""
        if isinstance(request_or_family, FontRequest):
            value = request_or_family.family
            weight, style = request_or_family.weight, request_or_family.style
        else:
            value = request_or_family
        style = style if style in STYLES else "normal"
        refused: list[Refused] = []
        for family in parse_family_list(value):
            if is_generic(family):
                continue
            key = " ".join(family.split()).casefold()
            # CFF faces last: a TrueType build of the same face is preferred to them
            pool = [*(self._families.get(key) or self._aliases.get(key) or ()),
                    *self._undrawable.get(key, ())]
            while pool:  # the face CSS matching picks, unless refused; then the next
                face = self.best(pool, weight, style)
                why = refusal(face)
                if why is None:
                    return Resolution(face, False, value, family, tuple(refused))
                refused.append(why)
                # one line for a format: the family's other CFF faces are passed over too
                pool = [f for f in pool if f is not face and (why.code != "face-format"
                                                               or f.name)]
        default = self.default
        bundled = [f for f in self._families[default.family.casefold()] if f.origin == "bundled"]
        return Resolution(self.best(bundled, weight, style), True, value, None, tuple(refused))

    def ex_of(self, node) -> float:
        """1ex in em for the font ``node`` draws with (its face's x-height); the
        default face's for None (above the root)."""
        face = self.resolve(font_request(node)).face if node is not None else self.default
        return face_x_height(face)

    def request(self, element) -> FontRequest:
        """``font_request`` with ``ex`` read from the faces this book resolves."""
        return font_request(element, self.ex_of)

    @staticmethod
    def best(faces: list[Face], weight: int, style: str) -> Face:
        """CSS-ish matching within one family: style first, then nearest weight."""
        return _pick([(f.weight, f.style, f) for f in faces], weight, style)


def refusal(face: Face) -> Refused | None:
    """Why ``face`` must not be drawn, or None: its format, or the check
    (:mod:`.sanitize`; the bundled faces are ours, checked by the test suite)."""
    if not face.name:
        return Refused(face, "face-format", FORMAT_ADVICE)
    if face.origin == "bundled":
        return None
    problem = face_problem(face.path, face.index)
    return None if problem is None else Refused(face, "face-rejected", problem)


def fallback_allowed(config: Config | None) -> bool:
    """Whether a refused face the project provides may fall back (a warning), rather
    than refuse the film: ``--allow-fallback`` or ``allow-fallback = true``."""
    return bool(os.environ.get(ALLOW_FALLBACK_ENV)) or bool(
        config is not None and getattr(config, "allow_fallback", False))


def enforce(res: Resolution, film: Path, allowed: bool) -> None:
    """Never silently another face: a refused face from the project's font-dirs
    refuses the film (one error naming the face, why, and the film) unless
    ``allowed``; any other refusal is one warning per face and process."""
    for item in res.refused:
        drawn = f"its text draws with {res.face.family!r} ({res.face.label}) instead"
        if item.face.origin == "project" and not allowed:
            raise NanoframesError(
                item.code, f"face {item.where} ({item.face.family!r}) {_reason(item)}; the "
                f"film's text names it and would draw with {res.face.family!r} instead. "
                "Replace the file, or allow the fallback (--allow-fallback, or "
                "allow-fallback = true in [tool.nanoframes])", film)
        warn_once(item.code, item.where, _reason(item), drawn)


def _reason(item: Refused) -> str:
    return item.reason if item.code == "face-format" else f"is refused: {item.reason}"


def _pick(options, weight: int, style: str):
    """Among ``(weight, style, item)`` options in candidate order, the CSS match's item."""
    for wanted_style in _STYLE_ORDER.get(style, _STYLE_ORDER["normal"]):
        styled = [o for o in options if o[1] == wanted_style]
        if styled:
            first = _weight_order((o[0] for o in styled), weight)[0]
            return next(o[2] for o in styled if o[0] == first)  # earliest candidate wins
    raise ValueError("no faces to choose from")


@cache
def _cached_book(bundled: Path, project: tuple[Path, ...], host: tuple[Path, ...]) -> FontBook:
    return FontBook(bundled, project, host)


def font_book(config: Config | None = None) -> FontBook:
    """The font book for a project, built once per process per (root, font dirs)."""
    if config is None:
        from ..config import load_config

        config = load_config()
    return _cached_book(bundled_fonts_dir(), tuple(config.font_paths), host_font_dirs())


def family_selector(face: Face, family: str | None = None) -> str:
    """The attributes that select ``face``, e.g. ``font-family="Noto Sans" font-weight="700"``."""
    family = family or face.family
    quote = "'" if '"' in family else '"'
    parts = [f"font-family={quote}{family}{quote}"]
    if face.weight != DEFAULT_WEIGHT:
        parts.append(f'font-weight="{face.weight}"')
    if face.style != "normal":
        parts.append(f'font-style="{face.style}"')
    return " ".join(parts)


def describe_fonts(book: FontBook) -> list[dict]:
    """One row per candidate face, for ``nanoframes fonts``.

    ``reachable`` is False for a face an earlier candidate shadows (same
    family, weight and style), which no ``font-family`` value can select, and for
    a refused face (``refused`` says why: a CFF face, or one that failed the check).
    """
    default = book.faces[0] if book.faces and book.faces[0].origin == "bundled" else None
    rows = []
    for face in (*book.faces, *book.undrawable):
        family, chosen = face.family, None
        for candidate in filter(None, (face.family, book.alias_of(face))):
            if not is_generic(candidate):
                chosen = book.resolve(f'"{candidate}"', face.weight, face.style)
                if chosen.face == face:
                    family = candidate
                    break
        refused = next((f"{r.code}: {r.reason}" for r in (chosen.refused if chosen else ())
                        if r.face == face), None)
        if not face.name:  # CFF: never drawn, whichever face CSS matching picks
            refused = f"face-format: {FORMAT_ADVICE}"
        rows.append({
            "name": face.name or face.path.stem,
            "family": face.family,
            "weight": face.weight,
            "style": face.style,
            "origin": face.origin,
            "path": str(face.path),
            "selector": family_selector(face, family),
            "default": face == default,
            "reachable": chosen is not None and chosen.face == face and not chosen.fallback,
            "refused": refused,  # None, or "CODE: why" (a refused face is not reachable)
        })
    return rows
