"""Write the Lottie example films of this folder (written here: nothing is copied).

    python examples/lottie/make.py

- ``loader.json``: a ring of eight dots turning, the centre pulsing (256x256,
  48 frames at 24 fps): rotation, scale, staggered opacity keyframes.
- ``badge.json``: a star drawn with Bezier paths pops in with an overshoot, a ring
  parented to it (256x256, 40 frames at 30 fps): paths, parenting, eased keyframes.
- ``toggle.lottie``: a dotLottie archive, a switch that turns on then off, its knob
  an image inside the archive (320x180, 60 frames at 30 fps), with two markers,
  ``on`` and ``off``: each a film of its own (``toggle.lottie#on``).

The output is committed; running this again writes the same bytes (fixed zip
timestamps, sorted keys, no floats printed from arithmetic that could vary).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
EPOCH = (1980, 1, 1, 0, 0, 0)  # the zip entries' fixed timestamp


def static(value):
    return {"a": 0, "k": value}


def keyed(*keys, ease=(0.33, 0.0, 0.67, 1.0)):
    """``keyed((t, value), ...)``: keyframes with a cubic-bezier ease between them."""
    out = []
    for n, (t, value) in enumerate(keys):
        key = {"t": t, "s": value if isinstance(value, list) else [value]}
        if n < len(keys) - 1:
            key["o"] = {"x": [ease[0]], "y": [ease[1]]}
            key["i"] = {"x": [ease[2]], "y": [ease[3]]}
        out.append(key)
    return {"a": 1, "k": out}


def transform(p=(0, 0), a=(0, 0), s=(100, 100), r=0, o=100):
    def value(v):
        return v if isinstance(v, dict) else static(list(v) + [0] if isinstance(v, tuple)
                                                    else v)
    return {"p": value(p), "a": value(a), "s": value(s if isinstance(s, dict)
                                                     else (s[0], s[1])),
            "r": value(r), "o": value(o)}


def group(name, *items, tr=None):
    tr = tr or {}
    return {"ty": "gr", "nm": name, "it": [*items, {
        "ty": "tr", "p": tr.get("p", static([0, 0])), "a": static([0, 0]),
        "s": tr.get("s", static([100, 100])), "r": tr.get("r", static(0)),
        "o": tr.get("o", static(100))}]}


def ellipse(size):
    return {"ty": "el", "nm": "Ellipse", "d": 1, "s": static(list(size)), "p": static([0, 0])}


def rect(size, radius=0):
    return {"ty": "rc", "nm": "Rect", "d": 1, "s": static(list(size)), "p": static([0, 0]),
            "r": static(radius)}


def fill(rgb, name="Fill"):
    return {"ty": "fl", "nm": name, "c": static([*rgb, 1]), "o": static(100), "r": 1}


def stroke(rgb, width):
    return {"ty": "st", "nm": "Stroke", "c": static([*rgb, 1]), "o": static(100),
            "w": static(width), "lc": 2, "lj": 2, "ml": 4}


def layer(ind, name, shapes, ks, op, parent=None, ip=0):
    out = {"ddd": 0, "ind": ind, "ty": 4, "nm": name, "sr": 1, "ks": ks, "ao": 0,
           "shapes": shapes, "ip": ip, "op": op, "st": 0, "bm": 0}
    if parent is not None:
        out["parent"] = parent
    return out


def animation(name, w, h, fr, op, layers, assets=(), markers=()):
    doc = {"v": "5.7.4", "fr": fr, "ip": 0, "op": op, "w": w, "h": h, "nm": name, "ddd": 0,
           "assets": list(assets), "layers": list(layers)}
    if markers:
        doc["markers"] = [{"tm": tm, "cm": cm, "dr": dr} for cm, tm, dr in markers]
    return doc


def dumps(doc) -> bytes:
    return (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode("utf-8")


# --- loader.json ---------------------------------------------------------------------

def loader() -> dict:
    op = 48
    dots = []
    for n in range(8):
        angle = n * math.pi / 4
        x, y = round(70 * math.cos(angle), 2), round(70 * math.sin(angle), 2)
        start = n * 3
        dots.append(group(f"Dot {n + 1}", ellipse((22, 22)), fill((0.16, 0.5, 0.95)), tr={
            "p": static([x, y]),
            "o": keyed((start, 100), (start + 12, 25), (start + 24, 100))}))
    ring = layer(1, "Ring", dots, transform(p=(128, 128), r=keyed((0, 0), (op, 360),
                                                                ease=(0, 0, 1, 1))), op)
    core = layer(2, "Core", [group("Core", ellipse((54, 54)), fill((0.98, 0.72, 0.1)))],
                 transform(p=(128, 128), s=keyed((0, [80, 80, 100]), (24, [110, 110, 100]),
                                                 (op - 1, [80, 80, 100]))), op)
    return animation("Loader", 256, 256, 24, op, [ring, core])


# --- badge.json ----------------------------------------------------------------------

def star_path(points=5, outer=70.0, inner=30.0) -> dict:
    vertices = []
    for n in range(points * 2):
        radius = outer if n % 2 == 0 else inner
        angle = -math.pi / 2 + n * math.pi / points
        vertices.append([round(radius * math.cos(angle), 2), round(radius * math.sin(angle), 2)])
    zero = [[0, 0]] * len(vertices)
    return {"ty": "sh", "nm": "Star", "d": 1,
            "ks": static({"c": True, "v": vertices, "i": zero, "o": zero})}


def badge() -> dict:
    op = 40
    star = layer(1, "Star", [group("Star", star_path(), fill((0.95, 0.3, 0.35)),
                                   stroke((0.55, 0.08, 0.16), 4))],
                 transform(p=(128, 128), s=keyed((0, [0, 0, 100]), (16, [118, 118, 100]),
                                                 (26, [100, 100, 100]),
                                                 ease=(0.2, 0.0, 0.3, 1.0)),
                           r=keyed((0, -30), (26, 0))), op)
    ring = layer(2, "Ring", [group("Ring", ellipse((190, 190)), stroke((0.2, 0.2, 0.3), 6))],
                 transform(o=keyed((10, 0), (30, 100))), op, parent=1)
    return animation("Badge", 256, 256, 30, op, [star, ring])


# --- toggle.lottie -------------------------------------------------------------------

def knob_png(size=48) -> bytes:
    """A round knob with a soft edge, as a PNG (written by hand: zlib, no Pillow)."""
    rows = []
    c = (size - 1) / 2
    for y in range(size):
        row = bytearray([0])  # filter: none
        for x in range(size):
            d = math.hypot(x - c, y - c)
            alpha = max(0, min(255, round((c - d + 0.5) * 255)))
            shade = 250 - (y * 40) // size
            row += bytes([shade, shade, shade, alpha])
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def toggle() -> dict:
    op = 60
    on, off = (0.2, 0.75, 0.4), (0.72, 0.74, 0.78)
    track = layer(2, "Track", [group("Track", rect((200, 84), 42), {
        "ty": "fl", "nm": "Fill", "o": static(100), "r": 1,
        "c": keyed((4, [*off, 1]), (22, [*on, 1]), (34, [*on, 1]), (52, [*off, 1]))})],
        transform(p=(160, 90)), op)
    knob = {"ddd": 0, "ind": 1, "ty": 2, "nm": "Knob", "refId": "knob", "sr": 1, "ao": 0,
            "ks": transform(p=keyed((4, [110, 90, 0]), (22, [210, 90, 0]), (34, [210, 90, 0]),
                                    (52, [110, 90, 0])), a=(24, 24), s=(140, 140)),
            "ip": 0, "op": op, "st": 0, "bm": 0}
    asset = {"id": "knob", "w": 48, "h": 48, "u": "/images/", "p": "knob.png", "e": 0}
    return animation("Toggle", 320, 180, 30, op, [knob, track], assets=[asset],
                     markers=[("on", 0, 30), ("off", 30, 30)])


def dotlottie(doc: dict, images: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        def put(name: str, data: bytes) -> None:
            info = zipfile.ZipInfo(name, EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)

        put("manifest.json", dumps({"version": "1", "generator": "nanoframes examples",
                                    "animations": [{"id": "toggle"}]}))
        put("animations/toggle.json", dumps(doc))
        for name, data in images.items():
            put(f"images/{name}", data)
    return out.getvalue()


def main() -> None:
    (HERE / "loader.json").write_bytes(dumps(loader()))
    (HERE / "badge.json").write_bytes(dumps(badge()))
    (HERE / "toggle.lottie").write_bytes(dotlottie(toggle(), {"knob.png": knob_png()}))


if __name__ == "__main__":
    main()
