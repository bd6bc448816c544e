"""Draft and high-density renders (issue 13, item 3): ``--scale F``, rendered for real."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from nanoframes.determinism.reading import film_identity, read_film
from nanoframes.errors import NanoframesError
from nanoframes.frames.cache import FrameCache
from nanoframes.frames.film import Film
from nanoframes.frames.parallel import film_frames
from nanoframes.frames.scale import scaled_size
from nanoframes.frames.through_cache import cached_frame, cached_frames

SVG = 'xmlns="http://www.w3.org/2000/svg"'


def card(k: int) -> str:
    """The same picture authored at k times the size (text laid out by nanoframes)."""
    return (f'<svg {SVG} data-width="{160 * k}" data-height="{90 * k}" data-fps="10" '
            f'data-duration="0.3"><rect width="{160 * k}" height="{90 * k}" fill="#123"/>'
            f'<circle cx="{40 * k}" cy="{45 * k}" r="{25 * k}" fill="#f80"/>'
            f'<text x="{80 * k}" y="{55 * k}" font-size="{18 * k}" fill="#fff" '
            f'text-anchor="middle" data-bg="#08f" data-bg-pad-x="{12 * k}" '
            f'data-bg-pad-y="{8 * k}" data-bg-rx="{10 * k}" data-wrap="{70 * k}">'
            "Hi there, wrapped</text></svg>")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "one.nf.svg").write_text(card(1))
    (tmp_path / "two.nf.svg").write_text(card(2))
    return tmp_path


def test_scale_two_redraws_what_twice_the_size_would_draw(project: Path) -> None:
    scaled = Film.open(project / "one.nf.svg", scale=2)
    authored = Film.open(project / "two.nf.svg")
    assert (scaled.width, scaled.height) == (320, 180)
    a = scaled.raster(scaled.document(0)).copy()
    b = authored.raster(authored.document(0)).copy()
    assert a.shape == b.shape
    # text wrapped and chipped by measurement, vectors at 2x: the same pixels
    assert np.abs(a.astype(int) - b.astype(int)).max() <= 1


def test_sizes_round_half_up_and_limits() -> None:
    assert scaled_size(160, 90, 0.5) == (80, 45)
    assert scaled_size(161, 91, 0.5) == (81, 46)  # 80.5 -> 81, 45.5 -> 46
    assert scaled_size(7, 7, 0.01) == (1, 1)
    for bad in (0.0, -1.0, float("nan"), 17.0):
        with pytest.raises(NanoframesError) as err:
            scaled_size(160, 90, bad)
        assert err.value.code == "scale-invalid"
    with pytest.raises(NanoframesError) as err:
        scaled_size(4096, 4096, 4.5)
    assert err.value.code == "canvas-too-large"


def kept(film: Film, cache: FrameCache):
    """``film``'s frames in ``cache``, keyed as render and video key them."""
    return cache.film_of(film, film_identity(film))


def test_frame_cache_keys_on_the_drawn_size(project: Path, tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / "cache")
    films = [Film.open(project / "one.nf.svg", scale=s) for s in (1, 2, 0.5, 2)]
    one = cached_frame(films[0], 0, kept(films[0], cache))
    two = cached_frame(films[1], 0, kept(films[1], cache))
    half = list(cached_frames(films[2], stored=kept(films[2], cache)))
    assert one.shape == (90, 160, 4) and two.shape == (180, 320, 4)
    assert [f.shape for _, f in half] == [(45, 80, 4)] * 3
    assert cache.stats().entries == 5
    again = cached_frame(films[3], 0, kept(films[3], cache))
    assert (again == two).all() and cache.stats().entries == 5


def test_workers_draw_at_the_scale(project: Path) -> None:
    film = Film.open(project / "one.nf.svg", scale=0.5)
    serial = [f.copy() for _, f in film_frames(film)]
    pooled = [f.copy() for _, f in film_frames(film, jobs=2)]
    assert all((a == b).all() and a.shape == (45, 80, 4) for a, b in zip(serial, pooled))


def test_digest_judges_the_authored_size(project: Path, tmp_path: Path) -> None:
    path = project / "one.nf.svg"
    before = read_film(path).digest
    film = Film.open(path, scale=2)
    cached_frame(film, 0, kept(film, FrameCache(tmp_path / "c2")))
    assert read_film(path).digest == before
    from nanoframes.frames.digest import film_digest, frame_digest

    assert film_digest([frame_digest(f) for _, f in Film.open(path).frames()]) == before


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanoframes", *args], capture_output=True,
                          text=True, timeout=120)


def test_cli_render_and_video_take_scale(project: Path, tmp_path: Path) -> None:
    png = tmp_path / "f.png"
    done = run_cli("render", str(project / "one.nf.svg"), "--frame", "0", "--scale", "2",
                   "-o", str(png), "--no-cache")
    assert done.returncode == 0 and "320x180" in done.stdout
    assert Image.open(png).size == (320, 180)
    mp4 = tmp_path / "f.mp4"
    done = run_cli("video", str(project / "one.nf.svg"), "--scale", "0.5", "-o", str(mp4),
                   "--no-cache")
    assert done.returncode == 0, done.stderr
    with av.open(str(mp4)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (80, 46)  # padded
    bad = run_cli("render", str(project / "one.nf.svg"), "--frame", "0", "--scale", "0",
                  "-o", str(png))
    assert bad.returncode == 2 and "error[scale-invalid]" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
