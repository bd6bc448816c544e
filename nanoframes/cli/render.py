"""``nanoframes render COMP --frame N -o f.png`` and ``nanoframes render COMP -o DIR``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import NanoframesError
from ..files import write_bytes_atomic
from ..progress import Progress
from .cache import stored_film
from .common import add_drawing, add_frame_choice, frame_index, jobs_value, open_film


def register(sub) -> None:
    p = sub.add_parser("render", help="render frames to PNG",
                       description="Render one frame (--frame/--t) to a PNG file, or every "
                       "frame into a directory as NNNNN.png.")
    p.add_argument("composition", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True,
                   help="a .png file (with --frame/--t) or a directory")
    add_frame_choice(p, without="every frame, into a directory")
    add_drawing(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..frames.output import write_png  # the renderer: imported when drawing
    from ..frames.through_cache import cached_png, cached_pngs

    film = open_film(args)
    comp = film.source
    if args.frame is not None or args.t is not None:
        index = frame_index(comp, args.frame, args.t)
        stored = stored_film(args, film)  # --t selects a frame of the film
        if stored is not None:
            write_bytes_atomic(args.output, cached_png(film, index, stored),
                               code="output-failed", durable=False)
        else:
            write_png(film.raster(film.document(index)), args.output)
        print(f"wrote {args.output} (frame {index} of {comp.frame_count}, "
              f"{film.width}x{film.height})")
        return 0
    out: Path = args.output
    if out.suffix.lower() == ".png":
        raise NanoframesError("output-invalid", f"-o {out} names a .png file; add --frame N "
                              "(or --t SECONDS), or give a directory for every frame")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NanoframesError("output-failed", f"cannot create the directory: "
                              f"{exc.strerror or exc}", out) from None
    digits = max(5, len(str(comp.frame_count - 1)))
    files = [(i, out / f"{i:0{digits}d}.png") for i in range(comp.frame_count)]
    with Progress(comp.frame_count, comp.id) as bar:
        # workers draw, encode and write their own files; only counts come back
        for written in cached_pngs(film, files, jobs=jobs_value(args.jobs),
                                   stored=stored_film(args, film)):
            bar.advance(written)
    print(f"wrote {comp.frame_count} frames to {out}/")
    stray = stray_frames(out, {path.name for _, path in files})
    if stray:
        # e.g. a longer film rendered there before: a tool reading every NNNNN.png
        # (ffmpeg -i DIR/%05d.png) would take them as this film's last frames
        print(f"nanoframes: warning: {out}/ also holds {len(stray)} numbered PNG file(s) "
              f"this render did not write ({stray[0]}"
              f"{f' … {stray[-1]}' if len(stray) > 1 else ''}), left from an earlier "
              "render: they are not frames of this film", file=sys.stderr)
    return 0


def stray_frames(directory: Path, written: set[str]) -> list[str]:
    """Names of the numbered PNGs (``NNNNN.png``) in ``directory`` not in ``written``."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(n for n in names
                  if n.endswith(".png") and n[:-4].isdigit() and n not in written)
