"""Small Lottie documents for the tests, written here (no public file is copied).

Each builder returns plain Python data; ``dumps`` gives the bytes. The shapes are
the Bodymovin schema's minimum: a layer transform (``ks``), a group of one
rectangle or ellipse with a fill, keyframes with ``i``/``o`` easing handles.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile


def static(value) -> dict:
    return {"a": 0, "k": value}


def keyed(*frames) -> dict:
    """``keyed((0, [x, y]), (30, [x2, y2]))``: a linearly eased property."""
    keys = []
    for i, (t, value) in enumerate(frames):
        key = {"t": t, "s": value if isinstance(value, list) else [value]}
        if i < len(frames) - 1:
            key["i"] = {"x": [0.5], "y": [0.5]}
            key["o"] = {"x": [0.5], "y": [0.5]}
        keys.append(key)
    return {"a": 1, "k": keys}


def transform(position=None, opacity=100, rotation=0, scale=100) -> dict:
    return {"o": static(opacity), "r": static(rotation),
            "p": position if isinstance(position, dict) else static(position or [0, 0, 0]),
            "a": static([0, 0, 0]), "s": static([scale, scale, 100])}


def fill(rgb=(1, 0, 0)) -> dict:
    return {"ty": "fl", "nm": "Fill", "c": static([*rgb, 1]), "o": static(100), "r": 1}


def group(*items, name="Group") -> dict:
    tr = {"ty": "tr", "p": static([0, 0]), "a": static([0, 0]), "s": static([100, 100]),
          "r": static(0), "o": static(100)}
    return {"ty": "gr", "nm": name, "it": [*items, tr]}


def rect(size=(40, 40), position=(0, 0)) -> dict:
    return {"ty": "rc", "nm": "Rect", "d": 1, "s": static(list(size)),
            "p": static(list(position)), "r": static(0)}


def ellipse(size=(40, 40)) -> dict:
    return {"ty": "el", "nm": "Ellipse", "d": 1, "s": static(list(size)), "p": static([0, 0])}


def repeater(copies: int) -> dict:
    return {"ty": "rp", "nm": "Repeater", "c": static(copies), "o": static(0), "m": 1,
            "tr": {"ty": "tr", "p": static([10, 0]), "a": static([0, 0]), "s": static([100, 100]),
                   "r": static(0), "so": static(100), "eo": static(100)}}


def shape_layer(ind=1, name="Box", position=None, rgb=(1, 0, 0), parent=None, shapes=None,
                ip=0, op=60) -> dict:
    layer = {"ddd": 0, "ind": ind, "ty": 4, "nm": name, "sr": 1,
             "ks": transform(position or keyed((0, [20, 50, 0]), (op - 1, [180, 50, 0]))),
             "ao": 0, "shapes": shapes or [group(rect(), fill(rgb))],
             "ip": ip, "op": op, "st": 0, "bm": 0}
    if parent is not None:
        layer["parent"] = parent
    return layer


def precomp_layer(ref: str, ind=1, name="Inner", w=200, h=100, op=60) -> dict:
    return {"ddd": 0, "ind": ind, "ty": 0, "nm": name, "refId": ref, "sr": 1,
            "ks": transform([0, 0, 0]), "ao": 0, "w": w, "h": h, "ip": 0, "op": op,
            "st": 0, "bm": 0}


def image_layer(ref: str, ind=1, name="Picture", op=60) -> dict:
    return {"ddd": 0, "ind": ind, "ty": 2, "nm": name, "refId": ref, "sr": 1,
            "ks": transform(keyed((0, [0, 0, 0]), (op - 1, [100, 20, 0]))), "ao": 0,
            "ip": 0, "op": op, "st": 0, "bm": 0}


def text_layer(text="Hi", font="Body", ind=1, size=30, op=60) -> dict:
    doc = {"s": size, "f": font, "t": text, "j": 0, "tr": 0, "lh": size * 1.2, "ls": 0,
           "fc": [0, 0, 0]}
    return {"ddd": 0, "ind": ind, "ty": 5, "nm": "Title", "sr": 1,
            "ks": transform(keyed((0, [10, 60, 0]), (op - 1, [60, 60, 0]))), "ao": 0,
            "t": {"d": {"k": [{"s": doc, "t": 0}]}, "p": {}, "m": {"g": 1, "a": static([0, 0])},
                  "a": []},
            "ip": 0, "op": op, "st": 0, "bm": 0}


def font_list(*names, family="Noto Sans", style="Regular") -> dict:
    return {"list": [{"fName": n, "fFamily": family, "fStyle": style, "ascent": 75,
                      "origin": 0} for n in names]}


def image_asset(ident: str, path: str, folder="images/", w=16, h=16, embedded=0) -> dict:
    return {"id": ident, "w": w, "h": h, "u": folder, "p": path, "e": embedded}


def animation(layers=None, w=200, h=100, fr=30, ip=0, op=60, assets=None, markers=None,
              fonts=None, name="Test") -> dict:
    doc = {"v": "5.7.4", "fr": fr, "ip": ip, "op": op, "w": w, "h": h, "nm": name, "ddd": 0,
           "assets": assets or [], "layers": layers if layers is not None
           else [shape_layer(op=op)]}
    if markers is not None:
        doc["markers"] = [{"tm": t, "cm": n, "dr": d} for n, t, d in markers]
    if fonts is not None:
        doc["fonts"] = fonts
    return doc


def with_expression(doc: dict, code: str) -> dict:
    """The first layer's position driven by ``code`` (an expression)."""
    doc["layers"][0]["ks"]["p"] = {"a": 0, "k": [100, 50, 0], "x": code}
    return doc


def dumps(doc) -> bytes:
    return json.dumps(doc, indent=1).encode()


def png(w=16, h=16, rgba=(0, 128, 255, 255)) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGBA", (w, h), rgba).save(out, format="PNG")
    return out.getvalue()


def data_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def dotlottie(animation_json: bytes, images: dict[str, bytes] | None = None,
              name="main") -> bytes:
    """A dotLottie archive: manifest.json, animations/NAME.json, images/..."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(
            {"version": "1", "generator": "tests", "animations": [{"id": name}]}))
        zf.writestr(f"animations/{name}.json", animation_json)
        for file, data in (images or {}).items():
            zf.writestr(f"images/{file}", data)
    return out.getvalue()
