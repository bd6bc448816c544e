"""nanoframes: animated SVG compositions rendered with ThorVG, frame by frame,
with a determinism system that tells an intended edit from a renderer that drifted.

The stable API (docs/api.md) is what ``__all__`` lists; it lives in
``nanoframes.api`` and is imported on first use, so ``import nanoframes`` (and
``nanoframes --version``) loads neither numpy nor ThorVG.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Composition", "FilmDigest", "Finding", "Identity", "Kind", "LottieFilm", "NanoframesError",
    "Verdict",
    "__version__", "film_digest", "frames", "identity", "judge", "lint", "load",
    "render_frame",
]

if TYPE_CHECKING:
    from .api import (  # noqa: F401
        Composition,
        FilmDigest,
        Finding,
        Identity,
        Kind,
        LottieFilm,
        NanoframesError,
        Verdict,
        film_digest,
        frames,
        identity,
        judge,
        lint,
        load,
        render_frame,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        # A dynamic import: the package root sits above the layers (determinism reads
        # __version__ from it), while the API sits at the top beside the CLI.
        api = importlib.import_module("nanoframes.api")
        return getattr(api, name)
    raise AttributeError(f"module 'nanoframes' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
