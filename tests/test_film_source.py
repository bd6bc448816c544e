"""Film sources (frames/source.py): what the layers above ``frames`` see of a film,
whatever its format. A composition and a Lottie film both draw through ``Film``;
the addresses (``film.json#marker``), the configured globs and a directory on the
command line name the same films; a source that draws on one canvas of its own is
never pipelined."""

from __future__ import annotations

import sys
from pathlib import Path

import lottie_gen as gen
import pytest

from nanoframes.config import glob_compositions, load_config
from nanoframes.determinism.reading import film_items, film_toolchain, source_identity
from nanoframes.determinism.sweep import collect, configured_films
from nanoframes.errors import NanoframesError
from nanoframes.frames.film import Film
from nanoframes.frames.lottie_film import LottieFilm
from nanoframes.frames.source import (
    CompositionSource,
    FilmSource,
    as_source,
    is_film_name,
    open_parsed,
    split_marker,
)
from nanoframes.model.composition import Composition

ROOT = Path(__file__).resolve().parent.parent
TINY = (ROOT / "examples" / "countdown.nf.svg")

PYPROJECT = """\
[tool.nanoframes]
compositions = ["films/*.nf.svg", "films/[am].json", "films/m.json#press"]
ledger = "digests.json"
"""


def moving(op: int, **kwargs) -> bytes:
    """64x32: a 40x40 box crossing the canvas, one pixel column or more per frame."""
    layer = gen.shape_layer(position=gen.keyed((0, [4, 16, 0]), (op - 1, [60, 16, 0])), op=op)
    return gen.dumps(gen.animation([layer], w=64, h=32, op=op, **kwargs))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    films = tmp_path / "films"
    films.mkdir()
    (films / "box.nf.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" data-width="32" data-height="32" '
        'data-fps="4" data-duration="1"><rect id="b" width="8" height="8" fill="#c00"/>'
        '<script type="application/nanoframes+json">{"animations": [{"target": "#b", '
        '"keyframes": [{"t": 0, "x": 0}, {"t": 1, "x": 24}]}]}</script></svg>')
    (films / "a.json").write_bytes(moving(12))
    (films / "m.json").write_bytes(moving(24, markers=[("press", 6, 8), ("release", 14, 6)]))
    (films / "data.json").write_bytes(b'{"not": "a film"}')  # not named by any glob
    (films / "notes.json").write_bytes(b'{"not": "a film"}')
    return tmp_path


def test_each_format_opens_as_its_own_source(project: Path) -> None:
    comp = open_parsed(project / "films" / "box.nf.svg", project)
    lottie = open_parsed(project / "films" / "a.json", project)
    assert isinstance(comp, Composition) and isinstance(lottie, LottieFilm)
    assert isinstance(as_source(comp), CompositionSource)
    assert as_source(lottie) is lottie
    for source in (as_source(comp), lottie):
        assert isinstance(source, FilmSource)
    assert (as_source(comp).kind, lottie.kind) == ("composition", "lottie")
    assert (lottie.width, lottie.height, lottie.frame_count) == (64, 32, 12)
    assert lottie.pipelined and as_source(comp).pipelined


def test_a_film_of_either_format_draws_through_film(project: Path) -> None:
    for name, count in (("box.nf.svg", 4), ("a.json", 12)):
        film = Film.open(project / "films" / name, project)
        digests = film.digests()
        assert len(digests) == count == len(film.scenes)
        assert len(set(digests)) == count  # the box moves: every frame differs
        again = [f.tobytes() for _, f in Film.open(project / "films" / name,
                                                   project).frames()]
        import hashlib
        assert [hashlib.sha256(b).hexdigest() for b in again] == digests


def test_a_composition_film_keeps_its_composition_and_baker(project: Path) -> None:
    film = Film.open(project / "films" / "box.nf.svg", project)
    assert isinstance(film.comp, Composition)
    assert film.baker is film.source.baker
    assert film.document(2) == film.baker.document(2)


def test_the_identity_of_either_source_is_read_through_one_function(project: Path) -> None:
    comp = Film.open(project / "films" / "box.nf.svg", project)
    lottie = Film.open(project / "films" / "a.json", project)
    from nanoframes.determinism.reading import composition_identity

    assert source_identity(comp.source) == composition_identity(comp.comp, comp.baker)
    ident = source_identity(lottie.source)
    assert ident.source == lottie.source.lottie.identity_parts()["source"]
    assert (ident.media, ident.fonts) == ("none", "none")
    assert film_toolchain(lottie.source) == film_toolchain(comp.source)  # no video, no extra
    assert film_items(lottie.source) == ([], [], {})


def test_a_marker_address_names_a_film_of_its_own(project: Path) -> None:
    file = project / "films" / "m.json"
    assert split_marker(f"{file}#press") == (file, "press")
    assert split_marker(file) == (file, None)
    press = open_parsed(f"{file}#press", project)
    assert press.path == Path(f"{file}#press") and press.frame_count == 8
    whole = Film.open(file, project).digests()
    assert Film.open(f"{file}#press", project).digests() == whole[6:14]
    with pytest.raises(NanoframesError) as err:
        open_parsed(f"{file}#nope", project)
    assert err.value.code == "lottie-marker"


def test_a_file_whose_name_holds_a_hash_is_that_file(tmp_path: Path) -> None:
    odd = tmp_path / "a#b.json"
    odd.write_bytes(gen.dumps(gen.animation(op=4)))
    assert split_marker(odd) == (odd, None)
    assert open_parsed(odd, tmp_path).frame_count == 4
    assert split_marker(tmp_path / "x.nf.svg#m") == (tmp_path / "x.nf.svg#m", None)


def test_the_globs_and_a_directory_name_the_same_films(project: Path) -> None:
    config = load_config(project)
    films = project / "films"
    expected = [films / "a.json", films / "box.nf.svg", films / "m.json",
                films / "m.json#press"]
    assert sorted(glob_compositions(config)) == sorted(expected)
    keys = [p.relative_to(project).as_posix() for p in collect([], config)]
    assert keys == ["films/a.json", "films/box.nf.svg", "films/m.json", "films/m.json#press"]
    # a directory named holds its compositions and the Lottie files the globs name:
    # data.json and notes.json are not films
    named = [p.relative_to(project).as_posix() for p in collect([films], config)]
    assert named == ["films/a.json", "films/box.nf.svg", "films/m.json", "films/m.json#press"]
    assert configured_films(config) == {
        (films / "a.json").resolve(): [films / "a.json"],
        (films / "m.json").resolve(): [films / "m.json", films / "m.json#press"]}
    assert is_film_name(films / "a.json") and not is_film_name(films / "box.svg")


def test_a_json_that_is_not_lottie_is_one_line(project: Path) -> None:
    with pytest.raises(NanoframesError) as err:
        open_parsed(project / "films" / "data.json", project)
    assert err.value.code == "lottie-not-lottie"
    assert str(err.value).startswith(f"{project / 'films' / 'data.json'}: error[")


def test_a_lottie_film_gives_the_same_digests_pipelined_or_serial(project: Path) -> None:
    """The player draws on one canvas and copies each frame into the slot the digest
    pipeline hashes while the next frame draws (decision 0121)."""
    serial = Film.open(project / "films" / "m.json", project)
    serial.draw_thread = False
    piped = Film.open(project / "films" / "m.json", project)
    piped.draw_thread = True
    assert piped.digests() == serial.digests()


@pytest.mark.skipif(sys.platform == "win32", reason="paths")
def test_a_composition_and_a_lottie_film_share_one_worker(project: Path) -> None:
    from nanoframes.frames.parallel import film_digests
    from nanoframes.frames.workers import worker_pool

    films = [Film.open(project / "films" / n, project) for n in ("box.nf.svg", "m.json#press",
                                                                  "a.json")]
    here = [f.digests() for f in films]
    with worker_pool(1, project) as pool:
        there = [film_digests(Film.open(f.source.path, project), pool=pool) for f in films]
    assert there == here


def test_a_lottie_scene_is_what_the_player_is_handed(project: Path) -> None:
    """The scene of a Lottie frame: the document ThorVG loads and the frame it draws;
    its SHA-256 is the frame's scene digest, and ``nanoframes svg`` prints it."""
    import hashlib

    from scratch_project import nf

    film = Film.open(project / "films" / "m.json#press", project)
    film.digests()
    lottie = film.source.lottie
    for i in (0, 7):
        scene = film.document(i)
        assert scene == lottie.document + b"\n#frame=%r\n" % float(6 + i)
        assert film.scenes[i] == hashlib.sha256(scene).hexdigest()
    done = nf(project, "svg", "films/m.json#press", "--frame", "7")
    assert done.returncode == 0, done.stderr
    assert done.stdout.encode() == film.document(7) + b"\n"
