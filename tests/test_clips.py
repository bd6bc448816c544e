"""Video clips as media (issue 13, item 2), decoded and rendered for real."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import av
import numpy as np
import pytest

from nanoframes.bake.baker import Baker
from nanoframes.bake.clips import Clip, _decode, _frame_rgba, decoder_parts
from nanoframes.bake.timing import Timing
from nanoframes.config import load_config
from nanoframes.determinism.identity import TOOLCHAIN_PARTS, VIDEO_PARTS, is_linked_part
from nanoframes.determinism.ledger import Entry
from nanoframes.determinism.reading import entry_from_reading, read_film
from nanoframes.determinism.selftest import run_one
from nanoframes.determinism.verdict import judge
from nanoframes.frames.film import Film
from nanoframes.model.composition import parse

ROOT = Path(__file__).resolve().parents[1]
CLIP = ROOT / "examples" / "assets" / "orbit.mp4"  # 96x64, 24 frames at 12 fps
SVG = 'xmlns="http://www.w3.org/2000/svg"'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    shutil.copyfile(CLIP, tmp_path / "orbit.mp4")
    return tmp_path


def write(project: Path, image: str, name: str = "v.nf.svg", fps: int = 12,
          duration: float = 3) -> Path:
    path = project / name
    path.write_text(f'<svg {SVG} data-width="96" data-height="64" data-fps="{fps}" '
                    f'data-duration="{duration}">{image}</svg>')
    return path


def decoded():
    st = CLIP.stat()
    return _decode(CLIP.resolve(), st.st_mtime_ns, st.st_size)


def test_integer_conversion_agrees_with_ffmpeg_within_rounding() -> None:
    with av.open(str(CLIP)) as container:
        for frame in container.decode(video=0):
            ours = _frame_rgba(frame)
            theirs = frame.to_ndarray(format="rgb24")
            assert ours.shape == (64, 96, 4) and (ours[..., 3] == 255).all()
            diff = np.abs(ours[..., :3].astype(int) - theirs.astype(int))
            assert diff.mean() < 2.5 and np.percentile(diff, 99) <= 8


def test_decoded_frames_and_times() -> None:
    d = decoded()
    assert (d.width, d.height, len(d.uris)) == (96, 64, 24)
    assert d.times[:3] == (0, pytest.approx(1 / 12), pytest.approx(2 / 12))
    assert d.length == 2 and len(set(d.uris)) == 24


def clip(**kw) -> Clip:
    return Clip("orbit.mp4", decoded(), Timing(**kw))


def test_time_mapping_holds_and_loops() -> None:
    c = clip(start=0.5)
    assert c.frame_at(0.0) == 0  # before the start: the first frame
    assert c.frame_at(0.5) == 0 and c.frame_at(0.5 + 5 / 12) == 5
    assert c.frame_at(10.0) == 23  # after the end: the last frame holds
    assert clip(in_=1.0, speed=0.5).frame_at(1.0) == 18  # 1 + 1 × 0.5 = 1.5 s
    looping = clip(loop=True)
    assert looping.frame_at(2.0) == 0 and looping.frame_at(2 + 3 / 12) == 3
    assert clip(speed=2.0, loop=True).frame_at(1.5) == 12  # 3 s mod 2 s = 1 s


def test_the_drawn_frame_is_the_clip_frame(project: Path) -> None:
    path = write(project, '<image href="orbit.mp4" width="96" height="64" data-start="0.25"/>')
    film = Film.open(path)
    with av.open(str(CLIP)) as container:
        frames = [_frame_rgba(f) for f in container.decode(video=0)]
    for index, expected in ((0, None), (3, 0), (9, 6), (35, 23)):
        drawn = film.raster(film.document(index)).astype(int)
        if expected is None:  # before data-start: presence, nothing drawn
            assert drawn[..., 3].max() == 0
            continue
        assert np.abs(drawn - frames[expected]).max() <= 1


def test_aspect_and_fade_apply(project: Path) -> None:
    path = write(project, '<image href="orbit.mp4" x="0" y="0" width="96" height="32" '
                          'data-aspect="contain" data-fade="0.5"/>')
    film = Film.open(path)
    doc = film.document(3).decode()
    assert 'width="48"' in doc and 'x="24"' in doc and 'opacity="0.5"' in doc
    alpha = film.raster(film.document(3))[..., 3]
    assert alpha[:, 30:60].max() == 128 and alpha[:, :20].max() == 0


def test_identity_has_the_clip_and_the_decoder(project: Path) -> None:
    video = read_film(write(project, '<image href="orbit.mp4" width="96" height="64"/>'),
                      config=load_config(project))
    still = read_film(write(project, '<rect width="9" height="9"/>', name="s.nf.svg"),
                      config=load_config(project))
    fixed = {n for n in video.toolchain_parts if not is_linked_part(n)}
    assert fixed == set(TOOLCHAIN_PARTS + VIDEO_PARTS)
    assert {n for n in still.toolchain_parts if not is_linked_part(n)} == set(TOOLCHAIN_PARTS)
    assert dict(decoder_parts())["pyav"] == av.__version__
    assert all(len(dict(decoder_parts())[name]) == 64 for name in ("libavcodec", "libswscale"))
    assert video.identity["media"] != "none" and still.identity["media"] == "none"
    # an entry round-trips through the ledger's own validation, video parts included
    entry = entry_from_reading(video)
    assert Entry.from_json("v", entry.to_json()) == entry
    # a different libavcodec is named as the reason when the pixels move
    moved = replace(entry, digest="0" * 64,
                    toolchain_parts={**entry.toolchain_parts, "libavcodec": "f" * 64})
    verdict = judge(video, moved)
    assert verdict.kind.value == "changed" and "toolchain changed (libavcodec)" in verdict.reasons


def test_clip_bytes_move_media(project: Path) -> None:
    path = write(project, '<image href="orbit.mp4" width="96" height="64"/>')
    before = read_film(path, config=load_config(project), samples=2).identity
    data = bytearray((project / "orbit.mp4").read_bytes())
    with av.open(str(CLIP)) as src, av.open(str(project / "orbit.mp4"), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=12)
        stream.width, stream.height, stream.pix_fmt = 96, 64, "yuv420p"
        for n, frame in enumerate(src.decode(video=0)):
            frame = frame.reformat(format="yuv420p")
            frame.pts = n
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    assert (project / "orbit.mp4").read_bytes() != bytes(data)
    after = read_film(path, config=load_config(project), samples=2).identity
    assert after["media"] != before["media"] and after["source"] == before["source"]


def test_a_nested_clip_counts_in_the_parent(project: Path) -> None:
    write(project, '<image href="orbit.mp4" width="96" height="64"/>', name="child.nf.svg")
    parent = write(project, '<image href="child.nf.svg" width="96" height="64"/>')
    assert Baker(parse(parent)).uses_video()


def test_selftest_covers_a_video_composition() -> None:
    result = run_one(ROOT / "examples" / "video-clip.nf.svg", load_config(ROOT), samples=3,
                     per_frame=1,
                     variations=("fresh-process-per-frame", "reversed-order", "pipeline-off"))
    assert result.ok, result.lines()
