"""Font discovery and CSS-ish family resolution (docs/text.md).

ThorVG matches one exact registered name and silently falls back otherwise
(docs/thorvg.md, "Text"), so nanoframes resolves every ``font-family`` list to one
:class:`Face` itself and writes that face's ``name`` into the rendered document.

Candidates, in order: the faces bundled in the repository's ``fonts/`` (the
default first), configured project font directories, then the host's font
directories. Only files ThorVG 1.0.4 can draw are candidates: single-face sfnt
files with TrueType (``glyf``) outlines, named ``*.ttf`` or ``*.otf``. CFF
outlines and ``.ttc`` collections are refused by its loader (NOT_SUPPORTED), so
they are skipped. Variable TrueType fonts are kept: ThorVG draws their default
instance, which is what their ``OS/2`` weight describes.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import NanoframesError
from .style import DEFAULT_WEIGHT, FontRequest, split_unquoted

if TYPE_CHECKING:
    from ..config import Config

GENERIC_FAMILIES = frozenset({
    "serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "math", "emoji",
    "fangsong", "ui-serif", "ui-sans-serif", "ui-monospace", "ui-rounded",
    "-apple-system", "blinkmacsystemfont",
})
FONT_SUFFIXES = (".ttf", ".otf")
STYLES = ("normal", "italic", "oblique")
# Style preference per requested style (CSS Fonts 4 §5.2, font-style step).
_STYLE_ORDER = {
    "normal": ("normal", "oblique", "italic"),
    "italic": ("italic", "oblique", "normal"),
    "oblique": ("oblique", "italic", "normal"),
}


def bundled_fonts_dir() -> Path:
    """The ``fonts/`` directory of the checkout next to the package (editable install)."""
    return Path(__file__).resolve().parent.parent.parent / "fonts"


def host_font_dirs() -> tuple[Path, ...]:
    home = Path.home()
    dirs = [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"),
            home / ".local/share/fonts", home / ".fonts"]
    if sys.platform == "darwin":
        dirs += [Path("/Library/Fonts"), Path("/System/Library/Fonts"), home / "Library/Fonts"]
    if sys.platform == "win32":
        windir = os.environ.get("WINDIR", r"C:\Windows")
        dirs.append(Path(windir) / "Fonts")
        if os.environ.get("LOCALAPPDATA"):
            dirs.append(Path(os.environ["LOCALAPPDATA"]) / "Microsoft/Windows/Fonts")
    return tuple(dirs)


@dataclass(frozen=True)
class Face:
    """One loadable face file.

    ``name`` is what nanoframes registers the face under in ThorVG and writes
    into rendered documents: the file stem reduced to ``[A-Za-z0-9._-]``,
    with ``-2``, ``-3``... appended when an earlier candidate took it (so a
    bundled face's name never depends on what the host has).
    """

    path: Path
    family: str
    weight: int
    style: str
    origin: str  # 'bundled' | 'project' | 'host'
    name: str


@dataclass(frozen=True)
class Resolution:
    face: Face
    fallback: bool
    family_value: str | None  # the requested font-family value, as written
    matched: str | None = None  # the list entry that selected the face; None on fallback


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


class _Meta(NamedTuple):
    family: str
    weight: int
    style: str
    legacy: str | None  # nameID 1 when it differs from the typographic family


_META_CACHE: dict[tuple[str, int, int], _Meta | None] = {}


def _name_record(table, name_id: int) -> str | None:
    # Prefer Windows/Unicode English, then Mac Roman English, then any record.
    preferred = [table.getName(name_id, *key) for key in ((3, 1, 0x409), (3, 0, 0x409), (1, 0, 0))]
    for rec in [*preferred, *(r for r in table.names if r.nameID == name_id)]:
        if rec is not None:
            try:
                text = rec.toUnicode().strip()
            except UnicodeDecodeError:
                continue
            if text:
                return text
    return None


def _read_meta(path: Path) -> _Meta | None:
    """Family, weight and style from the name/OS-2 tables; None if ThorVG can't draw it."""
    from fontTools.ttLib import TTFont  # imported here: only font discovery needs it

    try:
        with path.open("rb") as fh:
            if fh.read(4) not in (b"\x00\x01\x00\x00", b"true"):
                return None  # CFF ('OTTO'), collections ('ttcf'), non-fonts
        font = TTFont(str(path), lazy=True)
        try:
            if not all(t in font for t in ("glyf", "loca", "cmap", "head", "hmtx", "name")):
                return None
            names = font["name"]
            legacy = _name_record(names, 1)
            family = _name_record(names, 16) or legacy
            if not family:
                return None
            subfamily = (_name_record(names, 17) or _name_record(names, 2) or "").lower()
            weight, style = 0, ""
            if "OS/2" in font:
                os2 = font["OS/2"]
                weight = int(os2.usWeightClass)
                if 1 <= weight <= 9:  # some old fonts use a 1-9 scale
                    weight *= 100
                if os2.fsSelection & 0x200:
                    style = "oblique"
                elif os2.fsSelection & 0x1:
                    style = "italic"
            if not 1 <= weight <= 1000:
                weight = _weight_from_subfamily(subfamily)
            if not style:
                style = ("oblique" if "oblique" in subfamily
                         else "italic" if "italic" in subfamily else "normal")
            family = " ".join(family.split())
            legacy = " ".join(legacy.split()) if legacy else None
            return _Meta(family, min(900, max(100, weight)), style,
                         legacy if legacy and legacy.casefold() != family.casefold() else None)
        finally:
            font.close()
    except Exception:  # noqa: BLE001 - any unreadable file is simply not a candidate
        return None


def _weight_from_subfamily(subfamily: str) -> int:
    for words, weight in ((("thin", "hairline"), 100), (("extralight", "ultralight"), 200),
                          (("light",), 300), (("medium",), 500), (("semibold", "demibold"), 600),
                          (("extrabold", "ultrabold"), 800), (("black", "heavy"), 900),
                          (("bold",), 700)):
        if any(w in subfamily.replace(" ", "").replace("-", "") for w in words):
            return weight
    return DEFAULT_WEIGHT


def face_meta(path: Path) -> _Meta | None:
    """Cached per path + mtime + size, so a changed file is read again."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _META_CACHE:
        _META_CACHE[key] = _read_meta(path)
    return _META_CACHE[key]


def _font_files(root: Path) -> Iterator[Path]:
    """Font files under ``root``, recursively, in sorted relative-path order."""
    if not root.is_dir():
        return
    found: list[tuple[str, Path]] = []
    seen_dirs: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen_dirs:  # a symlink loop or a second link to the same directory
            dirnames[:] = []
            continue
        seen_dirs.add(real)
        for fn in filenames:
            if fn.lower().endswith(FONT_SUFFIXES) and not fn.startswith("."):
                p = Path(dirpath, fn)
                found.append((p.relative_to(root).as_posix(), p))
    found.sort(key=lambda item: (item[0].casefold(), item[0]))
    yield from (p for _, p in found)


def _safe_name(stem: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "face"


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
        for directory, origin in sources:
            entries = []
            for path in _font_files(directory):
                real = os.path.realpath(path)
                meta = face_meta(path)
                if real in seen_paths or meta is None:
                    continue
                seen_paths.add(real)
                entries.append((path, meta))
            if origin == "bundled" and entries:
                # The default family is the first bundled file's; its regular face leads.
                family = entries[0][1].family.casefold()
                same = [e for e in entries if e[1].family.casefold() == family]
                lead = _pick([(e[1].weight, e[1].style, e) for e in same], DEFAULT_WEIGHT,
                             "normal")
                entries.remove(lead)
                entries.insert(0, lead)
            for path, meta in entries:
                path = path.resolve()  # name, path and identity all follow the real file
                name = _safe_name(path.stem)
                if name.casefold() in taken:
                    n = 2
                    while f"{name}-{n}".casefold() in taken:
                        n += 1
                    name = f"{name}-{n}"
                taken.add(name.casefold())
                faces.append(Face(path, meta.family, meta.weight, meta.style,
                                  origin, name))
                legacies.append(meta.legacy)
        self.bundled_dir = bundled
        self.faces: tuple[Face, ...] = tuple(faces)
        self._families: dict[str, list[Face]] = {}
        for face in self.faces:
            self._families.setdefault(face.family.casefold(), []).append(face)
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
                                  f"{self.bundled_dir}: the fallback face is undefined")
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
        for family in parse_family_list(value):
            if is_generic(family):
                continue
            key = " ".join(family.split()).casefold()
            faces = self._families.get(key) or self._aliases.get(key)
            if faces:
                return Resolution(self.best(faces, weight, style), False, value, family)
        default = self.default
        bundled = [f for f in self._families[default.family.casefold()] if f.origin == "bundled"]
        return Resolution(self.best(bundled, weight, style), True, value, None)

    @staticmethod
    def best(faces: list[Face], weight: int, style: str) -> Face:
        """CSS-ish matching within one family: style first, then nearest weight."""
        return _pick([(f.weight, f.style, f) for f in faces], weight, style)


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


def _file_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return (str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=32)
def _bytes_for(key: tuple[str, int, int]) -> bytes:
    return Path(key[0]).read_bytes()


@lru_cache(maxsize=256)
def _digest_for(key: tuple[str, int, int]) -> str:
    return hashlib.sha256(_bytes_for(key)).hexdigest()


def face_bytes(face: Face) -> bytes:
    """The face file's bytes (cached; re-read if the file changed)."""
    return _bytes_for(_file_key(face.path))


def face_digest(face: Face) -> str:
    """SHA-256 hex of the face file's bytes (cached per path + mtime + size)."""
    return _digest_for(_file_key(face.path))


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
    family, weight and style), which no ``font-family`` value can select.
    """
    default = book.faces[0] if book.faces and book.faces[0].origin == "bundled" else None
    rows = []
    for face in book.faces:
        family, chosen = face.family, None
        for candidate in filter(None, (face.family, book.alias_of(face))):
            if not is_generic(candidate):
                chosen = book.resolve(f'"{candidate}"', face.weight, face.style)
                if chosen.face == face:
                    family = candidate
                    break
        rows.append({
            "name": face.name,
            "family": face.family,
            "weight": face.weight,
            "style": face.style,
            "origin": face.origin,
            "path": str(face.path),
            "selector": family_selector(face, family),
            "default": face == default,
            "reachable": chosen is not None and chosen.face == face and not chosen.fallback,
        })
    return rows
