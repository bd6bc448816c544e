"""Film sources: what a film's frames are drawn from, whatever its format.

A film is a source of frames with an identity. The ``.nf.svg`` composition is
one source (``CompositionSource``: a ``Composition`` and its ``Baker``), Lottie
the second (``frames/lottie_film.py``, over the ``lottie`` package). Everything
above ``frames`` (determinism, evidence, the CLI and the plugin) sees a
``FilmSource``: its address, canvas and frame count, the *scene* of each frame
(the exact bytes handed to ThorVG, whose SHA-256 is the frame's scene digest and
the de-duplication key), the files it was read from (``inputs``), how a frame
is drawn, and its identity parts. None of them parses a format.

``open_parsed`` opens a file as what its name says: a Lottie file (``*.json``,
``*.lottie``, optionally with a ``#marker`` suffix naming one of its markers as
a film of its own) or a composition. It returns the parsed object a ``Film``
is made from: a ``Composition`` (``Film`` wraps it in a ``CompositionSource``)
or a ``FilmSource`` already.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import NanoframesError

if TYPE_CHECKING:
    import numpy as np

    from ..bake.baker import Baker
    from ..model.composition import Composition

MARK = "#"  # ``film.json#intro``: the film of marker ``intro`` of ``film.json``


@runtime_checkable
class FilmSource(Protocol):
    """What a ``Film`` needs from a format. ``path`` is the film's address: a file,
    or a file and a marker (``dir/film.json#intro``); ``text`` the bytes a film
    loaded from memory travels to worker processes as (None: read ``path``)."""

    kind: str                 # "composition" or "lottie": said in reports, never parsed
    path: Path
    project_root: Path | None
    width: int
    height: int
    frame_count: int
    id: str | None            # the id an excuse may name (a composition's data-id)
    text: bytes | None
    pipelined: bool           # may draw on two alternating canvases (Film.digests)

    @property
    def directory(self) -> Path: ...

    def time_of(self, index: int) -> float: ...

    def document(self, index: int) -> bytes: ...

    def inputs(self) -> tuple[tuple[str, str, str], ...]: ...

    def uses_video(self) -> bool: ...

    def draw(self, scene: bytes, index: int, width: int, height: int, slot: int
             ) -> np.ndarray: ...


class CompositionSource:
    """The ``.nf.svg`` composition as a film source: its ``Baker`` makes each scene."""

    kind = "composition"
    pipelined = True

    def __init__(self, comp: Composition) -> None:
        from ..bake.baker import Baker

        self.comp = comp
        self.baker: Baker = Baker(comp)
        self._inputs: tuple[tuple[str, str, str], ...] | None = None
        self._registered = False

    def __getattr__(self, name: str) -> Any:  # path, width, fps, id, text, ...
        if name.startswith("_") or name in ("comp", "baker"):
            raise AttributeError(name)
        return getattr(self.comp, name)

    @property
    def directory(self) -> Path:
        return self.comp.directory

    def time_of(self, index: int) -> float:
        return self.comp.time_of(index)

    def document(self, index: int) -> bytes:
        return self.baker.document(index)

    @property
    def index(self) -> int | None:
        """The frame baked last (a crash in ThorVG names it)."""
        return self.baker.index

    def inputs(self) -> tuple[tuple[str, str, str], ...]:
        """``Baker.inputs`` as this process first read them (what is drawn is checked
        against them)."""
        if self._inputs is None:
            self._inputs = self.baker.inputs()
        return self._inputs

    def uses_video(self) -> bool:
        return self.baker.uses_video()

    def draw(self, scene: bytes, index: int, width: int, height: int, slot: int
             ) -> np.ndarray:
        return self.prepare(slot).render(scene, width, height)

    def prepare(self, slot: int = 0):
        """The rasterizer of canvas ``slot``, with this film's faces registered."""
        from ..engine.raster import get_rasterizer

        rast = get_rasterizer(slot)
        if not self._registered:
            from ..text.fonts import face_file

            fonts = {file: digest for kind, file, digest in self.inputs() if kind == "font"}
            for face in self.baker.faces():
                data, digest = face_file(face)  # the version on disk now: the one drawn
                if digest != fonts[str(face.path)]:
                    raise input_changed(self.comp.path, str(face.path))
                rast.register_font(face.name, data)
            self._registered = True
        return rast


def as_source(parsed: Any) -> FilmSource:
    """The film source of what ``open_parsed`` (or ``parse``) returned."""
    from ..model.composition import Composition

    return CompositionSource(parsed) if isinstance(parsed, Composition) else parsed


def split_marker(path: str | Path) -> tuple[Path, str | None]:
    """(the file, the marker) of a film's address: ``film.json#intro`` is marker
    ``intro`` of ``film.json``, when no file is named ``film.json#intro``."""
    path = Path(path)
    name = path.name
    if MARK in name and not path.exists():
        head, _, marker = name.partition(MARK)
        if head and marker and is_lottie_path(head):
            return path.with_name(head), marker
    return path, None


def file_of(path: str | Path) -> Path:
    """The file a film's address reads."""
    return split_marker(path)[0]


def is_lottie_path(path: str | Path) -> bool:
    from ..lottie import is_lottie_name

    return is_lottie_name(Path(path))


def is_film_name(path: str | Path) -> bool:
    """Whether a file's name says it is a film nanoframes draws: a composition, or a
    Lottie file (a film address with a marker included)."""
    from ..model.svg import is_composition_name

    file = file_of(path)
    return is_composition_name(file.name) or is_lottie_path(file)


def open_parsed(path: str | Path, project_root: Path | str | None = None) -> Any:
    """The parsed film at ``path``: a ``Composition``, or a Lottie film source."""
    file, marker = split_marker(path)
    if is_lottie_path(file):
        from .lottie_film import open_lottie_film

        return open_lottie_film(file, project_root, marker=marker)
    from ..model.composition import parse

    return parse(path, project_root)


def from_bytes(data: bytes, path: Path, project_root: Path | None) -> Any:
    """The parsed film of ``data`` read as the file ``path`` (which is never read):
    Lottie where ``path`` has a Lottie name, a composition otherwise."""
    file, marker = split_marker(path)
    if is_lottie_path(file):
        from .lottie_film import lottie_film_from_bytes

        return lottie_film_from_bytes(data, file, project_root, marker)
    from ..model.composition import from_text

    return from_text(data, path, project_root)


def input_changed(path: Path, file: str) -> NanoframesError:
    """A file of the film ``path`` read as two versions while the film was drawn."""
    import os

    try:
        name = os.path.relpath(file, Path(path).parent)
    except ValueError:  # another drive (Windows)
        name = file
    return NanoframesError("input-changed", f"{name} changed while the film was being "
                           "drawn, so its frames could mix two versions; run again", path)


def baker_of(source: FilmSource) -> Baker | None:
    """A composition source's Baker (None for any other format)."""
    return getattr(source, "baker", None) if isinstance(source, CompositionSource) else None


def describe_source_changes(kind: str, old: bytes, new: bytes) -> list[str]:
    """What moved between two canonical sources of format ``kind``, in words."""
    if kind == "lottie":
        from ..lottie import describe_changes

        return list(describe_changes(old, new))
    return []
