"""Lottie films are films: collected by the project's globs, drawn, recorded, checked
and reported like compositions, through the CLI (a subprocess, as a user runs it),
the pytest plugin (pytester), the ``nf`` fixture and the API. Every verdict here is
made to happen: an edit is ``changed`` with the layer and property named; the same
inputs drawing other pixels (a preloaded libm nudged one ulp) is ``regression``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import lottie_gen as gen
import pytest
import switched_nudge
from scratch_project import nf

import nanoframes
from nanoframes.determinism.selftest import run_one

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "lottie"

PYPROJECT = """\
[tool.nanoframes]
compositions = ["films/*.json", "films/*.lottie", "films/toggle.lottie#on"]
ledger = "digests.json"
{extra}
[tool.pytest.ini_options]
testpaths = ["films", "tests"]
"""


def box(rgb=(1, 0, 0), op: int = 12) -> dict:
    """64x32: a box crossing the canvas in ``op`` frames."""
    layer = gen.shape_layer(position=gen.keyed((0, [4, 16, 0]), (op - 1, [60, 16, 0])),
                            rgb=rgb, op=op)
    return gen.animation([layer], w=64, h=32, op=op)


def with_picture(op: int = 10) -> dict:
    """An image asset (a PNG beside the file, or inside the archive) sliding in."""
    return gen.animation([gen.image_layer("pic", op=op)], w=64, h=32, op=op,
                         assets=[gen.image_asset("pic", "pic.png")])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / "films").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT.format(extra=""))
    (root / "films" / "box.json").write_bytes(gen.dumps(box()))
    shutil.copy(EXAMPLES / "toggle.lottie", root / "films")
    return root


def verdicts(done) -> dict[str, dict]:
    return {v["key"]: v for v in json.loads(done.stdout)["verdicts"]}


# --- one film, two containers; bytes and paths ------------------------------------

def test_the_same_animation_as_json_and_inside_a_lottie_is_one_film(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    doc = gen.dumps(with_picture())
    picture = gen.png(16, 16, (200, 40, 10, 255))
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "pic.png").write_bytes(picture)
    (tmp_path / "pic.json").write_bytes(doc)
    (tmp_path / "pic.lottie").write_bytes(gen.dotlottie(doc, {"pic.png": picture}))
    json_film, archive = nanoframes.load(tmp_path / "pic.json"), \
        nanoframes.load(tmp_path / "pic.lottie")
    assert nanoframes.film_digest(json_film) == nanoframes.film_digest(archive)
    assert nanoframes.identity(json_film) == nanoframes.identity(archive)
    assert nanoframes.identity(json_film).media != "none"
    # the picture draws: another picture is another film
    (tmp_path / "images" / "pic.png").write_bytes(gen.png(16, 16, (10, 40, 200, 255)))
    assert nanoframes.film_digest(tmp_path / "pic.json") != nanoframes.film_digest(archive)


def test_load_takes_lottie_bytes_text_and_paths(project: Path) -> None:
    path = project / "films" / "box.json"
    from_file = nanoframes.film_digest(path)
    data = path.read_bytes()
    assert nanoframes.film_digest(data) == from_file
    assert nanoframes.film_digest(data.decode()) == from_file  # a str starting with {
    assert nanoframes.film_digest(gen.dotlottie(data)) == from_file  # a .lottie's bytes
    film = nanoframes.load(path)
    assert isinstance(film, nanoframes.LottieFilm)
    frame = nanoframes.render_frame(film, 5)
    assert frame.shape == (32, 64, 4)
    assert [f.tobytes() for f in nanoframes.frames(film)][5] == frame.tobytes()
    on = nanoframes.load(f"{project / 'films' / 'toggle.lottie'}#on")
    whole = nanoframes.film_digest(project / "films" / "toggle.lottie").frame_digests
    assert nanoframes.film_digest(on).frame_digests == whole[:on.frame_count]
    assert nanoframes.lint(path) == []


# --- the command line ------------------------------------------------------------

def test_record_check_and_an_edit_named_by_layer_and_property(project: Path) -> None:
    done = nf(project, "digest", "--all", "--record")
    assert done.returncode == 0, done.stderr
    assert "3 added" in done.stdout  # box.json, toggle.lottie, toggle.lottie#on
    done = nf(project, "digest", "--all", "--check", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert {k: v["verdict"] for k, v in verdicts(done).items()} == {
        "films/box.json": "match", "films/toggle.lottie": "match",
        "films/toggle.lottie#on": "match"}
    (project / "films" / "box.json").write_bytes(gen.dumps(box(rgb=(0, 0, 1))))
    done = nf(project, "digest", "--check", "films/box.json")
    out = done.stdout
    assert out.startswith("CHANGED films/box.json: changed, source changed"), out
    # what moved in the source, and in each frame's scene: layer, property, old → new
    assert "layer 'Box' (ind 1): shapes[0].it[1].c.k[0]: 1 → 0" in out
    assert "different scene in every differing frame" in out
    done = nf(project, "digest", "--check", "films/box.json", "--json")
    verdict = verdicts(done)["films/box.json"]
    assert verdict["verdict"] == "changed" and verdict["reasons"] == ["source changed"]
    diff = verdict["scenes"]["diffs"][0]["changes"]
    assert "layer 'Box' (ind 1): shapes[0].it[1].c.k[2]: 0 → 1" in diff
    assert verdict["time_axis"] is not None


def test_a_json_the_globs_name_that_is_not_lottie_is_one_line(project: Path) -> None:
    (project / "films" / "settings.json").write_text('{"theme": "dark"}')
    nf(project, "digest", "--all", "--record")
    done = nf(project, "digest", "--all", "--check")
    assert done.returncode == 2
    line = next(x for x in done.stdout.splitlines() if x.startswith("ERROR"))
    assert line == (f"ERROR films/settings.json: error, {project / 'films' / 'settings.json'}"
                    ": error[lottie-not-lottie]: is JSON but not a Lottie animation (it "
                    "needs w, h, fr, ip, op and layers)")
    assert "Traceback" not in done.stdout + done.stderr
    done = nf(project, "check", "films/settings.json", "films/box.json")
    assert done.returncode == 2 and "error[lottie-not-lottie]" in done.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD: Linux")
@pytest.mark.skipif(switched_nudge.compiler() is None, reason="no C compiler")
def test_the_same_inputs_drawing_other_pixels_is_a_regression(project: Path,
                                                              tmp_path: Path) -> None:
    library = switched_nudge.build(tmp_path)
    shutil.copy(EXAMPLES / "loader.json", project / "films")  # turns: sinf/cosf draw it
    nudge = {"LD_PRELOAD": str(library), "NF_NUDGE_WHEN": "NF_NUDGE_ON"}
    done = nf(project, "digest", "--record", "films/loader.json", **nudge)
    assert done.returncode == 0, done.stderr
    done = nf(project, "digest", "--check", "films/loader.json", "--json", NF_NUDGE_ON="1",
              **nudge)
    assert done.returncode == 1, done.stderr
    verdict = verdicts(done)["films/loader.json"]
    assert verdict["verdict"] == "regression", verdict["line"]
    assert verdict["scenes"]["classification"] == "same scene"
    assert verdict["opinion"]["kind"] == "reproducible"


def test_render_scale_video_and_identity(project: Path) -> None:
    out = project / "out"
    done = nf(project, "render", "films/toggle.lottie", "--frame", "20", "--scale", "0.5",
              "-o", str(out / "f20.png"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out / 'f20.png'} (frame 20 of 60, 160x90)"
    done = nf(project, "render", "films/toggle.lottie#on", "-o", str(out / "on"), "-j", "2")
    assert done.returncode == 0, done.stderr
    pngs = sorted(p.name for p in (out / "on").iterdir())
    assert pngs == [f"{i:05d}.png" for i in range(30)]
    from PIL import Image

    whole = nanoframes.render_frame(project / "films" / "toggle.lottie", 7)
    assert Image.open(out / "on" / "00007.png").tobytes() == whole.tobytes()
    done = nf(project, "video", "films/box.json", "-o", str(out / "box.mp4"))
    assert done.returncode == 0, done.stderr
    assert "(12 frames, 64x32 at 30 fps)" in done.stdout
    done = nf(project, "identity", "films/toggle.lottie", "--json")
    ident = json.loads(done.stdout)
    assert ident["key"] == "films/toggle.lottie"
    assert list(ident["media_files"]) == ["knob"]  # the asset inside the archive
    assert ident["identity"]["fonts"] == "none"


def test_an_excuse_and_accepting_a_pending_reading(project: Path) -> None:
    nf(project, "digest", "--all", "--record")
    (project / "films" / "box.json").write_bytes(gen.dumps(box(rgb=(0, 1, 0))))
    done = nf(project, "digest", "--all", "--check", EXCUSED_COMPOSITIONS="films/box.json")
    assert "EXCUSED films/box.json: changed, source changed" in done.stdout, done.stdout
    done = nf(project, "digest", "--all", "--check")
    assert "CHANGED films/box.json" in done.stdout
    done = nf(project, "accept", "films/box.json")
    assert done.returncode == 0, done.stdout + done.stderr
    done = nf(project, "digest", "--all", "--check")
    assert done.returncode == 0 and "MATCH films/box.json: match" in done.stdout, done.stdout


# --- the self-test -----------------------------------------------------------------

def test_the_self_test_varies_lottie_films(project: Path) -> None:
    result = run_one(project / "films" / "toggle.lottie#on",
                     variations=("reversed-order", "interleaved", "threads-2"), samples=6)
    assert result.ok, "\n".join(result.lines())
    by = {v.name: v for v in result.variations}
    assert len(by["interleaved"].compared) == len(by["reversed-order"].compared) == 6
    assert by["threads-2"].compared == () and "0 engine threads" in by["threads-2"].note


# --- the pytest plugin ---------------------------------------------------------------

# Over 10 s under xdist: a recording and two checks, each a pytest whose two
# workers start and play the Lottie films again.
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_plugin_items_per_film_and_the_nf_fixture(pytester: pytest.Pytester,
                                                  xdist: list[str]) -> None:
    pytester.makefile(".toml", pyproject=PYPROJECT.format(extra=""))
    films = pytester.path / "films"
    films.mkdir()
    (films / "box.json").write_bytes(gen.dumps(box()))
    (films / "data").mkdir()
    (films / "data" / "settings.json").write_text('{"not": "named by a glob"}')
    shutil.copy(EXAMPLES / "toggle.lottie", films)
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "test_fixture.py").write_text(
        "from pathlib import Path\n\n"
        "def test_box(nf):\n"
        "    nf.check(Path(__file__).parent.parent / 'films' / 'box.json')\n\n"
        "def test_bytes(nf):\n"
        "    data = (Path(__file__).parent.parent / 'films' / 'box.json').read_bytes()\n"
        "    nf.check(data, key='box-bytes')\n")
    done = pytester.runpytest_subprocess("--nf-record", "-p", "no:randomly", *xdist,
                                         timeout=600)
    done.assert_outcomes(passed=5)
    done = pytester.runpytest_subprocess("--nf-check", "-p", "no:randomly", "-v", *xdist,
                                         timeout=600)
    done.assert_outcomes(passed=5)
    text = done.stdout.str()
    for node in ("films/box.json::box", "films/toggle.lottie::toggle",
                 "films/toggle.lottie::toggle#on"):
        assert node in text
    assert "settings.json" not in text
    (films / "box.json").write_bytes(gen.dumps(box(rgb=(0, 0, 1))))
    done = pytester.runpytest_subprocess("--nf-check", "-p", "no:randomly", *xdist,
                                         timeout=600)
    done.assert_outcomes(passed=2, xfailed=3)  # the file and both fixture checks


def test_nf_selftest_collects_each_lottie_film(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject=PYPROJECT.format(extra=""))
    films = pytester.path / "films"
    films.mkdir()
    shutil.copy(EXAMPLES / "toggle.lottie", films)
    done = pytester.runpytest_subprocess("--nf-selftest", "--collect-only", "-q",
                                         "-p", "no:randomly", "films", timeout=300)
    lines = [x for x in done.stdout.lines if "::" in x]
    assert lines == ["films/toggle.lottie::selftest[toggle.lottie]",
                     "films/toggle.lottie::selftest[toggle.lottie#on]"]
