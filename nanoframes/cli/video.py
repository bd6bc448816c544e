"""``nanoframes video COMP -o out.mp4``: H.264 through PyAV."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..progress import Progress
from .cache import stored_film
from .common import add_drawing, jobs_value, open_film


def register(sub) -> None:
    p = sub.add_parser("video", help="encode the film as an H.264 MP4",
                       description="Encode every frame as H.264 (yuv420p, over black, odd "
                       "sizes padded by one pixel) with pinned encoder settings.")
    p.add_argument("composition", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--crf", type=int, default=18, help="x264 quality (default 18)")
    add_drawing(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..frames.output import write_video  # PyAV: imported when encoding
    from ..frames.through_cache import cached_frames

    film = open_film(args)
    comp = film.source
    with Progress(comp.frame_count, comp.id) as bar:
        def frames():
            for _, frame in cached_frames(film, jobs=jobs_value(args.jobs),
                                          stored=stored_film(args, film)):
                bar.advance()
                yield frame
        write_video(frames(), args.output, film.width, film.height, comp.fps, args.crf)
    print(f"wrote {args.output} ({comp.frame_count} frames, {film.width}x{film.height} "
          f"at {float(comp.fps):g} fps)")
    return 0
