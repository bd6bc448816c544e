"""``nanoframes strip COMP -o sheet.png``: a contact sheet of a film's frames."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import find_project_root
from ..errors import NanoframesError
from ..files import write_bytes_atomic


def register(sub) -> None:
    p = sub.add_parser(
        "strip", help="a contact sheet: a grid of frames labelled with index and time",
        description="Render a grid of a composition's frames, each labelled with its "
        "index and time.")
    p.add_argument("comp", type=Path, metavar="COMP")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="sheet.png")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--every", type=int, metavar="N", help="every Nth frame (default: "
                       "about 16 frames over the film)")
    which.add_argument("--frames", metavar="LIST", help="frame indices, e.g. 0,10,20-25")
    p.add_argument("--columns", type=int, default=4, metavar="C", help="columns (default 4)")
    p.set_defaults(func=run)


def parse_frames(text: str, count: int, path: Path) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                lo, hi = part.split("-", 1)
                out.extend(range(int(lo), int(hi) + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise NanoframesError("frame-range", f"--frames: not a frame list: {text!r}",
                                  path) from None
    bad = [i for i in out if not 0 <= i < count]
    if bad or not out:
        raise NanoframesError("frame-range", f"--frames: {bad[0] if bad else text!r} is outside "
                              f"the film (0..{count - 1})", path)
    return out


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: building the command line imports no renderer
    from ..evidence.sheet import contact_sheet
    from ..frames.film import Film
    from ..frames.png import encode_png

    film = Film.open(args.comp, find_project_root(args.comp.parent))
    count = film.source.frame_count
    if args.frames:
        indices = parse_frames(args.frames, count, args.comp)
    else:
        every = args.every or max(1, -(-count // 16))
        if every < 1:
            raise NanoframesError("frame-range", "--every must be at least 1", args.comp)
        indices = list(range(0, count, every))
    if args.columns < 1:
        raise NanoframesError("frame-range", "--columns must be at least 1", args.comp)
    sheet = contact_sheet(film, indices, args.columns)
    write_bytes_atomic(args.output, encode_png(sheet), code="output-failed", durable=False)
    print(f"{args.output}: {len(indices)} frames, {sheet.shape[1]}×{sheet.shape[0]}")
    return 0
