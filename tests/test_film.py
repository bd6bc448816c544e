"""Films: frame order, worker processes (never fork), de-duplication of held frames."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from nanoframes.frames.digest import frame_digest
from nanoframes.frames.film import Film
from nanoframes.frames.parallel import chunks, film_digests, film_frames
from nanoframes.frames.workers import pool_context, spare_threads, worker_pool

NS = "http://www.w3.org/2000/svg"
TIMELINE = 'type="application/nanoframes+json"'

# 12 frames: a moving, recolouring square, text, a fade and a held stretch (frames 7-10).
BODY = f"""
<rect width="48" height="32" fill="#101820"/>
<rect id="box" x="2" y="2" width="10" height="10" fill="#ff0000"/>
<text x="2" y="28" font-size="10" data-start="0.2" data-fade="0.2">A &amp; B</text>
<script {TIMELINE}>{{"animations": [{{"target": "#box", "keyframes": [
  {{"t": 0, "fill": "#ff0000", "transform": {{"translate": [0, 0]}}}},
  {{"t": 0.7, "fill": "#0000ff80", "transform": {{"translate": [30, 10]}},
   "ease": "ease-in-out"}}]}}]}}</script>
"""


@pytest.fixture(scope="module")
def comp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("film")
    (root / "pyproject.toml").write_text("")
    path = root / "moving.nf.svg"
    # 1.2 s at 10 fps; the fade-out over the film's last 0.2 s starts at t = 1.0, so the
    # held stretch is frames 7-10 (the text is fully faded in and the box has arrived)
    path.write_text(f'<svg xmlns="{NS}" data-width="48" data-height="32" data-fps="10" '
                    f'data-duration="1.2">{BODY}</svg>')
    return path


@pytest.fixture(scope="module")
def serial(comp_path: Path) -> list[bytes]:
    film = Film.open(comp_path)
    return [frame.tobytes() for _, frame in film.frames()]


def test_frames_in_order_and_distinct(comp_path: Path, serial: list[bytes]) -> None:
    film = Film.open(comp_path)
    assert film.comp.frame_count == 12 == len(serial)
    assert [i for i, _ in film.frames()] == list(range(12))
    assert len(set(serial[:8])) == 8  # moving frames all differ
    assert serial[7] == serial[8] == serial[9] == serial[10]  # held
    assert serial[11] != serial[10]  # fading out before the film's end


def test_workers_never_fork() -> None:
    assert pool_context().get_start_method() in ("spawn", "forkserver")


def test_jobs_2_digests_identical_to_jobs_1(comp_path: Path, serial: list[bytes]) -> None:
    film = Film.open(comp_path)
    one = film_digests(film, jobs=1)
    assert one == [hashlib.sha256(f).hexdigest() for f in serial]
    with worker_pool(2) as pool:
        assert film_digests(film, jobs=2, pool=pool) == one
        assert film_digests(film, [11, 3, 3, 0], jobs=2, pool=pool) == [one[i] for i in
                                                                        (11, 3, 3, 0)]


@pytest.mark.parametrize("pipeline", [True, False])
def test_workers_digests_identical_with_or_without_their_pipeline(
        comp_path: Path, serial: list[bytes], pipeline: bool) -> None:
    # Workers pipeline where each has two CPUs to itself (workers.spare_threads):
    # forced here both ways, since this machine may have too few CPUs to choose it.
    film = Film.open(comp_path)
    with worker_pool(2, pipeline=pipeline) as pool:
        probe = "__import__('nanoframes.frames.workers').frames.workers.threads_to_spare"
        assert pool.submit(eval, probe).result() is pipeline  # the worker really runs that way
        assert film_digests(film, jobs=2, pool=pool) == [hashlib.sha256(f).hexdigest()
                                                         for f in serial]


def test_spare_threads_needs_two_cpus_per_worker(monkeypatch) -> None:
    from nanoframes.frames import workers

    monkeypatch.setattr(workers, "available_cpus", lambda: 4)  # this process's CPUs
    monkeypatch.setattr(workers, "_sharing", 1)  # not an xdist worker sharing them
    assert spare_threads(2) and not spare_threads(3)


def test_a_prestarted_pool_is_taken_once_and_discarded_if_unused() -> None:
    from nanoframes.frames import workers

    workers.prestart(2)
    pool = workers.worker_pool(2)
    try:
        assert pool.submit(int, "7").result() == 7
        assert 2 not in workers._prestarted  # taken: the next caller gets a new pool
    finally:
        pool.shutdown()
    workers.prestart(2)
    workers.discard_prestarted()
    assert not workers._prestarted


def test_stopping_a_pool_ends_the_worker_drawing_and_the_pool_thread() -> None:
    """An interrupted session stops its drawing pool at once: the worker still
    busy is ended, and no thread of the pool is left to race the interpreter's
    exit for its wake-up pipe ("OSError: [Errno 9] Bad file descriptor")."""
    import time

    from nanoframes.frames.workers import stop_pool

    pool = worker_pool(1)
    busy = pool.submit(time.sleep, 600)  # a film being drawn, as far as the pool knows
    processes, manager = list(pool._processes.values()), pool._executor_manager_thread
    stop_pool(pool)
    assert processes and not any(p.is_alive() for p in processes)
    assert manager is not None and not manager.is_alive()
    assert busy.done()


def test_jobs_2_frames_identical_to_jobs_1(comp_path: Path, serial: list[bytes]) -> None:
    film = Film.open(comp_path)
    got = [(i, frame.tobytes()) for i, frame in film_frames(film, jobs=2)]
    assert [i for i, _ in got] == list(range(12))
    assert [data for _, data in got] == serial


def test_chunks_are_contiguous_and_complete() -> None:
    for n in (1, 5, 12, 97):
        for jobs in (1, 2, 3, 8):
            parts = chunks(list(range(n)), jobs)
            assert [i for part in parts for i in part] == list(range(n))
            assert all(part == list(range(part[0], part[-1] + 1)) for part in parts)
    assert chunks([], 2) == []


def test_dedup_rasterizes_held_documents_once(comp_path: Path, serial: list[bytes]) -> None:
    film = Film.open(comp_path)
    frames = [(i, f.tobytes()) for i, f in film.frames()]
    assert [data for _, data in frames] == serial
    assert film.rasterized == 9  # 12 frames, 3 of them held copies of frame 7
    digests = Film.open(comp_path)
    assert digests.digests() == [hashlib.sha256(f).hexdigest() for f in serial]
    assert digests.rasterized == 9
    plain = Film.open(comp_path, dedup=False)
    assert [hashlib.sha256(f).hexdigest() for f in serial] == plain.digests()
    assert plain.rasterized == 12


def test_static_film_is_one_raster(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "still.nf.svg"
    path.write_text(f'<svg xmlns="{NS}" data-width="8" data-height="8" data-duration="1">'
                    '<rect width="4" height="4" fill="#abcdef"/></svg>')
    film = Film.open(path)
    frames = list(film.frames())
    assert len(frames) == 30 and film.rasterized == 1
    first = frames[0][1]
    assert not first.flags.writeable  # shared between held frames: read-only
    assert all(np.array_equal(f, first) for _, f in frames)
    assert frame_digest(first) == hashlib.sha256(first.tobytes()).hexdigest()


@pytest.mark.parametrize("name", ["spinner-loop", "bar-chart", "nested-grid"])
def test_the_threaded_pipeline_gives_the_serial_digests(name: str) -> None:
    """Bake | draw on two alternating canvases | hash: the same bytes as one thread
    doing all three, held frames (de-duplication) included."""
    path = Path(__file__).resolve().parents[1] / "examples" / f"{name}.nf.svg"
    threaded, serial = Film.open(path), Film.open(path)
    threaded.draw_thread, serial.draw_thread = True, False
    assert threaded.digests() == serial.digests()
    undeduplicated = Film.open(path, dedup=False)
    undeduplicated.draw_thread = True
    assert undeduplicated.digests() == serial.digests()
