"""A file edited while its film is drawn: never a film drawn partly from each version.

Worker processes read a composition's files again (the composition, its images,
its faces). If one is edited between the command's reading (the identity) and a
worker's, the frames would come from two versions, and a check would call the
difference a regression although the source moved. Each worker task returns
the versions it drew from (``Film.inputs``); the caller compares them with its
own and reports ``input-changed`` instead. Workers forked for one render draw
the film as the command read it, so there is nothing to compare there.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from nanoframes.config import load_config
from nanoframes.determinism import sweep
from nanoframes.determinism.ledger import read_ledger
from nanoframes.errors import NanoframesError
from nanoframes.frames import parallel as film_module
from nanoframes.frames import workers
from nanoframes.frames.film import Film
from nanoframes.frames.output import read_png_rgba, write_pngs
from nanoframes.frames.parallel import film_digests

BUNDLED = Path(__file__).resolve().parent.parent / "fonts"

SLIDE = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="36"
     data-fps="12" data-duration="1">
  <rect width="64" height="36" fill="#203040"/>
  <image href="spot.png" x="40" y="4" width="8" height="8"/>
  <rect id="box" x="2" y="10" width="12" height="12" fill="#ffaa00"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#box",
      "keyframes": [{"t": 0, "x": 2}, {"t": 0.5, "x": 50}]}]}
  </script>
</svg>
"""

TITLE = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="96" data-height="36"
     data-fps="12" data-duration="0.5">
  <text id="t" x="4" y="26" font-family="Edit Sans" font-size="20" fill="#fff">Hi</text>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#t", "keyframes": [{"t": 0, "x": 4}, {"t": 0.4, "x": 30}]}]}
  </script>
</svg>
"""


def project(root: Path) -> Path:
    """A project with one moving-box composition that draws an image; its path."""
    (root / "pyproject.toml").write_text('[tool.nanoframes]\ncompositions = ["*.nf.svg"]\n')
    Image.new("RGBA", (4, 4), (0, 200, 120, 255)).save(root / "spot.png")
    comp = root / "slide.nf.svg"
    comp.write_text(SLIDE)
    return comp


def edit(comp: Path) -> None:
    comp.write_text(comp.read_text().replace("#ffaa00", "#00aaff"))


def test_a_composition_edited_after_it_was_read_is_refused_by_the_workers(
        tmp_path: Path) -> None:
    comp = project(tmp_path)
    film = Film.open(comp, tmp_path)
    film.inputs()  # as read for the identity
    edit(comp)
    with pytest.raises(NanoframesError) as caught:
        film_digests(film, jobs=2)
    assert caught.value.code == "input-changed"
    assert str(caught.value).startswith(f"{comp}: error[input-changed]: slide.nf.svg changed")


def test_an_image_edited_after_it_was_read_is_named(tmp_path: Path) -> None:
    comp = project(tmp_path)
    film = Film.open(comp, tmp_path)
    film.inputs()
    Image.new("RGBA", (4, 4), (250, 0, 0, 255)).save(tmp_path / "spot.png")
    with pytest.raises(NanoframesError, match=r"error\[input-changed\]: spot\.png changed"):
        film_digests(film, jobs=2)


def test_unchanged_files_give_the_workers_digests(tmp_path: Path) -> None:
    comp = project(tmp_path)
    film = Film.open(comp, tmp_path)
    assert film_digests(film, jobs=2) == Film.open(comp, tmp_path).digests()


def renamed_face(source: Path, family: str) -> bytes:
    """A bundled face's bytes with its family renamed (same length): a family only
    the project's font directory has, so the project's face is the one drawn."""
    data = source.read_bytes()
    for encoding in ("utf-16-be", "latin-1"):
        data = data.replace("Noto Sans".encode(encoding), family.encode(encoding))
    return data


def test_a_face_replaced_before_it_is_drawn_is_an_error_here_too(tmp_path: Path) -> None:
    """In one process: the face as read for the identity is the face registered."""
    (tmp_path / "fonts").mkdir()
    # a stem of its own: ThorVG's face registry is per process, and other tests share it
    face = tmp_path / "fonts" / f"EditedSans{os.getpid()}.ttf"
    face.write_bytes(renamed_face(BUNDLED / "NotoSans-Regular.ttf", "Edit Sans"))
    (tmp_path / "pyproject.toml").write_text('[tool.nanoframes]\nfont-dirs = ["fonts"]\n')
    comp = tmp_path / "title.nf.svg"
    comp.write_text(TITLE)
    film = Film.open(comp, tmp_path)
    assert [f.path for f in film.baker.faces()] == [face.resolve()]
    film.inputs()  # as read for the identity
    face.write_bytes(renamed_face(BUNDLED / "NotoSans-Bold.ttf", "Edit Sans"))
    os.utime(face, ns=(1, 1))  # a new file version whatever the clock's resolution
    with pytest.raises(NanoframesError, match=r"error\[input-changed\]: fonts/EditedSans"):
        film.raster(film.document(0))


def test_a_sweep_over_a_file_edited_while_workers_draw_it_is_an_error_not_a_regression(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    comp = project(tmp_path)
    config = load_config(tmp_path)
    recorded = sweep.record([], config=config, jobs=1)
    assert recorded.exit_status == 0 and recorded.written
    ledger_bytes = config.ledger_path.read_bytes()
    queue = sweep._queue

    def edit_then_queue(*args, **kwargs):
        edit(comp)  # after this process parsed it, before any worker does
        return queue(*args, **kwargs)

    monkeypatch.setattr(sweep, "_queue", edit_then_queue)
    checked = sweep.check([], config=config, jobs=2)
    (verdict,) = checked.verdicts
    assert verdict.kind.value == "error", verdict
    assert "error[input-changed]: slide.nf.svg changed while the film was being drawn" \
        in verdict.error
    assert checked.exit_status == 2

    comp.write_text(SLIDE)
    recorded = sweep.record([], config=config, jobs=2)
    assert [v.kind.value for v in recorded.errors] == ["error"]
    assert config.ledger_path.read_bytes() == ledger_bytes, "nothing recorded from two versions"
    assert read_ledger(config.ledger_path).entries


def test_a_render_over_forkserver_workers_refuses_a_file_edited_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    comp = project(tmp_path)
    film = Film.open(comp, tmp_path)
    monkeypatch.setattr(workers, "can_fork", lambda: False)  # as on macOS
    booting = film_module.pool_for(film, 1)  # takes the film's inputs first
    booting.result()  # up: it takes frames from the first one
    edit(comp)
    targets = [(i, str(tmp_path / "out" / f"{i:05d}.png")) for i in range(12)]
    (tmp_path / "out").mkdir()
    with pytest.raises(NanoframesError, match=r"error\[input-changed\]: slide\.nf\.svg"):
        for _ in write_pngs(film, targets, jobs=2, booting=booting):
            pass


FORKED = textwrap.dedent("""
    import sys
    from pathlib import Path

    from nanoframes.frames import workers
    from nanoframes.frames.film import Film
    from nanoframes.frames.parallel import pool_for
    from nanoframes.frames.output import write_pngs

    comp, out = Path(sys.argv[1]), Path(sys.argv[2])
    film = Film.open(comp, comp.parent)
    assert workers.can_fork(), "a fresh process with one thread may fork"
    booting = pool_for(film, 1)  # forked now: the worker has this film as read
    comp.write_text(comp.read_text().replace("#ffaa00", "#00aaff"))
    out.mkdir()
    targets = [(i, str(out / f"{i:05d}.png")) for i in range(film.comp.frame_count)]
    for _ in write_pngs(film, targets, jobs=2, booting=booting):
        pass
    print("ok")
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="render workers are forked on Linux only (workers.can_fork)")
def test_a_forked_render_draws_the_film_as_the_command_read_it(tmp_path: Path) -> None:
    comp = project(tmp_path)
    expected = Film.open(comp, tmp_path).digests()
    script = tmp_path / "forked.py"
    script.write_text(FORKED)
    done = subprocess.run([sys.executable, str(script), str(comp), str(tmp_path / "out")],
                          env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    got = [hashlib.sha256(read_png_rgba(p)).hexdigest()
           for p in sorted((tmp_path / "out").glob("*.png"))]
    assert got == expected, "every frame from the version read before the edit"
