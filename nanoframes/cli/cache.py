"""``nanoframes cache``: where the frame cache is, how big it is; ``--clear`` empties it."""

from __future__ import annotations

import argparse

from ..frames.cache import FrameCache


def register(sub) -> None:
    p = sub.add_parser(
        "cache", help="report the frame cache's size, or clear it",
        description="The frame cache holds frames that render and video drew, keyed on "
        "identity, frame and size ($NANOFRAMES_CACHE_DIR, else the user cache directory; "
        "capped at $NANOFRAMES_CACHE_MAX_MB, default 2048). digest --check and the pytest "
        "plugin never read it.")
    p.add_argument("--clear", action="store_true", help="delete every cached frame")
    p.set_defaults(func=run)


def add_cache_arg(parser: argparse.ArgumentParser) -> None:
    """``--no-cache`` for the commands that draw through the cache (render, video)."""
    parser.add_argument("--no-cache", action="store_false", dest="cache",
                        help="render every frame fresh; read and write no cache entries")


def stored_film(args: argparse.Namespace, film):
    """``film``'s frames in the frame cache, keyed on its identity; None under
    ``--no-cache`` or a fire drill that names the film."""
    from ..frames import drill

    if not getattr(args, "cache", True) or drill.names(film.comp.path):
        return None  # a film a fire drill names is drawn, never cached (frames/drill.py)
    from ..determinism.reading import film_identity

    return FrameCache().film_of(film, film_identity(film))


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def run(args: argparse.Namespace) -> int:
    cache = FrameCache()
    if args.clear:
        removed = cache.clear()
        print(f"cleared {removed.entries} frames ({_mb(removed.bytes)}) from {cache.root}")
        return 0
    s = cache.stats()
    print(f"cache: {s.directory}")
    print(f"frames: {s.entries}")
    print(f"size: {_mb(s.bytes)} of {_mb(s.max_bytes)}")
    return 0
