"""The ThorVG binding, rendered for real."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nanoframes.engine import raster
from nanoframes.engine.raster import MAX_SIDE, get_rasterizer
from nanoframes.errors import NanoframesError

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
NOTO = Path(__file__).resolve().parents[1] / "fonts" / "NotoSans-Regular.ttf"
# Names of our own: fonts are process-global, so avoid clashing with other tests' names.
FACES = {"RasterTestDejaVu": DEJAVU, "RasterTestNoto": NOTO}


def svg(body: str, w: int = 100, h: int = 50) -> bytes:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}">{body}</svg>'
    ).encode()


def ink_box(alpha: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, w, h) of the pixels with alpha > 0."""
    ys, xs = np.nonzero(alpha)
    assert xs.size, "nothing was drawn"
    return int(xs.min()), int(ys.min()), int(xs.max() + 1 - xs.min()), int(ys.max() + 1 - ys.min())


@pytest.fixture(scope="module")
def faces() -> dict[str, bytes]:
    found = {name: path.read_bytes() for name, path in FACES.items() if path.is_file()}
    if not found:
        pytest.skip("no test font on this machine")
    for name, data in found.items():
        get_rasterizer().register_font(name, data)
    return found


def test_library_identity() -> None:
    path = raster.library_path()
    assert path.is_file() and path.name.startswith("libthorvg")
    assert raster.library_sha256() == hashlib.sha256(path.read_bytes()).hexdigest()
    assert raster.thorvg_python_version() == "1.1.3"


def test_one_rasterizer_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    first = get_rasterizer()
    assert get_rasterizer() is first
    monkeypatch.setattr(raster.os, "getpid", lambda: -1)  # as if in a forked child
    assert get_rasterizer() is not first


def test_red_rect_exact_pixels() -> None:
    px = get_rasterizer().render(
        svg('<rect x="10" y="20" width="30" height="15" fill="red"/>'), 100, 50
    )
    assert px.shape == (50, 100, 4) and px.dtype == np.uint8
    assert (px[20:35, 10:40] == (255, 0, 0, 255)).all()
    outside = np.ones((50, 100), dtype=bool)
    outside[20:35, 10:40] = False
    assert (px[outside] == 0).all()


# Un-premultiplying 8-bit values may round a mid-range channel by 1; premultiplied is ~half.
@pytest.mark.parametrize(
    ("fill", "rgb", "tolerance"), [("red", (255, 0, 0), 0), ("#ff8040", (255, 128, 64), 1)]
)
def test_alpha_is_straight_not_premultiplied(
    fill: str, rgb: tuple[int, int, int], tolerance: int
) -> None:
    body = f'<rect x="0" y="0" width="100" height="50" fill="{fill}" fill-opacity="0.5"/>'
    px = get_rasterizer().render(svg(body), 100, 50)
    assert abs(int(px[25, 50, 3]) - 128) <= 1
    assert all(abs(int(a) - b) <= tolerance for a, b in zip(px[25, 50, :3], rgb)), px[25, 50]


def test_scaled_to_the_requested_size() -> None:
    px = get_rasterizer().render(
        svg('<rect x="50" y="0" width="50" height="50" fill="blue"/>'), 200, 100
    )
    assert tuple(px[50, 150]) == (0, 0, 255, 255) and px[50, 50, 3] == 0


def test_same_document_same_bytes() -> None:
    doc = svg('<circle cx="50" cy="25" r="17.3" fill="#123456" stroke="#fedcba" stroke-width="3"/>')
    r = get_rasterizer()
    first = r.render(doc, 100, 50).tobytes()
    r.render(svg('<rect width="100" height="50" fill="white"/>'), 100, 50)
    assert r.render(doc, 100, 50).tobytes() == first


def test_each_render_shows_its_own_document() -> None:
    # Same byte length, different content: a load cached by address would show the old one.
    r = get_rasterizer()
    for i in range(30):
        colour, rgb = ("#ff0000", (255, 0, 0)) if i % 2 else ("#0000ff", (0, 0, 255))
        px = r.render(svg(f'<rect width="100" height="50" fill="{colour}"/>'), 100, 50)
        assert tuple(px[10, 10]) == (*rgb, 255), f"frame {i} shows another document"


def test_buffer_is_reused_and_read_only() -> None:
    r = get_rasterizer()
    a = r.render(svg('<rect width="100" height="50" fill="red"/>'), 100, 50)
    assert not a.flags.writeable
    b = r.render(svg('<rect width="100" height="50" fill="lime"/>'), 100, 50)
    assert np.shares_memory(a, b)  # documented: copy a frame to keep it


def test_text_in_registered_face_draws_ink(faces: dict[str, bytes]) -> None:
    name = next(iter(faces))
    doc = svg(f'<text x="10" y="40" font-family="{name}" font-size="30" fill="black">Hi</text>')
    alpha = get_rasterizer().render(doc, 100, 50)[:, :, 3]
    assert (alpha > 0).sum() > 50


def test_register_font_is_idempotent_and_refuses_other_bytes(faces: dict[str, bytes]) -> None:
    name, data = next(iter(faces.items()))
    r = get_rasterizer()
    r.register_font(name, data)  # same bytes again: a no-op
    with pytest.raises(NanoframesError) as err:
        r.register_font(name, data[:-1] + b"\0")
    assert err.value.code == "font-conflict"


@pytest.mark.parametrize(
    ("size", "text"),
    [(12, "Ag"), (23.5, "Hello, world"), (40, "Typography gjy"), (97, "W|")],
)
def test_text_bounds_match_rendered_ink(faces: dict[str, bytes], size: float, text: str) -> None:
    r = get_rasterizer()
    ox, oy = 40, 200  # the <text x=0 y=0> moved into view
    for name in faces:
        x, y, w, h = r.text_bounds(name, size, text)
        body = (
            f'<g transform="translate({ox} {oy})"><text x="0" y="0" font-family="{name}" '
            f'font-size="{size}" fill="black">{text}</text></g>'
        )
        ix, iy, iw, ih = ink_box(r.render(svg(body, 800, 300), 800, 300)[:, :, 3])
        ink = (ix - ox, iy - oy, ix - ox + iw, iy - oy + ih)
        box = (x, y, x + w, y + h)
        assert all(abs(a - b) <= 1 for a, b in zip(box, ink)), (name, box, ink)


def test_text_bounds_collapse_whitespace_like_the_loader(faces: dict[str, bytes]) -> None:
    name = next(iter(faces))
    r = get_rasterizer()
    assert r.text_bounds(name, 40, " a \n\t b  ") == r.text_bounds(name, 40, "a b")
    assert r.text_bounds(name, 40, "  ") == (0.0, 0.0, 0.0, 0.0)


def test_measuring_does_not_change_pixels(faces: dict[str, bytes]) -> None:
    name = next(iter(faces))
    r = get_rasterizer()
    doc = svg(f'<text x="5" y="40" font-family="{name}" font-size="33">Qq</text>')
    before = r.render(doc, 100, 50).tobytes()
    r.text_bounds(name, 33, "Qq")
    r.text_bounds(name, 71, "something else")
    assert r.render(doc, 100, 50).tobytes() == before


def test_unknown_face_is_an_error() -> None:
    with pytest.raises(NanoframesError) as err:
        get_rasterizer().text_bounds("NoSuchFace", 20, "x")
    assert err.value.code == "font-unknown"


@pytest.mark.parametrize(("w", "h"), [(MAX_SIDE + 1, 10), (10, MAX_SIDE + 1)])
def test_canvas_over_max_side_is_refused(w: int, h: int) -> None:
    with pytest.raises(NanoframesError) as err:
        get_rasterizer().render(svg("", w, h), w, h)
    assert err.value.code == "canvas-too-large"


@pytest.mark.parametrize("payload", [b"hello", b"\x89PNG\r\n\x1a\n", b"<html/>", b""])
def test_non_svg_payload_is_an_error(payload: bytes) -> None:
    with pytest.raises(NanoframesError) as err:
        get_rasterizer().render(payload, 10, 10)
    assert err.value.code == "render-failed"
    assert re.search(r"NOT_SUPPORTED|INVALID_ARGUMENT", str(err.value))


def test_thread_count_from_env_gives_the_same_pixels() -> None:
    doc = svg('<circle cx="50" cy="25" r="20" fill="orange" stroke="navy" stroke-width="2.5"/>')
    here = hashlib.sha256(get_rasterizer().render(doc, 100, 50)).hexdigest()
    code = (
        "import hashlib, sys; from nanoframes.engine.raster import get_rasterizer; "
        "r = get_rasterizer(); "
        "print(r.threads, hashlib.sha256(r.render(sys.stdin.buffer.read(), 100, 50)).hexdigest())"
    )
    env = {**os.environ, "NANOFRAMES_THORVG_THREADS": "3"}
    out = subprocess.run(
        [sys.executable, "-c", code], input=doc, env=env, capture_output=True, check=True
    )
    assert out.stdout.decode().split() == ["3", here]


def test_bad_thread_count_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NANOFRAMES_THORVG_THREADS", "many")
    with pytest.raises(NanoframesError) as err:
        raster._threads()
    assert err.value.code == "config-invalid"
