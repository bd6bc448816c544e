"""``nanoframes svg FILM --frame N``: print the document the rasterizer receives (a
composition's baked SVG; a Lottie film's scene: the canonical JSON ThorVG loads,
images inlined, and the frame it draws)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import add_frame_choice, frame_index


def register(sub) -> None:
    p = sub.add_parser("svg", help="print the baked SVG document of one frame",
                       description="Print the static SVG document that ThorVG receives for "
                       "one frame (the clock resolved: presence, fades, animated values, "
                       "fonts, embedded images). For a Lottie film, its scene: the canonical "
                       "JSON document ThorVG loads (images inlined) and the frame it draws.")
    p.add_argument("composition", type=Path)
    add_frame_choice(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: building the command line imports no renderer
    from ..frames.source import as_source, open_parsed

    comp = open_parsed(args.composition)
    index = frame_index(comp, args.frame, args.t)
    doc = as_source(comp).document(index)  # --t selects a frame of the film
    sys.stdout.buffer.write(doc + b"\n")
    return 0
