"""A Lottie animation as a film source (source.py), over the ``lottie`` package.

The ``lottie`` package reads and bounds a Bodymovin JSON file or a dotLottie
archive (``LottieSource``: canvas, frame range, markers, images resolved and
inlined, the canonical document ThorVG is handed) and ``engine/lottie.py`` draws
it. This module makes one of them a film: its address (``film.json``, or
``film.json#intro`` for the film of marker ``intro``), its frames (the integer
frames of ``ip..op``, or of the marker's range), the scene of each frame (what
ThorVG is handed: ``LottieSource.scene``), its identity parts and records, and
the words for what moved between two scenes.

Each frame is drawn with libc's random state reseeded from the document's
SHA-256 and the frame's number in the animation (not its index in the film), so
a marker's film draws exactly the frames the whole film draws for those frames.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NanoframesError

if TYPE_CHECKING:
    import numpy as np


class LottieFilm:
    """One Lottie film (the whole animation, or one marker's range)."""

    kind = "lottie"
    pipelined = False  # the player draws on one canvas of its own
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
        self.sha256 = hashlib.sha256(source.document).hexdigest()
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

    def seed(self, index: int) -> bytes:
        """What libc's random state is reseeded from before frame ``index`` is drawn."""
        return f"{self.sha256}:{self.frame_number(index)!r}".encode("ascii")

    def draw(self, scene: bytes, index: int, width: int, height: int, slot: int
             ) -> np.ndarray:
        from ..engine.lottie import get_player

        player = get_player()
        player.load(self.lottie.document, self.sha256)
        return player.draw(self.frame_number(index), width, height, self.seed(index))

    # -- identity ---------------------------------------------------------------

    def identity_parts(self) -> dict[str, Any]:
        """source (a SHA-256 hex), media and fonts (``(name, SHA-256)`` lists)."""
        parts = self.lottie.identity_parts()
        return {"source": parts["source"], "media": list(self.lottie.media_items()),
                "fonts": list(self.lottie.font_items())}

    def records(self) -> dict[str, Any]:
        """What each identity part is made of, for the store (determinism/inputs.py)."""
        base = self.directory
        return {
            "source": {"format": "lottie", "canonical": self.lottie.canonical().decode("utf-8"),
                       "children": []},
            "media": [(name, digest, base / name) for name, digest in self.lottie.media_items()],
            "fonts": [(name, digest, Path(name)) for name, digest in self.lottie.font_items()],
        }

    def scene_changes(self, recorded: bytes, current: bytes) -> tuple[list[str], list[str]]:
        """What moved between two scenes of one frame, in words, and the keys that
        group frames with the same changes (the words before the values)."""
        from ..lottie import describe_changes

        changes = list(describe_changes(recorded, current))
        return changes, [change.split(": ", 1)[0] for change in changes]


def open_lottie_film(path: Path, project_root: Path | str | None, *,
                     marker: str | None = None) -> LottieFilm:
    from ..lottie import open_lottie

    root = Path(project_root) if project_root is not None else None
    return LottieFilm(open_lottie(path, root, marker=marker), path, root, marker)


def lottie_film_from_bytes(data: bytes, path: Path, project_root: Path | None) -> LottieFilm:
    from ..lottie import lottie_from_bytes

    return LottieFilm(lottie_from_bytes(bytes(data), str(path), project_root), path,
                      project_root, text=bytes(data))
