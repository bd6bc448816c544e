"""Contact sheets: a grid of a film's frames, each labelled with its index and time.

Used by ``nanoframes strip`` and by the HTML report. Frames are drawn over a
checkerboard (so transparency shows) and scaled down with a box filter; labels
use the bundled Noto Sans through Pillow, so a sheet is the same on every
machine with the same Pillow.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ..frames.film import Film

CELL_WIDTH = 240  # frames wider than this are scaled down
LABEL_HEIGHT = 20
GAP = 6
BACKGROUND = (32, 32, 36, 255)


def _font(size: int = 13):
    from PIL import ImageFont

    from ..text.fonts import bundled_fonts_dir

    face = bundled_fonts_dir() / "NotoSans-Regular.ttf"
    if face.is_file():
        return ImageFont.truetype(str(face), size)
    return ImageFont.load_default()


def _checker(h: int, w: int, square: int = 8) -> np.ndarray:
    yy, xx = np.indices((h, w))
    light = ((yy // square + xx // square) % 2).astype(bool)
    out = np.where(light[..., None], np.uint8(204), np.uint8(153))
    return np.repeat(out, 3, axis=2)


def _over_checker(rgba: np.ndarray) -> np.ndarray:
    h, w = rgba.shape[:2]
    bg = _checker(h, w).astype(np.uint16)
    a = rgba[..., 3:4].astype(np.uint16)
    rgb = (rgba[..., :3].astype(np.uint16) * a + bg * (255 - a) + 127) // 255
    return rgb.astype(np.uint8)


def label(index: int, fps: Fraction) -> str:
    seconds = Fraction(index) / fps
    return f"#{index}  {float(seconds):.3f} s"


def contact_sheet(film: Film, indices: Sequence[int], columns: int = 4) -> np.ndarray:
    """An RGBA grid of ``indices`` of ``film``, ``columns`` wide, labelled."""
    from PIL import Image, ImageDraw

    comp = film.source
    scale = min(1.0, CELL_WIDTH / comp.width)
    cw, ch = max(1, round(comp.width * scale)), max(1, round(comp.height * scale))
    columns = max(1, min(columns, len(indices) or 1))
    rows = max(1, -(-len(indices) // columns))
    width = GAP + columns * (cw + GAP)
    height = GAP + rows * (ch + LABEL_HEIGHT + GAP)
    sheet = Image.new("RGBA", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    font = _font()
    order = {index: n for n, index in enumerate(indices)}
    for index, frame in film.frames(sorted(set(indices))):
        picture = Image.fromarray(_over_checker(frame), "RGB")
        if (cw, ch) != (comp.width, comp.height):
            picture = picture.resize((cw, ch), Image.Resampling.BOX)
        for n in [k for k, i in enumerate(indices) if i == index] or [order[index]]:
            x = GAP + (n % columns) * (cw + GAP)
            y = GAP + (n // columns) * (ch + LABEL_HEIGHT + GAP)
            sheet.paste(picture, (x, y))
            draw.text((x + 2, y + ch + 3), label(index, comp.fps), fill=(230, 230, 230, 255),
                      font=font)
    return np.asarray(sheet)
