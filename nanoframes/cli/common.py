"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import math
import os
from fractions import Fraction
from typing import TYPE_CHECKING

from ..errors import NanoframesError

if TYPE_CHECKING:  # building the command line parses nothing
    from ..model.composition import Composition


def default_jobs() -> int:
    return 1


def add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument("-j", "--jobs", type=int, default=default_jobs(), metavar="N",
                   help="processes that draw frames (default 1; 0 = one per CPU)")
    p.set_defaults(_fix_jobs=True)


def add_scale(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", type=float, default=1.0, metavar="F",
                   help="draw at F times the authored size (0.5 a draft, 2 high density); "
                   "vectors and text are redrawn at that size")


def add_drawing(p: argparse.ArgumentParser) -> None:
    """What every command that draws a whole film takes: -j, --scale, --no-cache."""
    from .cache import add_cache_arg

    add_jobs(p)
    add_scale(p)
    add_cache_arg(p)
    add_allow_fallback(p)


def add_allow_fallback(p: argparse.ArgumentParser) -> None:
    """``--allow-fallback`` (read by ``main`` before any worker starts: it sets
    ``NANOFRAMES_ALLOW_FALLBACK`` for this process and its workers)."""
    p.add_argument("--allow-fallback", action="store_true",
                   help="a refused face from font-dirs falls back to another face with a "
                   "warning, instead of refusing every film whose text names it")


def open_film(args: argparse.Namespace):
    """The film ``args.composition`` names, drawn at ``args.scale`` (the renderer is
    imported here, not when the command line is built)."""
    from ..frames.film import Film

    return Film.open(args.composition, scale=args.scale)


def add_frame_choice(p: argparse.ArgumentParser, without: str = "frame 0") -> None:
    """``--frame N`` or ``--t SECONDS`` (one of them; ``without`` says what neither means)."""
    when = p.add_mutually_exclusive_group()
    when.add_argument("--frame", type=int, help=f"frame index (without --frame/--t: {without})")
    when.add_argument("--t", type=float, dest="t", metavar="SECONDS",
                      help="time in seconds: the frame showing then, floor(t × fps)")


def jobs_value(n: int) -> int:
    return max(1, os.cpu_count() or 1) if n == 0 else max(1, n)


def frame_index(comp: Composition, frame: int | None, t: float | None) -> int:
    """The frame a --frame/--t option names, validated against the film."""
    if frame is None and t is not None:
        if not (0 <= t < float(comp.duration)):
            raise NanoframesError("frame-range", f"--t {t} is outside the film "
                                  f"(0 to {float(comp.duration)} s)", comp.path)
        # The frame showing at t: floor(t × fps) in exact decimal arithmetic (the t the
        # user typed), at most the last frame (rounding the count down can leave a tail).
        frame = min(math.floor(Fraction(repr(t)) * comp.fps), comp.frame_count - 1)
    frame = frame or 0
    if not 0 <= frame < comp.frame_count:
        raise NanoframesError("frame-range", f"frame {frame} is outside the film "
                              f"(0..{comp.frame_count - 1})", comp.path)
    return frame
