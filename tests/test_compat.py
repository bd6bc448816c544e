"""The deliberate differences from other renderers of this format (issue 13, item 4),
each as docs/compositions.md states it, rendered for real."""

from __future__ import annotations

from pathlib import Path

from nanoframes.bake.baker import Baker
from nanoframes.determinism.reading import read_film
from nanoframes.frames.film import Film
from nanoframes.model.composition import parse

SVG = 'xmlns="http://www.w3.org/2000/svg"'


def write(root: Path, name: str, body: str, size: str = 'data-width="120" data-height="60"',
          clock: str = 'data-fps="30" data-duration="4"') -> Path:
    (root / "pyproject.toml").write_text("")
    path = root / name
    path.write_text(f"<svg {SVG} {size} {clock}>{body}</svg>")
    return path


def test_presence_is_half_open(tmp_path: Path) -> None:
    path = write(tmp_path, "p.nf.svg", '<rect id="r" width="10" height="10" fill="#fff" '
                                       'data-start="0.5" data-duration="3"/>')
    baker = Baker(parse(path))
    drawn = [i for i in range(120) if b'id="r"' in baker.document(i)]
    assert drawn == list(range(15, 105)) and len(drawn) == 90


def test_an_unresolvable_family_draws_with_the_bundled_face(tmp_path: Path) -> None:
    text = '<text x="10" y="40" font-size="24" fill="#fff" font-family="{}">Ag</text>'
    missing = Film.open(write(tmp_path, "a.nf.svg", text.format("Nowhere Grotesk")))
    bundled = Film.open(write(tmp_path, "b.nf.svg", text.format("Noto Sans")))
    assert b'font-family="NotoSans-Regular"' in missing.document(0)
    a, b = missing.raster(missing.document(0)).copy(), bundled.raster(bundled.document(0))
    assert a[..., 3].max() == 255 and (a == b).all()


def test_a_fade_multiplies_the_authored_opacity(tmp_path: Path) -> None:
    path = write(tmp_path, "f.nf.svg", '<rect width="120" height="60" fill="#fff" '
                                       'opacity="0.5" data-fade="1"/>')
    film = Film.open(path)
    assert b'opacity="0.25"' in film.document(15)  # t = 0.5: fade 0.5 x authored 0.5
    assert film.raster(film.document(15))[..., 3].max() == 64
    assert b'opacity="0.5"' in film.document(60)  # faded in: the authored opacity stays


def test_nested_compositions_are_drawn_and_digested(tmp_path: Path) -> None:
    child = write(tmp_path, "child.nf.svg", '<rect width="60" height="60" fill="#f00"/>',
                  'data-width="60" data-height="60"', 'data-fps="30" data-duration="1"')
    parent = write(tmp_path, "parent.nf.svg", '<image href="child.nf.svg" width="60" '
                                              'height="60"/>', clock='data-fps="30" '
                                              'data-duration="0.1"')
    film = Film.open(parent)
    frame = film.raster(film.document(0))
    assert (frame[30, 30] == [255, 0, 0, 255]).all() and frame[30, 90, 3] == 0
    before = read_film(parent)
    child.write_text(child.read_text().replace("#f00", "#00f"))
    after = read_film(parent)
    assert after.digest != before.digest
    assert after.identity["source"] != before.identity["source"]
    assert all(a != b for a, b in zip(after.frame_digests, before.frame_digests))
