"""SVG as design tools export it (issue 33, items 2 and 4): embedded images, GIF/WebP
and SVG images, faithful ``style=`` moves, one-sided image sizes, prefixed documents
and cyclic ``<use>``. Every case is drawn for real and measured on the frame."""

from __future__ import annotations

import base64
import io
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from PIL import Image
from test_css import colour, frame  # rendered through ThorVG, read back

from nanoframes.bake.baker import Baker
from nanoframes.determinism.reading import composition_identity, media_items
from nanoframes.errors import NanoframesError
from nanoframes.lint import lint_file
from nanoframes.model.composition import parse

NS = "http://www.w3.org/2000/svg"
HERE = Path(__file__).resolve().parent
RED, GREEN, BLUE, CLEAR = (255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (0, 0, 0, 0)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


def write(project: Path, body: str, name: str = "r.nf.svg", w: int = 80, h: int = 40,
          root: str = "") -> Path:
    path = project / name
    path.write_text(f'<svg xmlns="{NS}" xmlns:xlink="http://www.w3.org/1999/xlink" '
                    f'data-width="{w}" data-height="{h}" data-fps="10" data-duration="1" '
                    f'{root}>\n{body}\n</svg>')
    return path


def ink_box(px: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(px[:, :, 3])
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def encoded(fmt: str, size=(4, 2), rgb=(255, 0, 0), **kw) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, rgb).save(out, format=fmt, **kw)
    return out.getvalue()


def data_uri(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


# --- item 2: embedded images -----------------------------------------------------------

def test_data_png_and_jpeg_draw(project: Path) -> None:
    png, jpeg = encoded("PNG"), encoded("JPEG", (16, 16), (0, 0, 255), quality=100)
    body = (f'<image href="{data_uri(png)}" x="0" y="0" width="40" height="20"/>'
            f'<image xlink:href="{data_uri(jpeg, "image/jpeg")}" x="40" y="0" width="20" '
            'height="20"/>')
    px = frame(write(project, body))
    assert colour(px, 20, 10) == RED
    r, g, b, a = colour(px, 50, 10)
    assert a == 255 and b > 240 and r < 15 and g < 15  # JPEG: lossy, so near blue
    assert colour(px, 20, 30) == CLEAR


def test_base64_wrapped_over_lines_and_percent_encoded(project: Path) -> None:
    packed = base64.b64encode(encoded("PNG")).decode("ascii")
    wrapped = "\n".join(packed[i:i + 20] for i in range(0, len(packed), 20))
    raw = "".join(f"%{b:02x}" for b in encoded("PNG", rgb=(0, 255, 0)))
    body = (f'<image href="data:image/png;base64,{wrapped}" width="40" height="20"/>'
            f'<image href="data:image/png,{raw}" x="40" width="40" height="20"/>')
    px = frame(write(project, body))
    assert colour(px, 20, 10) == RED and colour(px, 60, 10) == GREEN


def test_data_images_are_media_named_by_position(project: Path) -> None:
    def identity(rgb):
        body = (f'<image href="{data_uri(encoded("PNG"))}" width="4" height="2"/>'
                f'<image href="{data_uri(encoded("PNG", rgb=rgb))}" y="10" width="4" '
                'height="2"/>')
        comp = parse(write(project, body))
        baker = Baker(comp)
        return media_items(comp, baker), composition_identity(comp, baker, load_engine=False)

    items, first = identity((0, 255, 0))
    assert [name for name, _ in items] == ["r.nf.svg#image-1", "r.nf.svg#image-2"]
    items2, second = identity((0, 0, 255))
    assert items2[0] == items[0] and items2[1] != items[1]
    assert second.media != first.media


HUGE_PNG = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
            + struct.pack(">IIBBBBB", 100_000, 100_000, 8, 6, 0, 0, 0) + b"\0" * 4)


def test_data_image_limits_and_bad_data_are_one_line_errors(project: Path) -> None:
    cases = {
        "data:image/png;base64,@@@@": "image-invalid",                 # not base64
        "data:image/png;base64,iVBORw0KGgo=": "image-invalid",         # a PNG cut short
        "data:text/plain,hello": "image-invalid",
        data_uri(HUGE_PNG): "image-too-large",                         # 100000 x 100000
    }
    for i, (href, code) in enumerate(cases.items()):
        path = write(project, f'\n<image href="{href}" width="4" height="4"/>', f"b{i}.nf.svg")
        with pytest.raises(NanoframesError) as err:
            Baker(parse(path))
        assert err.value.code == code, href[:40]
        assert err.value.line == 3 and "\n" not in str(err.value)
        assert "position 1" in err.value.message


def test_gif_and_webp_draw_their_first_frame(project: Path) -> None:
    gif = io.BytesIO()
    frames = [Image.new("RGB", (4, 2), c) for c in ((0, 0, 255), (255, 255, 0))]
    frames[0].save(gif, format="GIF", save_all=True, append_images=frames[1:])
    (project / "a.gif").write_bytes(gif.getvalue())
    webp = encoded("WEBP", (4, 2), (0, 255, 0), lossless=True)
    animated = io.BytesIO()
    frames = [Image.new("RGB", (4, 2), c) for c in ((255, 0, 0), (0, 0, 255))]
    frames[0].save(animated, format="WEBP", save_all=True, append_images=frames[1:],
                   lossless=True)
    body = ('<image href="a.gif" x="0" width="40" height="20"/>'
            f'<image href="{data_uri(webp, "image/webp")}" x="40" width="40" height="20"/>'
            f'<image href="{data_uri(animated.getvalue(), "image/webp")}" y="20" width="40" '
            'height="20"/>')
    px = frame(write(project, body))
    assert colour(px, 20, 10) == BLUE     # the GIF's first frame, not its second (yellow)
    assert colour(px, 60, 10) == GREEN    # a still WebP: ThorVG decodes it
    assert colour(px, 20, 30) == RED      # an animated WebP: its first frame


def test_svg_image_file_draws_through_the_pipeline(project: Path) -> None:
    (project / "icon.svg").write_text(
        f'<svg xmlns="{NS}" width="20" height="10" viewBox="0 0 2 1">'
        '<style>.a { fill: #00ff00 }</style>'
        '<rect class="a" width="1" height="1"/><rect x="1" width="1" height="1" '
        'fill="#0000ff"/></svg>')
    px = frame(write(project, '<image href="icon.svg" x="0" y="0" width="80"/>'))
    assert colour(px, 20, 20) == GREEN and colour(px, 60, 20) == BLUE  # its sheet applies
    assert ink_box(px) == (0, 0, 80, 40)  # width only: height from its aspect ratio


def test_inline_svg_and_unknown_formats_name_the_accepted_ones(project: Path) -> None:
    svg = data_uri(f'<svg xmlns="{NS}" width="2" height="2"/>'.encode(), "image/svg+xml")
    (project / "x.bmp").write_bytes(encoded("BMP"))
    for i, href in enumerate((svg, "x.bmp")):
        with pytest.raises(NanoframesError) as err:
            Baker(parse(write(project, f'<image href="{href}"/>', f"u{i}.nf.svg")))
        assert err.value.code == "image-invalid"
        assert "PNG, JPEG, GIF or WebP" in err.value.message


# --- item 4: faithful rewrites -----------------------------------------------------------

def test_only_presentation_properties_leave_style(project: Path) -> None:
    body = ('<rect id="a" x="0" width="20" style="height:160px; fill:#ff0000"/>'
            '<rect id="b" x="20" width="20" height="20" style="fill:#00ff00; '
            'stroke:#0000ff; stroke-width:4; bogus-prop: 3; r: 9"/>')
    path = write(project, body)
    root = etree.fromstring(Baker(parse(path)).document(0))
    a, b = root.findall(f"{{{NS}}}rect")
    assert a.get("height") is None and a.get("fill") == "#ff0000"
    assert b.get("bogus-prop") is None and b.get("r") is None and b.get("stroke-width") == "4"
    px = frame(path)
    assert not px[:, :16, 3].any()        # no height: nothing draws (the stroke of b aside)
    assert colour(px, 30, 10) == GREEN


@pytest.mark.parametrize(("box", "expected"), [
    ('width="40"', (0, 0, 40, 20)),       # 4x2 picture: height follows
    ('height="10"', (0, 0, 20, 10)),      # width follows
    ("", (0, 0, 4, 2)),                   # neither: its pixel size
    ('width="40" height="40"', (0, 0, 40, 40)),  # both: stretched, as declared
])
def test_one_sided_image_size_keeps_the_aspect_ratio(project: Path, box: str,
                                                     expected: tuple) -> None:
    (project / "a.png").write_bytes(encoded("PNG"))
    px = frame(write(project, f'<image href="a.png" {box}/>'))
    assert ink_box(px) == expected


def test_prefixed_document_is_written_unprefixed(project: Path) -> None:
    path = project / "p.nf.svg"
    path.write_text(
        '<svg:svg xmlns:svg="http://www.w3.org/2000/svg" '
        'xmlns:xlink="http://www.w3.org/1999/xlink" data-width="40" data-height="20" '
        'data-fps="10" data-duration="1">'
        '<svg:defs><svg:rect id="r" width="10" height="10" fill="#00ff00"/></svg:defs>'
        '<svg:rect width="10" height="10" fill="#ff0000"/>'
        '<svg:use xlink:href="#r" x="20"/></svg:svg>')
    doc = Baker(parse(path)).document(0)
    assert b"svg:" not in doc and doc.startswith(b"<svg ")
    px = frame(path)
    assert colour(px, 5, 5) == RED and colour(px, 25, 5) == GREEN


@pytest.mark.parametrize("case", ["use-cycle", "use-root", "use-self"])
def test_cycle_shapes_draw_without_the_cyclic_use(case: str, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / f"{case}.nf.svg"
    path.write_bytes((HERE / "svg_style" / f"{case}.svg.txt").read_bytes())
    out = subprocess.run([sys.executable, "-m", "nanoframes", "render", str(path), "--frame",
                          "0", "-o", str(tmp_path / "f.png")], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert {f.code for f in lint_file(path)} == {"use-cycle"}


def test_cyclic_use_is_skipped_and_the_rest_draws(project: Path) -> None:
    body = ('<g id="a"><rect width="10" height="10" fill="#00ff00"/>'
            '<use href="#a" x="10"/></g>'         # cyclic: skipped
            '<use id="ok" href="#a" x="40"/>')    # uses a group with a cycle inside: draws
    path = write(project, body)
    px = frame(path)
    assert colour(px, 5, 5) == GREEN and colour(px, 45, 5) == GREEN
    assert colour(px, 15, 5) == CLEAR and colour(px, 55, 5) == CLEAR
    found = [f for f in lint_file(path) if f.code == "use-cycle"]
    assert len(found) == 1 and found[0].severity == "warning" and found[0].line == 2
