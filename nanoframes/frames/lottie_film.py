"""A Lottie animation as a film source (source.py), over the ``lottie`` package.

The ``lottie`` package reads and bounds a Bodymovin JSON file or a dotLottie
archive (``LottieSource``: canvas, frame range, markers, images resolved and
inlined, the canonical document ThorVG is handed) and ``engine/lottie.py`` draws
it. This module makes one of them a film: its address (``film.json``, or
``film.json#intro`` for the film of marker ``intro``), its frames (the integer
frames of ``ip..op``, or of the marker's range), the scene of each frame (what
ThorVG is handed: ``LottieSource.scene``), its identity parts and records, and
the words for what moved between two scenes.

Each frame is drawn with libc's random state reseeded from the source digest
and the frame's number in the animation (``LottieSource.seed``), not its index
in the film, so a marker's film draws exactly the frames the whole film draws
for those frames.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NanoframesError

if TYPE_CHECKING:
    import numpy as np

FRAME_MARK = b"\n#frame="  # LottieSource.scene: the document, then the frame drawn


class LottieFilm:
    """One Lottie film (the whole animation, or one marker's range)."""

    kind = "lottie"
    pipelined = True  # the player copies each frame into the slot's buffer (decision 0121)
    id = None  # excuses name a Lottie film by its key

    def __init__(self, source: Any, path: Path, project_root: Path | None,
                 marker: str | None = None, text: bytes | None = None) -> None:
        self.lottie = source
        self.marker = marker
        self.path = Path(f"{path}#{marker}") if marker else Path(path)
        self.file = Path(path)
        self.project_root = Path(project_root) if project_root is not None else None
        self.text = text
        self.width, self.height = int(source.width), int(source.height)
        self.frame_count = int(source.frame_count)
        self.fps = Fraction(source.fps).limit_denominator(1001)
        self.duration = self.frame_count / self.fps  # seconds (--t picks a frame within)
        parts = source.identity_parts()
        self._key = f"{parts['source']}/{parts['media']}/{parts['fonts']}"  # as lottie.prepare
        self._prepared = False
        self._inputs: tuple[tuple[str, str, str], ...] | None = None

    @property
    def directory(self) -> Path:
        return self.file.parent

    def time_of(self, index: int) -> float:
        return float(index / self.fps)

    def frame_number(self, index: int) -> float:
        """The animation's frame (ThorVG's, relative to ``ip``) drawn as film frame ``index``."""
        return float(self.lottie.frame_number(index))

    def document(self, index: int) -> bytes:
        """The scene of frame ``index``: the bytes ThorVG is handed for it."""
        if not 0 <= index < self.frame_count:
            raise NanoframesError("frame-range", f"frame {index} is outside "
                                  f"0..{self.frame_count - 1}", self.path)
        return self.lottie.scene(index)

    def inputs(self) -> tuple[tuple[str, str, str], ...]:
        if self._inputs is None:
            self._inputs = tuple(sorted(tuple(item) for item in self.lottie.inputs()))
        return self._inputs

    def uses_video(self) -> bool:
        return False

    def draw(self, scene: bytes, index: int, width: int, height: int, slot: int
             ) -> np.ndarray:
        """Frame ``index`` drawn by this process's Lottie player (``scene`` is what
        ``document`` made of it: the document and the frame, which the player is
        handed as such). Faces are registered and the document loaded once; a film
        drawn between two frames of this one (one animation alive at a time) makes
        the next frame load it again."""
        from ..engine.lottie import get_player
        from ..lottie import prepare

        player = get_player()
        if not self._prepared:
            prepare(self.lottie, player)  # faces (checked against their digests), document
            self._prepared = True
        else:
            player.load(self.lottie.document, self._key, expressions=self.lottie.expressions)
        return player.draw(self.frame_number(index), width, height, self.lottie.seed(index),
                           slot)

    # -- identity ---------------------------------------------------------------

    def identity_parts(self) -> dict[str, Any]:
        """source (the canonical projection's SHA-256: images as their digests), media
        and fonts (``(name, SHA-256)`` lists, digested as a composition's are)."""
        return {"source": self.lottie.identity_parts()["source"],
                "media": list(self.lottie.media_items()),
                "fonts": list(self.lottie.font_items())}

    def projection(self) -> bytes | None:
        """The canonical projection the source digest is the SHA-256 of (None where it
        cannot be rebuilt from the document)."""
        from ..lottie import jsontext
        from ..lottie.source import _projected

        made = jsontext.canonical(_projected(jsontext.parse(self.lottie.document, self.path),
                                             self.lottie.images))
        return made if hashlib.sha256(made).hexdigest() == \
            self.lottie.identity_parts()["source"] else None

    def records(self) -> dict[str, Any]:
        """What each identity part is made of, for the store (determinism/inputs.py)."""
        projection = self.projection()
        return {
            "source": {"format": "lottie", "children": [],
                       "canonical": projection.decode("utf-8") if projection else ""},
            "media": [(name, digest, Path(file) if file else Path(name))
                      for name, digest, file in self.lottie.images],
            "fonts": [(face.path.name, face.sha256, Path(face.path))
                      for face in self.lottie.faces],
        }

    def scene_changes(self, recorded: bytes, current: bytes) -> tuple[list[str], list[str]]:
        """What moved between two scenes of one frame, in words (layer name and property
        path, old → new), and the keys that group frames with the same changes."""
        from ..lottie import describe_changes

        old_doc, _, old_frame = recorded.rpartition(FRAME_MARK)
        new_doc, _, new_frame = current.rpartition(FRAME_MARK)
        changes = [c.replace(" -> ", " → ") for c in describe_changes(old_doc, new_doc)]
        if old_frame != new_frame:
            changes.append(f"the frame drawn: {old_frame.strip().decode()} → "
                           f"{new_frame.strip().decode()}")
        return changes, [_key(change) for change in changes]


def _key(change: str) -> str:
    """``layer 'Box' (ind 1): ks.p.k: [1] → [2]`` -> ``layer 'Box' (ind 1) ks.p.k``: the
    element, a space, the property (determinism/scenes.py groups frames by these)."""
    where = change.rsplit(": ", 1)[0]
    label, _, path = where.rpartition(": ")
    return f"{label} {path}" if label else where


def open_lottie_film(path: Path, project_root: Path | str | None, *,
                     marker: str | None = None) -> LottieFilm:
    from ..lottie import open_lottie

    root = Path(project_root) if project_root is not None else None
    return LottieFilm(open_lottie(path, root, marker=marker), path, root, marker)


def lottie_film_from_bytes(data: bytes, file: Path, project_root: Path | None,
                           marker: str | None = None) -> LottieFilm:
    from ..lottie import lottie_from_bytes

    return LottieFilm(lottie_from_bytes(bytes(data), file.name, project_root, marker=marker),
                      file, project_root, marker, text=bytes(data))
