"""``render -o DIR``: lossless PNGs written by whoever drew them, held frames not
encoded again, and a warm cache that copies PNG bytes instead of encoding."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from nanoframes.cli import main
from nanoframes.determinism.reading import film_identity
from nanoframes.frames import output, png
from nanoframes.frames.cache import FrameCache
from nanoframes.frames.film import Film
from nanoframes.frames.png import decode_png, encode_png
from nanoframes.frames.through_cache import cached_pngs

# 12 frames: the dot moves for 6, then holds; the bar fades in over the last 3
# (so a hold, then changes again): held frames in the middle of the film.
FILM = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="40"
     data-fps="12" data-duration="1">
  <rect width="64" height="40" fill="#102030"/>
  <circle id="dot" cx="6" cy="20" r="5" fill="#ff8800"/>
  <rect id="bar" x="4" y="32" width="56" height="4" fill="#33ccff" opacity="0"/>
  <script type="application/nanoframes+json">
    {"animations": [
      {"target": "#dot", "keyframes": [{"t": 0, "cx": 6}, {"t": 0.5, "cx": 58}]},
      {"target": "#bar", "keyframes": [{"t": 0.75, "opacity": 0}, {"t": 0.95, "opacity": 1}]}
    ]}
  </script>
</svg>
"""


@pytest.fixture()
def comp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NANOFRAMES_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    path = tmp_path / "film.nf.svg"
    path.write_text(FILM)
    return path


def decoded_digests(directory: Path) -> list[str]:
    files = sorted(directory.glob("*.png"))
    return [hashlib.sha256(decode_png(f.read_bytes()).tobytes()).hexdigest() for f in files]


def test_the_encoder_is_lossless_on_every_byte_value() -> None:
    rng = np.random.default_rng(7)
    for shape in ((1, 1, 4), (3, 5, 4), (37, 61, 4)):
        frame = rng.integers(0, 256, size=shape, dtype=np.uint8)
        assert np.array_equal(decode_png(encode_png(frame)), frame)
    assert encode_png(frame) == encode_png(frame.copy())  # same bytes every time


def test_isal_deflates_at_the_level_whose_bytes_repeat() -> None:
    # ISA-L's level 1 deflated some frames differently in about one process in
    # a hundred (a valid stream, the same pixels); level 0 in none of 1,100.
    # Too rare for a test to see: benchmarks/png_repeat.py counts it.
    assert png.LEVEL == (0 if png.ENCODER == "isal" else 1)


def test_renders_in_separate_processes_write_the_same_bytes(comp: Path, tmp_path: Path) -> None:
    outputs = []
    for jobs in ("1", "2", "3"):
        out = tmp_path / f"out-{jobs}"
        subprocess.run([sys.executable, "-m", "nanoframes", "render", str(comp), "-o", str(out),
                        "-j", jobs, "--no-cache"], check=True, cwd=comp.parent,
                       stdout=subprocess.DEVNULL)
        outputs.append({f.name: f.read_bytes() for f in sorted(out.glob("*.png"))})
    assert len(outputs[0]) == 12 and outputs[0] == outputs[1] == outputs[2]


def test_numbered_pngs_left_from_a_longer_render_are_named_and_kept(
        comp: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("00012.png", "00013.png", "notes.png", "cover.jpg"):
        (out / name).write_bytes(b"from before")
    assert main(["render", str(comp), "-o", str(out), "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert err == (f"nanoframes: warning: {out}/ also holds 2 numbered PNG file(s) this "
                   "render did not write (00012.png … 00013.png), left from an earlier "
                   "render: they are not frames of this film\n")
    assert (out / "00013.png").read_bytes() == b"from before", "nothing of the user's removed"
    assert main(["render", str(comp), "-o", str(tmp_path / "clean"), "--no-cache"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("args", [["-j", "1", "--no-cache"], ["-j", "2", "--no-cache"],
                                  ["-j", "2"], ["-j", "1"]])
def test_every_png_decodes_to_the_frame_digest(comp: Path, tmp_path: Path,
                                               args: list[str]) -> None:
    expected = Film.open(comp, comp.parent).digests()
    assert len(set(expected)) < len(expected)  # the film holds frames
    for run in ("first", "second"):  # with the cache: cold, then warm
        out = tmp_path / f"out-{run}"
        assert main(["render", str(comp), "-o", str(out), *args]) == 0
        assert decoded_digests(out) == expected, (args, run)


def test_held_frames_are_not_encoded_again(comp: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[int] = []

    def counting(frame: np.ndarray) -> bytes:
        encoded.append(1)
        return encode_png(frame)

    monkeypatch.setattr(output, "encode_png", counting)
    film = Film.open(comp, comp.parent)
    files = [(i, tmp_path / f"{i:05d}.png") for i in range(film.comp.frame_count)]
    assert sum(cached_pngs(film, files)) == len(files)
    distinct = len(set(Film.open(comp, comp.parent).digests()))
    assert film.rasterized == len(encoded) == distinct < len(files)
    # a held frame's file holds the same bytes, in a file of its own
    a, b = files[7][1], files[8][1]
    assert a.read_bytes() == b.read_bytes() and a.stat().st_ino != b.stat().st_ino
    assert a.stat().st_nlink == 1


class KeptDigests:
    """A PNG store whose pixel check is the frame digest; it keeps only that, by index."""

    def __init__(self) -> None:
        self.digests: dict[int, str] = {}
        self.same_as: dict[int, int | None] = {}
        self.written: dict[int, str | None] = {}

    def pixel_check(self, frame) -> str:
        return hashlib.sha256(frame).hexdigest()

    def put_png(self, index: int, png: bytes, pixels: str, *, written: str | None = None,
                same_as: int | None = None) -> None:
        self.digests[index] = pixels
        self.same_as[index] = same_as
        self.written[index] = written
        assert written is None or Path(written).read_bytes() == png

    def taken(self) -> None:
        return None

    def add(self, taken: None) -> None:
        pass


def test_runs_of_one_film_share_its_held_frames(comp: Path, tmp_path: Path) -> None:
    # A worker writes a film in several runs of frames. Frames 6, 7 and 8 are one
    # held document: split between two runs, it is still drawn once.
    expected = Film.open(comp, comp.parent).digests()
    assert expected[6] == expected[7] == expected[8] != expected[11]
    film = Film.open(comp, comp.parent)
    targets = [(i, str(tmp_path / f"{i:05d}.png")) for i in range(len(expected))]
    assert len(list(output.write_run(film, targets[:8]))) == 8
    assert len(list(output.write_run(film, targets[8:]))) == 4
    assert film.rasterized == len(set(expected))
    assert decoded_digests(tmp_path) == expected
    # A PNG encoded without a store has no pixel check to keep: with a store,
    # the frame is drawn again rather than stored without one.
    kept = KeptDigests()
    again = [(8, str(tmp_path / "again-8.png")), (7, str(tmp_path / "again-7.png"))]
    assert len(list(output.write_run(film, again, kept))) == 2
    assert film.rasterized == len(set(expected)) + 1
    assert kept.digests == {8: expected[8], 7: expected[7]}
    assert kept.same_as == {8: None, 7: 8}  # the held frame names its twin
    # the store is handed the file just written (to link), not for the held frame
    assert kept.written == {8: str(tmp_path / "again-8.png"), 7: None}


def test_a_warm_cache_copies_pngs_and_encodes_nothing(comp: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    film = Film.open(comp, comp.parent)
    cold = [(i, tmp_path / "cold" / f"{i}.png") for i in range(film.comp.frame_count)]
    (tmp_path / "cold").mkdir()
    cache = FrameCache()
    stored = cache.film_of(film, film_identity(film))
    assert sum(cached_pngs(film, cold, stored=stored)) == len(cold)
    assert cache.written == len(cold)

    monkeypatch.setattr(output, "encode_png", lambda frame: pytest.fail("encoded"))
    warm_film = Film.open(comp, comp.parent)
    warm = [(i, tmp_path / "warm" / f"{i}.png") for i in range(film.comp.frame_count)]
    (tmp_path / "warm").mkdir()
    again = FrameCache()
    assert sum(cached_pngs(warm_film, warm,
                           stored=again.film_of(warm_film, film_identity(warm_film)))) == len(warm)
    assert again.hits == len(warm) and again.written == 0 and warm_film.rasterized == 0
    for (_, c), (_, w) in zip(cold, warm):
        assert c.read_bytes() == w.read_bytes()


def test_with_two_jobs_this_process_and_a_worker_share_the_film(
        comp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # -j 2 is two drawing processes: this one from the front, a worker from the
    # back. This process's drawing waits until the worker has written the last
    # frame, so both draw whatever the machine's speed.
    expected = Film.open(comp, comp.parent).digests()
    film = Film.open(comp, comp.parent)
    targets = [(i, str(tmp_path / f"{i:05d}.png")) for i in range(len(expected))]
    last = Path(targets[-1][1])
    drawn_here: list[int] = []
    raster = film.raster

    def after_the_worker(doc: bytes):
        for _ in range(3000):
            if last.exists():
                break
            threading.Event().wait(0.01)
        drawn_here.append(1)
        return raster(doc)

    monkeypatch.setattr(film, "raster", after_the_worker)
    assert sum(output.write_pngs(film, targets, jobs=2)) == len(targets)
    assert last.exists() and 0 < len(drawn_here) < len(set(expected))
    assert decoded_digests(tmp_path) == expected
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]  # no temp left


def test_workers_hand_back_what_they_stored_as_they_go(
        comp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker's task ends after _TASK_S (here: after every frame), so what it
    # kept in the frame cache comes back to the command during the render (an
    # interrupted render keeps it), not only at the end.
    from nanoframes.frames.cached_film import FilmFrames

    monkeypatch.setattr(output, "_TASK_S", 0.0)
    handed_back: list[int] = []
    add = FilmFrames.add
    monkeypatch.setattr(FilmFrames, "add",
                        lambda self, taken: (handed_back.append(len(taken)), add(self, taken)))
    expected = Film.open(comp, comp.parent).digests()
    film = Film.open(comp, comp.parent)
    files = [(i, tmp_path / "out" / f"{i:05d}.png") for i in range(len(expected))]
    (tmp_path / "out").mkdir()
    second_last = files[-2][1]
    raster = film.raster

    def after_two_of_the_workers(doc: bytes):  # the worker draws from the back
        for _ in range(3000):
            if second_last.exists():
                break
            threading.Event().wait(0.01)
        return raster(doc)

    monkeypatch.setattr(film, "raster", after_two_of_the_workers)
    cache = FrameCache()
    assert sum(cached_pngs(film, files, jobs=2,
                           stored=cache.film_of(film, film_identity(film)))) == len(files)
    assert handed_back.count(1) >= 2 and set(handed_back) <= {0, 1}
    assert cache.written == len(files)
    assert decoded_digests(tmp_path / "out") == expected


def test_a_pool_that_failed_to_start_is_the_renders_one_error(comp: Path, tmp_path: Path) -> None:
    from concurrent.futures import Future

    film = Film.open(comp, comp.parent)
    targets = [(i, str(tmp_path / f"{i:05d}.png")) for i in range(film.comp.frame_count)]
    failed: Future = Future()
    failed.set_exception(RuntimeError("no worker could start"))
    with pytest.raises(RuntimeError, match="no worker could start"):
        sum(output.write_pngs(film, targets, jobs=2, booting=failed))
    assert len(list(tmp_path.glob("*.png"))) < len(targets)  # it stopped at once
