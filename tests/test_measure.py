"""Renderer-exact measurement and ``nanoframes measure``, checked against real renders."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from nanoframes.bake.baker import Baker
from nanoframes.cli.measure import measure_runs, register
from nanoframes.engine.raster import get_rasterizer
from nanoframes.errors import NanoframesError
from nanoframes.model.composition import parse
from nanoframes.text.fonts import FontBook
from nanoframes.text.measure import Ink, Measurer, union

W, H = 640, 360


@pytest.fixture(scope="module")
def book() -> FontBook:
    return FontBook(host_dirs=())


def drawn_box(pixels: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(pixels[..., 3])
    assert xs.size, "nothing drawn"
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def within_1px(drawn: tuple, box: tuple[float, float, float, float]) -> bool:
    x, y, w, h = box
    return all(abs(a - b) <= 1.0 for a, b in zip(drawn, (x, y, x + w, y + h)))


@pytest.mark.parametrize("text, size", [
    ("Hello, World", 40), ("jigsaw quay", 27.5), ("x", 16), ("Tyg 0123456789", 72),
    ("Àçcéñts ÿ", 33), ("A & B < C", 24),
])
def test_measured_box_matches_the_drawn_ink(book: FontBook, text: str, size: float) -> None:
    rast = get_rasterizer()
    measurer = Measurer()
    for face in book.faces:  # every bundled face: regular, bold, a display serif
        ink = measurer.ink(face, size, text)
        doc = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
               f'viewBox="0 0 {W} {H}"><text x="37" y="150" font-family="{face.name}" '
               f'font-size="{size}"><![CDATA[{text}]]></text></svg>').encode()
        drawn = drawn_box(rast.render(doc, W, H))
        assert within_1px(drawn, ink.moved(37, 150)), (face.name, drawn, ink)


def test_empty_text_has_an_empty_box(book: FontBook) -> None:
    measurer = Measurer()
    assert measurer.ink(book.default, 20, "").empty
    assert measurer.ink(book.default, 20, "   ").empty
    assert union([Ink(0, 0, 0, 0)]) is None
    assert union([Ink(0, 0, 2, 2), Ink(5, -1, 1, 1)]) == Ink(0, -1, 6, 3)


def test_a_measurer_registers_each_face_once(book: FontBook) -> None:
    measurer = Measurer()
    measurer.ink(book.default, 20, "a")
    measurer.ink(book.default, 30, "b")
    assert measurer._registered == {book.default.name}


def composition(tmp_path: Path) -> Path:
    path = tmp_path / "m.nf.svg"
    path.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" data-width="640" data-height="360" '
        'data-fps="10" data-duration="2">\n'
        '<text id="title" x="320" y="80" font-size="40" text-anchor="middle" '
        'data-bg="#123456">Measure me</text>\n'
        '<g id="mover"><text x="40" y="200" font-size="24" data-wrap="150">'
        'several words wrapped into lines</text></g>\n'
        '<text x="600" y="330" font-size="18" text-anchor="end" '
        'data-frame-text="frame {frame}"/>\n'
        '<text x="10" y="20" data-start="1">late</text>\n'
        '<script type="application/nanoframes+json">{"animations": [{"target": "#mover", '
        '"keyframes": [{"t": 0, "transform": {"translate": [0, 0]}}, '
        '{"t": 1, "transform": {"translate": [100, 50]}}]}]}</script>\n'
        '</svg>\n', encoding="utf-8")
    return path


def test_runs_match_the_rendered_frame(tmp_path: Path) -> None:
    path = composition(tmp_path)
    comp = parse(path)
    baker = Baker(comp)
    runs = measure_runs(path, frame=5)
    assert [r.id for r in runs][:1] == ["title"] and "late" not in [r.text for r in runs]
    wrapped = [r for r in runs if r.source_line == 3]
    assert len(wrapped) >= 2 and [r.run for r in wrapped] == list(range(len(wrapped)))
    assert runs[-1].text == "frame 5"
    # Each run alone, rendered in the same frame's document: its drawn ink is its box.
    doc = baker.document(5)
    rast = get_rasterizer()
    for run in runs:
        assert run.canvas is not None
        solo = _only_run(doc, run.text)
        drawn = drawn_box(rast.render(solo, W, H))
        assert within_1px(drawn, run.canvas), (run, drawn)
    # The animated group moved its lines: half way at 0.5 s.
    assert wrapped[0].canvas[0] == pytest.approx(wrapped[0].box[0] + 50)
    assert wrapped[0].canvas[1] == pytest.approx(wrapped[0].box[1] + 25)


def _only_run(doc: bytes, text: str) -> bytes:
    """The document with every drawn thing but the one text run made transparent."""
    from lxml import etree

    root = etree.fromstring(doc)
    for el in root.iter(etree.Element):
        if el is root or el.tag.endswith("}g"):
            continue
        if not (el.tag.endswith("}text") and "".join(el.itertext()) == text):
            el.set("fill-opacity", "0")
            el.set("stroke-opacity", "0")
    return etree.tostring(root)


def measure_cli(argv: list[str]) -> int:
    """The subcommand through its own parser (the dispatcher adds only error printing)."""
    parser = argparse.ArgumentParser(prog="nanoframes")
    register(parser.add_subparsers())
    args = parser.parse_args(["measure", *argv])
    return args.func(args)


def test_cli_lists_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = composition(tmp_path)
    assert measure_cli([str(path), "--frame", "12"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("#title  NotoSans-Regular  40px  x=")
    assert any(line.startswith("line 3[1]  ") for line in lines)
    assert any(line.startswith("line 5  ") and '"late"' in line for line in lines)
    assert measure_cli([str(path), "--frame", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["id"] == "title" and rows[0]["face"] == "NotoSans-Regular"
    assert rows[0]["size"] == 40 and set(rows[0]["box"]) == {"x", "y", "width", "height"}
    assert rows[-1]["text"] == "frame 3" and rows[-1]["line"] == 4


def test_cli_refuses_a_frame_outside_the_film(tmp_path: Path) -> None:
    with pytest.raises(NanoframesError) as err:
        measure_cli([str(composition(tmp_path)), "--frame", "20"])
    assert err.value.code == "frame-range"
