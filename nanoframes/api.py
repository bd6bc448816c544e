"""The stable Python API of nanoframes (docs/api.md); every other module is private.

Each function takes a film from :func:`load` (a :class:`Composition`, or a
:class:`LottieFilm` for a Lottie file) or anything ``load`` accepts, and does
in this process what the command line does:
``render_frame`` is ``nanoframes render --frame``, ``film_digest`` and
``judge`` are ``nanoframes digest`` and ``digest --check``, ``identity`` is
``nanoframes identity``, ``lint`` is ``nanoframes check``. Bad input raises
:class:`NanoframesError` (a stable code, the file, the line), never anything else.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Union

import numpy as np

from .config import find_project_root, load_config, relative_key
from .determinism.identity import Identity
from .determinism.ledger import Ledger, read_ledger
from .determinism.reading import check_composition, source_identity
from .determinism.second_opinion import consult
from .determinism.verdict import Kind, Verdict
from .errors import NanoframesError
from .frames import digest as _digest
from .frames.film import Film
from .frames.lottie_film import LottieFilm
from .frames.source import from_bytes, open_parsed
from .lint import Finding, lint_composition
from .model.composition import MAX_FILE_BYTES, Composition

__all__ = [
    "Composition",
    "FilmDigest",
    "Finding",
    "Identity",
    "Kind",
    "LottieFilm",
    "NanoframesError",
    "Verdict",
    "film_digest",
    "frames",
    "identity",
    "judge",
    "lint",
    "load",
    "render_frame",
]

# The name a composition loaded from text carries: a file in ``base`` that is never read.
TEXT_NAME = "<text>"
# The names Lottie loaded from bytes carries: JSON, or a dotLottie archive (a ZIP file)
LOTTIE_TEXT_NAME, DOTLOTTIE_TEXT_NAME = "<text>.json", "<text>.lottie"
FILMS = (Composition, LottieFilm)  # what ``load`` returns

Source = Union[Composition, LottieFilm, str, bytes, "os.PathLike[str]"]


def _is_text(value: str | bytes) -> bool:
    if isinstance(value, bytes):
        return True
    return value.lstrip("\ufeff \t\r\n").startswith(("<", "{"))


def _text_name(data: bytes) -> str:
    """The name text loads as: Lottie JSON (``{``), a dotLottie archive, or a composition."""
    if data.startswith(b"PK\x03\x04"):
        return DOTLOTTIE_TEXT_NAME
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return LOTTIE_TEXT_NAME if head.startswith(b"{") else TEXT_NAME


def load(path_or_text: str | bytes | os.PathLike[str], base: str | os.PathLike[str] | None = None
         ) -> Composition | LottieFilm:
    """A film from a file (a ``*.nf.svg`` composition, a Lottie ``*.json`` or
    ``*.lottie``, or ``film.json#marker``: one marker's range as a film), or from
    its text.

    Text is a ``str`` that starts with ``<`` (a composition) or ``{`` (Lottie
    JSON) after white space, or ``bytes`` (a dotLottie archive too); anything else
    is a path. ``base`` is the directory the text's relative references (images,
    nested compositions) resolve against, and whose project (the nearest
    ``pyproject.toml``) supplies fonts and the ledger; default: the current
    directory. The same text loaded with ``base`` set to a file's directory
    draws, digests and identifies exactly as that file.
    """
    if isinstance(path_or_text, (str, bytes)) and _is_text(path_or_text):
        data = path_or_text.encode("utf-8") if isinstance(path_or_text, str) else path_or_text
        directory = Path(base if base is not None else os.getcwd()).absolute()
        path = directory / _text_name(bytes(data))
        if len(data) > MAX_FILE_BYTES:
            raise NanoframesError("file-too-large", f"{len(data)} bytes; the limit is "
                                  f"{MAX_FILE_BYTES}", path)
        return from_bytes(bytes(data), path, find_project_root(directory))
    if base is not None:
        raise ValueError("base applies to text only: a file's references resolve against "
                         "its own directory")
    return open_parsed(path_or_text)


def _comp(comp: Source) -> Composition | LottieFilm:
    return comp if isinstance(comp, FILMS) else load(comp)


# One film kept between calls, so rendering a composition frame by frame bakes its
# time-independent template once; keyed on the object, which is immutable.
_last: tuple[Composition | LottieFilm, Film] | None = None


def _film(comp: Composition | LottieFilm) -> Film:
    global _last
    if _last is None or _last[0] is not comp:
        _last = (comp, Film(comp))
    return _last[1]


def render_frame(comp: Source, index: int) -> np.ndarray:
    """Frame ``index`` as a ``(height, width, 4)`` ``uint8`` array of straight RGBA.

    The array is the caller's own (a copy, never a view of the renderer's
    canvas); SHA-256 of its bytes is the frame digest the ledger records.
    """
    comp = _comp(comp)
    if not 0 <= index < comp.frame_count:
        raise NanoframesError("frame-range", f"frame {index} is outside 0..{comp.frame_count - 1}",
                              comp.path)
    film = _film(comp)
    return film.raster(film.document(index)).copy()


def frames(comp: Source) -> Iterator[np.ndarray]:
    """Every frame in order, as ``render_frame`` returns them, one at a time: the
    film is never held in memory (held frames are drawn once and copied)."""
    comp = _comp(comp)
    for _, frame in Film(comp).frames():
        yield frame.copy()


class FilmDigest(str):
    """A film digest (64 hex digits) that keeps its frame digests, so two films that
    differ can say which frames do (``pytest`` explains a failed ``==`` with them)."""

    frame_digests: tuple[str, ...]
    composition: Composition | LottieFilm | None

    def __new__(cls, frame_digests: tuple[str, ...],
                composition: Composition | LottieFilm | None = None
                ) -> FilmDigest:
        self = super().__new__(cls, _digest.film_digest(list(frame_digests)))
        self.frame_digests = tuple(frame_digests)
        self.composition = composition
        return self

    def __reduce__(self) -> tuple[type, tuple[tuple[str, ...]]]:
        return FilmDigest, (self.frame_digests,)  # the frames, not the hex, rebuild it

    def differing_frames(self, other: FilmDigest) -> tuple[int, ...]:
        """Indices whose frame digests differ (a longer film's extra frames included)."""
        a, b = self.frame_digests, other.frame_digests
        tail = range(min(len(a), len(b)), max(len(a), len(b)))
        return tuple(i for i, (x, y) in enumerate(zip(a, b)) if x != y) + tuple(tail)


def film_digest(comp: Source) -> FilmDigest:
    """SHA-256 over the frame digests in frame order, drawn in this process: the
    ``digest`` a ledger entry records for the whole film."""
    comp = _comp(comp)
    return FilmDigest(tuple(Film(comp).digests()), comp)


def identity(comp: Source) -> Identity:
    """The four inputs every pixel is a function of: source, media, fonts, toolchain."""
    comp = _comp(comp)
    return source_identity(_film(comp).source)


def judge(comp: Source, ledger: str | os.PathLike[str] | Ledger | None = None,
          key: str | None = None, *, samples: int | None = None,
          second_opinion: int | None = None) -> Verdict:
    """A fresh reading of ``comp`` judged against its ledger entry: the verdict
    ``nanoframes digest --check`` prints (``verdict.line()``).

    ``ledger`` is a path or a read ledger; default: the project's (``[tool.nanoframes]
    ledger``). ``key`` names the entry; default: the file's path relative to the
    project root. A composition loaded from text has no such path: pass ``key``.
    ``samples`` digests that many evenly spaced frames instead of all. A
    composition that cannot be drawn is an ``error`` verdict; a bad ledger raises.
    A regression's differing frames are drawn again ``second_opinion`` times in
    fresh processes (default: ``[tool.nanoframes] second_opinion``; 0: off) and
    ``verdict.opinion_line`` says what that showed.
    """
    comp = _comp(comp)
    config = load_config(comp.project_root)
    if key is None:
        if comp.text is not None:
            raise NanoframesError("key-missing", "a composition loaded from text has no file "
                                  "to name its ledger entry: pass key=", comp.path)
        key = relative_key(comp.path, config.root)
    if not isinstance(ledger, Ledger):
        ledger = read_ledger(Path(ledger) if ledger is not None else config.ledger_path)
    verdict, reading = check_composition(comp, key, config=config, ledger=ledger,
                                         samples=samples)
    renders = config.second_opinion if second_opinion is None else second_opinion
    return consult(verdict, ledger.entries.get(key), reading, config, renders, comp)


def lint(comp: Source) -> list[Finding]:
    """The findings of ``nanoframes check``, in its stable order (a Lottie film: those
    its reader reports; it refuses what it cannot draw when loaded)."""
    comp = _comp(comp)
    if not isinstance(comp, Composition):
        from .lint import lint_file

        return [] if comp.text is not None else lint_file(comp.path, comp.project_root)
    return lint_composition(comp)


def _callable_package(name: str, function: object) -> None:
    """``nanoframes.frames`` and ``nanoframes.lint`` name subpackages as well as API
    functions: calling the package calls the function, so ``nanoframes.frames(comp)``
    works whichever of the two the attribute holds, and imports are untouched."""
    module = sys.modules[name]
    if not callable(module):
        module.__class__ = type("CallablePackage", (types.ModuleType,), {
            "__call__": lambda self, *args, **kwargs: function(*args, **kwargs)})


_callable_package("nanoframes.frames", frames)
_callable_package("nanoframes.lint", lint)
