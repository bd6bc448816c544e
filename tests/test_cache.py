"""The frame cache, for real: entries on disk, verified on read, shared by processes."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from nanoframes.checksum import crc32
from nanoframes.cli import main
from nanoframes.determinism import cache as cache_mod
from nanoframes.determinism.cache import (
    HEADER_SIZE,
    FrameCache,
    cached_frame,
    cached_frames,
    cached_pngs,
    film_identity,
    frame_key,
)
from nanoframes.determinism.reading import read_film
from nanoframes.frames.film import Film
from nanoframes.frames.output import read_png_rgba

# 6 frames, 40x24, each different, then a held last frame.
SLIDE = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="6" data-duration="1">
  <rect width="40" height="24" fill="#102030"/>
  <circle id="dot" cx="4" cy="12" r="4" fill="#ff8800"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#dot",
      "keyframes": [{"t": 0, "cx": 4}, {"t": 0.6667, "cx": 36}]}]}
  </script>
</svg>
"""


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("NANOFRAMES_CACHE_DIR", str(d))
    monkeypatch.delenv("NANOFRAMES_CACHE_MAX_MB", raising=False)
    return d


@pytest.fixture()
def comp(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    path = tmp_path / "slide.nf.svg"
    path.write_text(SLIDE)
    return path


def fresh(path: Path) -> list[np.ndarray]:
    film = Film.open(path, path.parent)
    return [f.copy() for _, f in film.frames()]


def entry_paths(d: Path) -> list[Path]:
    return sorted((d / "frames").glob("*/*.png-entry"))


def test_the_directory_comes_from_the_environment(cache_dir: Path) -> None:
    assert cache_mod.cache_dir() == cache_dir
    assert FrameCache().root == cache_dir


def test_the_key_covers_identity_frame_and_size() -> None:
    ident = {"source": "a" * 64, "media": "none", "fonts": "none", "toolchain": "b" * 64}
    k = frame_key(ident, 3, 40, 24)
    assert k == frame_key(dict(reversed(list(ident.items()))), 3, 40, 24)
    for other in (frame_key({**ident, "source": "c" * 64}, 3, 40, 24),
                  frame_key({**ident, "toolchain": "c" * 64}, 3, 40, 24),
                  frame_key({**ident, "fonts": "c" * 64}, 3, 40, 24),
                  frame_key({**ident, "media": "c" * 64}, 3, 40, 24),
                  frame_key(ident, 4, 40, 24), frame_key(ident, 3, 24, 40)):
        assert other != k


def test_render_fills_the_cache_and_reads_it_back(cache_dir: Path, comp: Path) -> None:
    expected = fresh(comp)
    film = Film.open(comp, comp.parent)
    c = FrameCache()
    first = [(i, f.copy()) for i, f in cached_frames(film, cache=c)]
    assert [i for i, _ in first] == list(range(6))
    assert c.written == 6 and c.hits == 0
    assert len(entry_paths(cache_dir)) == 6

    film2 = Film.open(comp, comp.parent)
    c2 = FrameCache()
    second = list(cached_frames(film2, cache=c2))
    assert c2.hits == 6 and c2.written == 0
    assert film2.rasterized == 0  # nothing was drawn
    for (i, a), (_, b), e in zip(first, second, expected):
        assert np.array_equal(a, e) and np.array_equal(b, e), i


def test_worker_processes_fill_the_cache_too(cache_dir: Path, comp: Path) -> None:
    film = Film.open(comp, comp.parent)
    c = FrameCache()
    got = [(i, f.copy()) for i, f in cached_frames(film, [5, 0, 3], jobs=2, cache=c)]
    assert [i for i, _ in got] == [5, 0, 3]
    expected = fresh(comp)
    assert all(np.array_equal(f, expected[i]) for i, f in got)
    assert c.written == 3


@pytest.mark.parametrize("damage", ["truncate", "flip-payload", "flip-header", "flip-digest",
                                    "empty", "other-key", "older-format", "other-pixels"])
def test_damaged_entries_are_detected_and_rendered_again(cache_dir: Path, comp: Path,
                                                          damage: str) -> None:
    expected = fresh(comp)
    film = Film.open(comp, comp.parent)
    list(cached_frames(film, cache=FrameCache()))
    ident = film_identity(film)
    victim = FrameCache().path(frame_key(ident, 2, 40, 24))
    data = bytearray(victim.read_bytes())
    if damage == "truncate":
        data = data[:-7]
    elif damage == "flip-payload":
        data[HEADER_SIZE + (len(data) - HEADER_SIZE) // 2] ^= 0x01
    elif damage == "flip-digest":  # a whole PNG, but not of this frame's pixels
        data[48] ^= 0x01  # the pixels' CRC-32
    elif damage == "older-format":  # NFCACHE2 kept SHA-256s where CRC-32s now are
        data[:8] = b"NFCACHE2"
    elif damage == "other-pixels":  # frame 3's PNG, checksummed anew, in frame 2's entry:
        other = FrameCache().path(frame_key(ident, 3, 40, 24)).read_bytes()  # only the
        png = other[HEADER_SIZE:]  # pixels' check can tell
        data = data[:HEADER_SIZE - 4] + bytearray(struct.pack("<I", crc32(png))) + png
    elif damage == "flip-header":
        data[9] ^= 0x01  # the width
    elif damage == "empty":
        data = bytearray()
    else:  # a whole, valid entry of frame 3 under frame 2's name
        data = bytearray(FrameCache().path(frame_key(ident, 3, 40, 24)).read_bytes())
    victim.write_bytes(bytes(data))

    c = FrameCache()
    film2 = Film.open(comp, comp.parent)
    got = [(i, f.copy()) for i, f in cached_frames(film2, cache=c)]
    assert c.rejected == 1 and c.hits == 5 and c.written == 1
    assert film2.rasterized == 1
    assert all(np.array_equal(f, expected[i]) for i, f in got)
    # the entry was replaced by a good one
    assert FrameCache().get(frame_key(ident, 2, 40, 24), 40, 24) is not None


def test_a_wrong_size_is_a_miss(cache_dir: Path) -> None:
    c = FrameCache()
    frame = np.arange(8 * 6 * 4, dtype=np.uint8).reshape(6, 8, 4)
    key = "ab" * 32
    c.put(key, frame)
    got = c.get(key, 8, 6)
    assert got is not None and np.array_equal(got, frame) and not got.flags.writeable
    assert c.get(key, 6, 8) is None and c.rejected == 1
    assert not c.path(key).exists()


@pytest.fixture()
def held_comp(comp: Path) -> Path:
    """SLIDE whose dot stops half way: frames 3, 4 and 5 are one held picture."""
    comp.write_text(SLIDE.replace('"t": 0.6667', '"t": 0.5'))
    return comp


def rendered(comp: Path, out: Path) -> list[np.ndarray]:
    """The film rendered to PNGs in ``out`` through the cache, decoded."""
    film = Film.open(comp, comp.parent)
    out.mkdir()
    files = [(i, out / f"{i}.png") for i in range(film.comp.frame_count)]
    assert sum(cached_pngs(film, files, cache=FrameCache())) == len(files)
    return [read_png_rgba(f) for _, f in files]


def test_a_held_frame_is_stored_as_an_entry_naming_its_twin(cache_dir: Path, held_comp: Path,
                                                            tmp_path: Path) -> None:
    comp = held_comp
    expected = fresh(comp)
    assert np.array_equal(expected[3], expected[5]) and not np.array_equal(expected[2],
                                                                            expected[3])
    assert all(np.array_equal(a, e) for a, e in zip(rendered(comp, tmp_path / "a"), expected))
    film = Film.open(comp, comp.parent)
    key3, key4, key5 = (frame_key(film_identity(film), i, 40, 24) for i in (3, 4, 5))
    assert FrameCache().path(key3).read_bytes()[:8] == cache_mod.MAGIC
    for key in (key4, key5):
        held = FrameCache().path(key).read_bytes()
        assert held[:8] == cache_mod.SAME_MAGIC and held[HEADER_SIZE:] == bytes.fromhex(key3)
        assert held[48:HEADER_SIZE] == FrameCache().path(key3).read_bytes()[48:HEADER_SIZE]
    # a warm render and video's reading of pixels both follow it
    c = FrameCache()
    frame5 = c.get(key5, 40, 24)
    assert frame5 is not None and np.array_equal(frame5, expected[5]) and c.rejected == 0
    warm = Film.open(comp, comp.parent)
    files = [(i, tmp_path / f"w{i}.png") for i in range(6)]
    assert sum(cached_pngs(warm, files, cache=FrameCache())) == 6 and warm.rasterized == 0
    assert (tmp_path / "w5.png").read_bytes() == (tmp_path / "a" / "5.png").read_bytes()


@pytest.mark.parametrize("damage", ["twin-gone", "twin-flipped", "twin-of-another-frame",
                                    "names-another-frame", "flipped-check", "truncated"])
def test_a_held_frame_whose_twin_does_not_hold_is_drawn_again(
        cache_dir: Path, held_comp: Path, tmp_path: Path, damage: str) -> None:
    comp = held_comp
    expected = fresh(comp)
    rendered(comp, tmp_path / "a")
    film = Film.open(comp, comp.parent)
    # frame 5 is held: its entry names frame 4's twin, frame 3; frame 2 is another picture
    key2, twin_key, key5 = (frame_key(film_identity(film), i, 40, 24) for i in (2, 3, 5))
    twin, held = FrameCache().path(twin_key), FrameCache().path(key5)
    if damage == "twin-gone":
        twin.unlink()
    elif damage == "twin-flipped":
        data = bytearray(twin.read_bytes())
        data[-20] ^= 0x01
        twin.write_bytes(bytes(data))
    elif damage == "twin-of-another-frame":  # frame 2's whole entry in the twin's place
        twin.write_bytes(FrameCache().path(key2).read_bytes())
    elif damage == "names-another-frame":
        held.write_bytes(held.read_bytes()[:HEADER_SIZE] + bytes.fromhex(key2))
    elif damage == "flipped-check":
        data = bytearray(held.read_bytes())
        data[50] ^= 0x01  # the pixels' CRC-32
        held.write_bytes(bytes(data))
    else:
        held.write_bytes(held.read_bytes()[:-1])
    c = FrameCache()
    assert c.get_png(key5, 40, 24) is None and c.rejected >= 1 and not held.exists()
    again = rendered(comp, tmp_path / "b")
    assert all(np.array_equal(a, e) for a, e in zip(again, expected))
    assert FrameCache().get(key5, 40, 24) is not None


WRITER = textwrap.dedent("""
    import os
    import sys
    import time
    import numpy as np
    from nanoframes.determinism.cache import FrameCache

    seed, rounds, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    c = FrameCache()
    frames = {}
    for k in range(12):
        key = f"{k:02x}" * 32
        frames[key] = np.full((30, 50, 4), k * 7 % 256, dtype=np.uint8)
        frames[key][k % 30, :, 3] = 200
    bad = 0
    deadline = time.monotonic() + 120
    while not os.path.exists(go) and time.monotonic() < deadline:  # all start together
        time.sleep(0.005)
    for r in range(rounds):
        keys = list(frames)
        if (seed + r) % 2:
            keys.reverse()
        for key in keys:
            c.put(key, frames[key])
            got = c.get(key, 50, 30)
            if got is None or not np.array_equal(got, frames[key]):
                bad += 1
    print("bad", bad, "rejected", c.rejected)
    sys.exit(1 if bad or c.rejected else 0)
""")


def test_several_processes_writing_the_same_keys_at_once(cache_dir: Path,
                                                         tmp_path: Path) -> None:
    env = dict(os.environ, NANOFRAMES_CACHE_DIR=str(cache_dir))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(s), "25", str(go)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for s in range(4)]
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, (out, err)
    c = FrameCache()
    assert c.stats().entries == 12
    for k in range(12):
        key = f"{k:02x}" * 32
        got = c.get(key, 50, 30)
        assert got is not None and got[0, 0, 0] == k * 7 % 256
    # no temp file is left behind
    assert all(p.suffix == ".png-entry" and not p.name.startswith(".")
               for p in (cache_dir / "frames").glob("*/*"))


def test_least_recently_used_entries_are_evicted(cache_dir: Path) -> None:
    frame = np.zeros((16, 16, 4), dtype=np.uint8)
    c = FrameCache()
    keys = [f"{k:02x}" * 32 for k in range(6)]
    c.put(keys[0], frame)
    c.limit = c.path(keys[0]).stat().st_size * 4  # room for four entries
    for n, key in enumerate(keys):
        c.put(key, frame)
        os.utime(c.path(key), (1_000_000 + n, 1_000_000 + n))
    assert c.get(keys[0], 16, 16) is not None  # a hit makes it recent again
    evicted = c.prune()
    assert evicted == 3
    left = {p.stem for p in entry_paths(cache_dir)}
    assert left == {keys[0], keys[4], keys[5]}


def test_render_and_video_use_the_cache_and_no_cache_does_not(
        cache_dir: Path, comp: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = fresh(comp)
    assert main(["render", str(comp), "-o", str(tmp_path / "a")]) == 0
    assert FrameCache().stats().entries == 6
    # Poison frame 1 with a whole, valid entry of other pixels: render trusts verified
    # entries, so what it writes shows whether the cache was read.
    film = Film.open(comp, comp.parent)
    key = frame_key(film_identity(film), 1, 40, 24)
    poison = np.full((24, 40, 4), 77, dtype=np.uint8)
    FrameCache().put(key, poison)

    assert main(["render", str(comp), "-o", str(tmp_path / "b")]) == 0
    assert np.array_equal(read_png_rgba(tmp_path / "b" / "00001.png"), poison)
    assert main(["render", str(comp), "--frame", "1", "-o", str(tmp_path / "one.png")]) == 0
    assert np.array_equal(read_png_rgba(tmp_path / "one.png"), poison)
    assert main(["render", str(comp), "-o", str(tmp_path / "c"), "--no-cache"]) == 0
    assert np.array_equal(read_png_rgba(tmp_path / "c" / "00001.png"), expected[1])

    # Digests never read the cache: the reading is of fresh frames.
    reading = read_film(comp)
    clean = Film.open(comp, comp.parent).digests()
    assert list(reading.frame_digests) == clean

    FrameCache().clear()
    assert main(["video", str(comp), "-o", str(tmp_path / "v.mp4")]) == 0
    assert FrameCache().stats().entries == 6
    assert main(["video", str(comp), "-o", str(tmp_path / "w.mp4"), "--no-cache"]) == 0


def test_the_cache_command_reports_and_clears(cache_dir: Path, comp: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    film = Film.open(comp, comp.parent)
    c = FrameCache()
    cached_frame(film, 0, c)
    cached_frame(film, 4, c)
    capsys.readouterr()
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {cache_dir}" in out
    assert "frames: 2" in out
    size = sum(p.stat().st_size for p in entry_paths(cache_dir))
    assert size > 2 * HEADER_SIZE
    assert f"size: {size / 1048576:.1f} MB of 2048.0 MB" in out
    assert main(["cache", "--clear"]) == 0
    assert "cleared 2 frames" in capsys.readouterr().out
    assert FrameCache().stats().entries == 0
    assert main(["cache"]) == 0
    assert "frames: 0" in capsys.readouterr().out


def test_a_bad_size_cap_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from nanoframes.errors import NanoframesError

    monkeypatch.setenv("NANOFRAMES_CACHE_MAX_MB", "lots")
    with pytest.raises(NanoframesError, match="NANOFRAMES_CACHE_MAX_MB"):
        FrameCache()
    monkeypatch.setenv("NANOFRAMES_CACHE_MAX_MB", "1.5")
    assert FrameCache().limit == int(1.5 * 1024 * 1024)


def test_the_checking_path_does_not_even_import_the_cache() -> None:
    # Structural: what digest --check and the plugin render through cannot read it.
    code = ("import sys, nanoframes.determinism.reading, nanoframes.determinism.sweep, "
            "nanoframes.frames.film, "
            "nanoframes.determinism.verdict, nanoframes.determinism.selftest; "
            "print('nanoframes.determinism.cache' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
