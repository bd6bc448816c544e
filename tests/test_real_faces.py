"""Real faces draw as their designers made them (issue 41, items 2 and 4).

Faces from Debian font packages that ``.ci/run`` installs: hinted TrueType
(fonts-dejavu-core), Korean (fonts-nanum, whose NanumGothic the old whole-file check
refused for a zero-length ``TSI3``, a hinting source nothing reads), a large CJK
TrueType-outline face (fonts-ipafont-gothic), a ``.ttc`` collection
(fonts-wqy-microhei) and CFF ``.otf`` faces (fonts-courier-prime). Where a package
is missing (no apt-get), its test is skipped and says which package.

Each face ThorVG can draw must pass the check, resolve by its family, and draw with
its own outlines (pixels differ from the fallback's; for a single-face file, equal to
the whole file's); each it cannot draw is refused as a format (``face-format``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from nanoframes.engine.raster import get_rasterizer
from nanoframes.text.faces import face_file, is_collection
from nanoframes.text.fonts import FontBook
from nanoframes.text.sanitize import face_problem
from nanoframes.text.sfnt import read_face

PACKAGES = {
    "fonts-dejavu-core": "/usr/share/fonts/truetype/dejavu",
    "fonts-nanum": "/usr/share/fonts/truetype/nanum",
    "fonts-ipafont-gothic": "/usr/share/fonts/opentype/ipafont-gothic",
    "fonts-wqy-microhei": "/usr/share/fonts/truetype/wqy",
    "fonts-courier-prime": "/usr/share/fonts/opentype/courier-prime",
}
SAMPLE = "AVA Hamburg 0123 한국어 漢字かな"


def _book(package: str) -> FontBook:
    directory = Path(PACKAGES[package])
    if not directory.is_dir() or not any(directory.iterdir()):
        pytest.skip(f"{package} is not installed here ({directory}): .ci/run installs it")
    return FontBook(host_dirs=[directory])


def _text(face) -> str:
    with face.path.open("rb") as fh:
        cmap = read_face(fh, face.index).char_map()
    return "".join(c for c in SAMPLE if c == " " or cmap.has_glyph(ord(c))).strip()


def _draw(name: str, data: bytes, text: str) -> np.ndarray:
    rast = get_rasterizer()
    rast.register_font(name, data)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="480" height="48"><text x="2" '
           f'y="36" font-size="28" font-family="{name}">{text}</text></svg>')
    return np.array(rast.render(svg.encode(), 480, 48))


@pytest.mark.parametrize("package", [p for p in PACKAGES if p != "fonts-courier-prime"])
def test_each_truetype_face_is_a_candidate_and_draws_with_its_own_outlines(
        package: str) -> None:
    book = _book(package)
    faces = [f for f in book.faces if f.origin == "host"]
    assert faces, f"no face of {package} was found"
    fallback = book.default
    fallback_data = face_file(fallback)[0]
    for face in faces:
        assert face_problem(face.path, face.index) is None, face.label
        res = book.resolve(f'"{face.family}"', face.weight, face.style)
        assert not res.fallback and not res.refused and res.face.family == face.family
        text = _text(face)
        assert len(text) >= 4, face.label
        handed = face_file(face)[0]
        mine = _draw(f"real-{face.name}", handed, text)
        assert mine[..., 3].any(), face.label
        assert not np.array_equal(mine, _draw(fallback.name, fallback_data, text)), face.label
        if not is_collection(face.path):  # the drawn copy draws as the whole file does
            whole = _draw(f"whole-{face.name}", face.path.read_bytes(), text)
            assert np.array_equal(mine, whole), face.label


def test_nanum_gothic_draws_though_the_whole_file_check_refused_it() -> None:
    ots = pytest.importorskip("ots")
    book = _book("fonts-nanum")
    path = Path(PACKAGES["fonts-nanum"]) / "NanumGothic.ttf"
    before = subprocess.run([ots.OTS_SANITIZE, str(path)], capture_output=True, timeout=60)
    assert before.returncode != 0 and b"TSI3" in before.stderr  # the old refusal
    res = book.resolve('"NanumGothic"')
    assert not res.fallback and res.face.path == path


def test_each_face_of_a_collection_is_drawn_and_keyed_by_its_index() -> None:
    book = _book("fonts-wqy-microhei")
    faces = [f for f in book.faces if is_collection(f.path)]
    assert len(faces) >= 2  # WenQuanYi Micro Hei and its Mono
    assert [f.label for f in faces] == [f"wqy-microhei.ttc#{n}" for n in range(len(faces))]
    assert len({f.name for f in faces}) == len(faces)
    assert len({face_file(f)[0] for f in faces}) == len(faces)  # each face its own copy
    assert len({face_file(f)[1] for f in faces}) == 1  # the identity hashes the file


def test_cff_faces_are_named_as_a_format_thorvg_does_not_draw() -> None:
    book = _book("fonts-courier-prime")
    assert book.undrawable and not [f for f in book.faces if f.origin == "host"]
    for family in sorted({f.family for f in book.undrawable}):
        res = book.resolve(f'"{family}"')
        assert res.fallback and res.face.origin == "bundled"
        assert len(res.refused) == 1 and res.refused[0].code == "face-format"
        assert "CFF" in res.refused[0].reason and "ThorVG 1.0.4" in res.refused[0].reason
        assert "TrueType-outline" in res.refused[0].reason


def test_a_film_in_a_collection_face_is_keyed_file_ttc_hash_n(tmp_path: Path) -> None:
    import hashlib

    from nanoframes.bake.baker import Baker
    from nanoframes.determinism.reading import font_items
    from nanoframes.model.composition import parse

    book = _book("fonts-wqy-microhei")
    mono = next(f for f in book.faces if is_collection(f.path) and f.index == 1)
    path = tmp_path / "t.nf.svg"
    path.write_text('<svg xmlns="http://www.w3.org/2000/svg" data-width="96" data-height="32" '
                    'data-fps="10" data-duration="0.1"><text x="2" y="24" '
                    f'font-family="{mono.family}">漢字 ok</text></svg>')
    baker = Baker(parse(path, tmp_path), book)
    assert baker.faces() == [mono]
    assert font_items(baker) == [
        ("wqy-microhei.ttc#1", hashlib.sha256(mono.path.read_bytes()).hexdigest())]
