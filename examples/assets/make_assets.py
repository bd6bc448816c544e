"""Regenerate the raster assets used by the examples (all drawn procedurally).

    python examples/assets/make_assets.py

Writes, next to this script:
  dunes.jpg    800x500 JPEG  a sunset over layered dunes (photo-like, opaque)
  product.png  480x480 PNG   a wireless-earbuds case with soft shadow, transparent background
  avatar.png   256x256 PNG   an abstract gradient avatar (square, opaque)
Deterministic: fixed seeds, no downloads.
"""
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

HERE = Path(__file__).resolve().parent


def lerp(a, b, t):
    return a + (b - a) * t


def dunes(w=800, h=500):
    rng = np.random.default_rng(7)
    y = np.linspace(0, 1, h)[:, None]
    x = np.linspace(0, 1, w)[None, :]
    top = np.array([38, 28, 84], float)
    mid = np.array([232, 98, 92], float)
    low = np.array([255, 196, 120], float)
    t = np.clip(y / 0.62, 0, 1)
    sky = np.where(t[..., None] < 0.55,
                   lerp(top, mid, (t / 0.55)[..., None]),
                   lerp(mid, low, ((t - 0.55) / 0.45)[..., None]))
    sky = np.broadcast_to(sky, (h, w, 3)).copy()
    # sun with glow
    sx, sy = 0.62, 0.50
    d = np.sqrt(((x - sx) * w / h) ** 2 + (y - sy) ** 2)
    glow = np.exp(-(d / 0.16) ** 2)[..., None]
    sky = lerp(sky, np.array([255, 236, 190.0]), glow * 0.7)
    sky[d < 0.075] = [255, 244, 214]
    img = sky
    layers = [(0.60, (196, 84, 86), 0.035, 2.1), (0.70, (150, 56, 82), 0.05, 3.3),
              (0.80, (98, 36, 74), 0.06, 1.6), (0.90, (52, 22, 58), 0.05, 2.7)]
    xs = np.linspace(0, 1, w)
    for base, col, amp, freq in layers:
        phase = rng.uniform(0, 6.28)
        ridge = (base + amp * np.sin(xs * freq * 6.28 + phase)
                 + amp * 0.4 * np.sin(xs * freq * 17 + phase * 2))
        mask = y >= ridge[None, :]
        shade = np.clip((y - ridge[None, :]) * 3, 0, 0.35)
        colr = np.array(col, float)[None, None, :] * (1 - shade[..., None])
        img = np.where(mask[..., None], colr, img)
    img += rng.normal(0, 2.2, img.shape)  # film grain
    Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(HERE / "dunes.jpg", quality=90)


def product(s=480):
    big = s * 2
    im = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    # soft shadow
    sh = Image.new("L", (big, big), 0)
    ImageDraw.Draw(sh).ellipse([big * 0.2, big * 0.78, big * 0.8, big * 0.88], fill=120)
    sh = sh.filter(ImageFilter.GaussianBlur(big * 0.03))
    im.paste((20, 16, 40, 255), (0, 0), sh)
    # case body: rounded rect with vertical gradient
    x0, y0, x1, y1 = big * 0.18, big * 0.26, big * 0.82, big * 0.80
    body = Image.new("L", (big, big), 0)
    ImageDraw.Draw(body).rounded_rectangle([x0, y0, x1, y1], radius=big * 0.16, fill=255)
    yy = np.linspace(0, 1, big)[:, None]
    xx = np.linspace(0, 1, big)[None, :]
    g = np.clip((yy - 0.26) / 0.54, 0, 1)
    hl = np.exp(-((xx - 0.38) / 0.12) ** 2) * np.exp(-((yy - 0.40) / 0.18) ** 2)
    base = lerp(np.array([250, 250, 253.0]), np.array([196, 200, 214.0]), g[..., None])
    base = base + 18 * hl[..., None]
    rgba = np.concatenate([np.clip(base, 0, 255), np.full((big, big, 1), 255.0)], axis=2)
    bodyimg = Image.fromarray(rgba.astype(np.uint8), "RGBA")
    im.paste(bodyimg, (0, 0), body)
    d = ImageDraw.Draw(im)
    # lid seam and status light
    d.line([x0 + big * 0.02, big * 0.45, x1 - big * 0.02, big * 0.45],
           fill=(150, 154, 172, 255), width=6)
    d.ellipse([big * 0.485, big * 0.53, big * 0.515, big * 0.56], fill=(72, 220, 160, 255))
    im = im.resize((s, s), Image.LANCZOS)
    im.save(HERE / "product.png")


def avatar(s=256):
    y = np.linspace(0, 1, s)[:, None]
    x = np.linspace(0, 1, s)[None, :]
    a = np.array([255, 170, 90.0])
    b = np.array([120, 80, 220.0])
    t = np.clip((x + y) / 2, 0, 1)[..., None]
    img = lerp(a, b, t)
    # head and shoulders silhouette
    head = ((x - 0.5) ** 2 + (y - 0.40) ** 2) < 0.17 ** 2
    body = ((x - 0.5) ** 2 / 0.32 ** 2 + (y - 1.02) ** 2 / 0.38 ** 2) < 1
    img[head | body] = lerp(img[head | body], np.array([255, 255, 255.0]), 0.85)
    Image.fromarray(img.astype(np.uint8)).save(HERE / "avatar.png")


if __name__ == "__main__":
    dunes()
    product()
    avatar()
