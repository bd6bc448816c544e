"""Lottie films: Bodymovin JSON and dotLottie archives read, checked and made
canonical for ThorVG's Lottie player (``engine.lottie``). Nothing else in
nanoframes parses Lottie JSON (docs/lottie.md; limits in docs/limits.md, "Lottie").
"""

from __future__ import annotations

from .changes import describe_changes
from .source import LottieSource, is_lottie_name, lottie_from_bytes, open_lottie

__all__ = ["LottieSource", "describe_changes", "draw_frame", "is_lottie_name",
           "lottie_from_bytes", "open_lottie", "prepare"]


def prepare(source: LottieSource, player=None):
    """This process's player with ``source`` loaded and its faces registered."""
    from ..engine.lottie import get_player

    player = player or get_player()
    for name, data in source.face_files():
        player.register_face(name, data)
    parts = source.identity_parts()
    player.load(source.document, f"{parts['source']}/{parts['media']}/{parts['fonts']}",
                expressions=source.expressions)
    return player


def draw_frame(source: LottieSource, index: int, width: int | None = None,
               height: int | None = None, player=None):
    """Film frame ``index`` of ``source`` drawn (straight RGBA view, as ``LottiePlayer.draw``)."""
    from ..engine import site

    player = prepare(source, player)
    with site.working_on(source.path, index):
        return player.draw(source.frame_number(index), width or source.width,
                           height or source.height, source.seed(index))
