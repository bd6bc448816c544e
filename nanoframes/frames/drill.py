"""A fire drill: prove that a gate catches a regression, with the real pipeline.

``NANOFRAMES_DRILL=KEY[,KEY…]`` names compositions (ledger keys such as
``films/intro.nf.svg``, or a file name, or a stem). For each, right after ThorVG
draws frame 0 (``Film.raster``, the one place every drawing passes, a second
opinion's fresh processes included), one pixel of that frame is nudged by one
level: the check reads ``regression`` (every declared input is the same), with
its pixels, its pictures and its second opinion, as a real one would.

Nothing drawn under a drill may last: recording refuses to start and the ledger
refuses to be written while a drill is set (``refuse``, error ``drill-active``);
a reading kept for ``nanoframes accept`` says it was drilled, and is never
accepted; the frame cache is not used for a drilled film (``cli/cache.py``), and
the frame store is written only by recording. The front ends say DRILL in the
header and the summary of the run (``banner``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..errors import NanoframesError
from ..shown import shown

if TYPE_CHECKING:
    import numpy as np

ENV = "NANOFRAMES_DRILL"
FRAME = 0  # the frame nudged: every reading draws it (samples include the first frame)


def keys(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The compositions the drill names (empty: no drill)."""
    return tuple(k.strip().replace("\\", "/") for k in environ.get(ENV, "").split(",")
                 if k.strip())


def names(path: str | Path | None, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the drill names the composition at ``path``: by its path's last parts
    (a ledger key), its file name or its stem."""
    wanted = keys(environ)
    if not wanted or path is None:
        return False
    posix = PurePosixPath(Path(path).as_posix())
    name = posix.name
    stem = name[:-len(".nf.svg")] if name.endswith(".nf.svg") else posix.stem
    for key in wanted:
        parts = PurePosixPath(key.lstrip("./")).parts if key not in (name, stem) else ()
        if key in (name, stem) or (parts and posix.parts[-len(parts):] == parts):
            return True
    return False


def nudge(frame: np.ndarray) -> np.ndarray:
    """A copy of ``frame`` (RGBA) with one channel of its middle pixel one level
    off: the smallest change a frame digest sees."""
    out = frame.copy()
    y, x = out.shape[0] // 2, out.shape[1] // 2
    out[y, x, 0] = out[y, x, 0] - 1 if out[y, x, 0] else 1
    return out


def banner(environ: Mapping[str, str] = os.environ) -> str | None:
    """The line a run under a drill says first and last (None: no drill)."""
    named = keys(environ)
    if not named:
        return None
    return (f"DRILL: {ENV}={shown(','.join(named), lines=False)}: one pixel of frame {FRAME} of "
            f"{'each' if len(named) > 1 else 'this composition'} is nudged after drawing; "
            f"its check must read regression. Nothing drawn can be recorded or accepted")


def refuse(what: str = "record", environ: Mapping[str, str] = os.environ) -> None:
    """Raise ``drill-active`` where a drill is set: nothing drawn under it may last."""
    named = keys(environ)
    if named:
        raise NanoframesError("drill-active", f"refusing to {what} under a fire drill "
                              f"({ENV}={','.join(named)}): unset it first")
