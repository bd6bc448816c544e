"""``nanoframes svg COMP --frame N``: print the document the rasterizer receives."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import add_frame_choice, frame_index


def register(sub) -> None:
    p = sub.add_parser("svg", help="print the baked SVG document of one frame",
                       description="Print the static SVG document that ThorVG receives for "
                       "one frame (the clock resolved: presence, fades, animated values, "
                       "fonts, embedded images).")
    p.add_argument("composition", type=Path)
    add_frame_choice(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: building the command line imports no renderer
    from ..bake.baker import Baker
    from ..model.composition import parse

    comp = parse(args.composition)
    index = frame_index(comp, args.frame, args.t)
    doc = Baker(comp).document(index)  # --t selects a frame of the film
    sys.stdout.buffer.write(doc + b"\n")
    return 0
