"""The frame cache, for real: films' PNGs and checks on disk, checked on read,
shared by processes, kept as hard links of the files `render -o` wrote."""

from __future__ import annotations

import errno
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
from nanoframes.determinism.reading import film_identity, read_film
from nanoframes.frames import cache as cache_mod
from nanoframes.frames.cache import FrameCache, film_key
from nanoframes.frames.cached_film import (
    CHECKS,
    FILM_MAGIC,
    FilmFrames,
    Record,
)
from nanoframes.frames.film import Film
from nanoframes.frames.output import read_png_rgba
from nanoframes.frames.through_cache import cached_frame, cached_frames, cached_pngs

# 6 frames, 40x24, each different.
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


def kept(film: Film, cache: FrameCache) -> FilmFrames:
    """``film``'s frames in ``cache``, keyed as render and video key them."""
    return cache.film_of(film, film_identity(film))


def stored(comp: Path) -> FilmFrames:
    """The film's frames in the cache, as a new process would find them."""
    return kept(Film.open(comp, comp.parent), FrameCache())


def pack_checks(records: dict[int, Record], key: str, width: int, height: int,
                magic: bytes = FILM_MAGIC) -> bytes:
    """A ``checks`` file written here, independently of the module's writer."""
    data = struct.pack("<8sII32sI", magic, width, height, bytes.fromhex(key), len(records))
    for i in sorted(records):
        data += struct.pack("<IIIII", i, *records[i])
    return data + struct.pack("<I", crc32(data))


def test_the_directory_comes_from_the_environment(cache_dir: Path) -> None:
    assert cache_mod.cache_dir() == cache_dir
    assert FrameCache().root == cache_dir


def test_the_key_covers_identity_and_size() -> None:
    ident = {"source": "a" * 64, "media": "none", "fonts": "none", "toolchain": "b" * 64}
    k = film_key(ident, 40, 24)
    assert k == film_key(dict(reversed(list(ident.items()))), 40, 24)
    for other in (film_key({**ident, "source": "c" * 64}, 40, 24),
                  film_key({**ident, "toolchain": "c" * 64}, 40, 24),
                  film_key({**ident, "fonts": "c" * 64}, 40, 24),
                  film_key({**ident, "media": "c" * 64}, 40, 24),
                  film_key(ident, 24, 40), film_key(ident, 40, 25)):
        assert other != k


def test_render_fills_the_cache_and_reads_it_back(cache_dir: Path, comp: Path) -> None:
    expected = fresh(comp)
    film = Film.open(comp, comp.parent)
    c = FrameCache()
    first = [(i, f.copy()) for i, f in cached_frames(film, stored=kept(film, c))]
    assert [i for i, _ in first] == list(range(6))
    assert c.written == 6 and c.hits == 0
    # one directory for the film: a PNG for each frame, and the checks
    (films,) = (cache_dir / "films").iterdir()
    assert sorted(p.name for p in films.iterdir()) == [f"{i}.png" for i in range(6)] + [CHECKS]
    assert c.stats().entries == 6

    film2 = Film.open(comp, comp.parent)
    c2 = FrameCache()
    second = list(cached_frames(film2, stored=kept(film2, c2)))
    assert c2.hits == 6 and c2.written == 0
    assert film2.rasterized == 0  # nothing was drawn
    for (i, a), (_, b), e in zip(first, second, expected):
        assert np.array_equal(a, e) and np.array_equal(b, e), i


def test_worker_processes_fill_the_cache_too(cache_dir: Path, comp: Path) -> None:
    film = Film.open(comp, comp.parent)
    c = FrameCache()
    got = [(i, f.copy()) for i, f in cached_frames(film, [5, 0, 3], jobs=2, stored=kept(film, c))]
    assert [i for i, _ in got] == [5, 0, 3]
    expected = fresh(comp)
    assert all(np.array_equal(f, expected[i]) for i, f in got)
    assert c.written == 3
    assert sorted(stored(comp).records) == [0, 3, 5]


def rendered(comp: Path, out: Path, jobs: int = 1) -> list[np.ndarray]:
    """The film rendered to PNGs in ``out`` through the cache, decoded."""
    film = Film.open(comp, comp.parent)
    out.mkdir()
    files = [(i, out / f"{i}.png") for i in range(film.comp.frame_count)]
    assert sum(cached_pngs(film, files, jobs=jobs, stored=kept(film, FrameCache()))) == len(files)
    return [read_png_rgba(f) for _, f in files]


@pytest.mark.parametrize("jobs", [1, 2])
def test_render_keeps_its_own_files_as_hard_links_and_a_warm_render_copies(
        cache_dir: Path, comp: Path, tmp_path: Path, jobs: int) -> None:
    expected = fresh(comp)
    assert all(np.array_equal(a, e) for a, e in zip(rendered(comp, tmp_path / "a", jobs),
                                                    expected))
    films = next((cache_dir / "films").iterdir())
    for i in range(6):  # whoever drew frame i (this process or a worker) linked it
        assert (tmp_path / "a" / f"{i}.png").stat().st_ino == (films / f"{i}.png").stat().st_ino
    assert sorted(stored(comp).records) == list(range(6))
    # warm: copies, so no two files a user has share one (an edit of one stays there)
    assert all(np.array_equal(a, e) for a, e in zip(rendered(comp, tmp_path / "b", jobs),
                                                    expected))
    assert all(f.stat().st_nlink == 1 for f in (tmp_path / "b").iterdir())


def test_an_output_edited_in_place_is_only_a_miss(cache_dir: Path, comp: Path,
                                                  tmp_path: Path) -> None:
    expected = fresh(comp)
    rendered(comp, tmp_path / "a")
    with open(tmp_path / "a" / "2.png", "r+b") as fh:  # an editor that writes in place
        fh.seek(60)
        byte = fh.read(1)
        fh.seek(60)
        fh.write(bytes([byte[0] ^ 0x01]))
    c = FrameCache()
    film = Film.open(comp, comp.parent)
    (tmp_path / "b").mkdir()
    files = [(i, tmp_path / "b" / f"{i}.png") for i in range(6)]
    assert sum(cached_pngs(film, files, stored=kept(film, c))) == 6
    assert c.rejected == 1 and c.hits == 5 and film.rasterized == 1
    assert all(np.array_equal(read_png_rgba(f), expected[i]) for i, f in files)


def test_where_files_cannot_be_linked_the_cache_writes_copies(
        cache_dir: Path, comp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def cross_device(src, dst, *args, **kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    expected = fresh(comp)
    rendered(comp, tmp_path / "a")
    films = next((cache_dir / "films").iterdir())
    assert [f.stat().st_nlink for f in sorted(films.glob("*.png"))] == [1] * 6
    assert not [f for f in films.iterdir() if f.name.startswith(".")]  # no temp left
    c = FrameCache()
    warm = Film.open(comp, comp.parent)
    assert [i for i, _ in cached_frames(warm, stored=kept(warm, c))] == list(range(6))
    assert c.hits == 6 and warm.rasterized == 0
    assert all(np.array_equal(a, e) for a, e in zip(rendered(comp, tmp_path / "b"), expected))


def read_again(comp: Path) -> tuple[FrameCache, Film, list[tuple[int, np.ndarray]]]:
    """Every frame of the film through the cache, as a new process would read
    it: (the cache's counters, the film (what it drew), the frames)."""
    c, film = FrameCache(), Film.open(comp, comp.parent)
    return c, film, [(i, f.copy()) for i, f in cached_frames(film, stored=kept(film, c))]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "older-format",
                                    "another-film", "another-size", "extra-record"])
def test_damaged_checks_are_refused_and_every_frame_drawn_again(
        cache_dir: Path, comp: Path, damage: str) -> None:
    expected = fresh(comp)
    film = Film.open(comp, comp.parent)
    list(cached_frames(film, stored=kept(film, FrameCache())))
    films = stored(comp)
    checks = films.directory / CHECKS
    records = dict(films.records)
    data = bytearray(checks.read_bytes())
    if damage == "truncate":
        data = data[:-3]
    elif damage == "flip":
        data[60] ^= 0x01  # inside the first record
    elif damage == "empty":
        data = bytearray()
    elif damage == "older-format":  # whole, its CRC-32 right, but not this format
        data = bytearray(pack_checks(records, films.key, 40, 24, magic=b"NFFILM_3"))
    elif damage == "another-film":  # whole, but written for another key
        data = bytearray(pack_checks(records, "ab" * 32, 40, 24))
    elif damage == "another-size":
        data = bytearray(pack_checks(records, films.key, 24, 40))
    else:  # a record count that does not match the records
        data = bytearray(pack_checks(records, films.key, 40, 24))
        data[44:48] = struct.pack("<I", 7)
    checks.write_bytes(bytes(data))

    c, film2, got = read_again(comp)
    assert c.rejected == 1 and c.hits == 0 and c.written == 6
    assert film2.rasterized == 6
    assert all(np.array_equal(f, expected[i]) for i, f in got)
    assert sorted(stored(comp).records) == list(range(6))  # written anew


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "gone", "another-frame",
                                    "other-pixels"])
def test_damaged_pngs_are_detected_and_drawn_again(cache_dir: Path, comp: Path,
                                                   damage: str) -> None:
    expected = fresh(comp)
    film = Film.open(comp, comp.parent)
    list(cached_frames(film, stored=kept(film, FrameCache())))
    films = stored(comp)
    victim = films.directory / "2.png"
    data = bytearray(victim.read_bytes())
    if damage == "truncate":
        data = data[:-7]
    elif damage == "flip":
        data[len(data) // 2] ^= 0x01
    elif damage == "empty":
        data = bytearray()
    elif damage == "another-frame":  # a whole PNG, of frame 3
        data = bytearray((films.directory / "3.png").read_bytes())
    elif damage == "other-pixels":  # frame 3's PNG with checks that agree on the PNG:
        data = bytearray((films.directory / "3.png").read_bytes())  # only the pixels'
        records = dict(films.records)  # check can tell
        records[2] = records[3]._replace(file=2, pixels=records[2].pixels)
        (films.directory / CHECKS).write_bytes(pack_checks(records, films.key, 40, 24))
    if damage == "gone":
        victim.unlink()
    else:
        victim.write_bytes(bytes(data))
    if damage not in ("gone", "other-pixels"):  # a file that fails its own record goes
        assert stored(comp).png(2) is None and not victim.exists()

    c, film2, got = read_again(comp)
    assert c.rejected == 1 and c.hits == 5 and c.written == 1
    assert film2.rasterized == 1
    assert all(np.array_equal(f, expected[i]) for i, f in got)
    again = stored(comp)  # the frame was stored again, whole
    assert again.frame(2) is not None and again.cache.rejected == 0


def test_a_wrong_size_is_a_miss(cache_dir: Path) -> None:
    frame = np.arange(8 * 6 * 4, dtype=np.uint8).reshape(6, 8, 4)
    key = "ab" * 32
    c = FrameCache()
    films = c.film(key, 8, 6)
    films.put(0, frame)
    films.save()
    got = c.film(key, 8, 6).frame(0)
    assert got is not None and np.array_equal(got, frame) and not got.flags.writeable
    with pytest.raises(TypeError):
        films.put(1, frame[:, :4])
    other = FrameCache()
    assert other.film(key, 6, 8).png(0) is None and other.rejected == 1


def test_checks_of_two_processes_are_merged(cache_dir: Path) -> None:
    frames = [np.full((6, 8, 4), 30 * k, dtype=np.uint8) for k in range(4)]
    key = "cd" * 32
    a, b = FrameCache().film(key, 8, 6), FrameCache().film(key, 8, 6)
    for k in (0, 1):
        a.put(k, frames[k])
    for k in (2, 3):
        b.put(k, frames[k])
    a.save()
    b.save()  # b read no checks before; it keeps a's frames beside its own
    c = FrameCache().film(key, 8, 6)
    assert all(np.array_equal(c.frame(k), frames[k]) for k in range(4))


@pytest.fixture()
def held_comp(comp: Path) -> Path:
    """SLIDE whose dot stops half way: frames 3, 4 and 5 are one held picture."""
    comp.write_text(SLIDE.replace('"t": 0.6667', '"t": 0.5'))
    return comp


def test_a_held_frame_shares_its_twins_file(cache_dir: Path, held_comp: Path,
                                            tmp_path: Path) -> None:
    comp = held_comp
    expected = fresh(comp)
    assert np.array_equal(expected[3], expected[5]) and not np.array_equal(expected[2],
                                                                            expected[3])
    assert all(np.array_equal(a, e) for a, e in zip(rendered(comp, tmp_path / "a"), expected))
    films = stored(comp)
    assert sorted(p.name for p in films.directory.glob("*.png")) == \
        ["0.png", "1.png", "2.png", "3.png"]
    assert films.records[4].file == films.records[5].file == 3
    assert films.records[5]._replace(file=3) == films.records[3]
    # a warm render and video's reading of pixels both follow it
    frame5 = films.frame(5)
    assert frame5 is not None and np.array_equal(frame5, expected[5])
    assert films.cache.rejected == 0
    warm = Film.open(comp, comp.parent)
    files = [(i, tmp_path / f"w{i}.png") for i in range(6)]
    assert sum(cached_pngs(warm, files, stored=kept(warm, FrameCache()))) == 6
    assert warm.rasterized == 0
    assert (tmp_path / "w5.png").read_bytes() == (tmp_path / "a" / "5.png").read_bytes()


@pytest.mark.parametrize("damage", ["twin-gone", "twin-flipped", "twin-of-another-frame",
                                    "names-another-frame", "flipped-check"])
def test_a_held_frame_whose_twin_does_not_hold_is_drawn_again(
        cache_dir: Path, held_comp: Path, tmp_path: Path, damage: str) -> None:
    comp = held_comp
    expected = fresh(comp)
    rendered(comp, tmp_path / "a")
    films = stored(comp)
    twin = films.directory / "3.png"  # frames 4 and 5 are held on it
    records = dict(films.records)
    if damage == "twin-gone":
        twin.unlink()
    elif damage == "twin-flipped":
        data = bytearray(twin.read_bytes())
        data[-20] ^= 0x01
        twin.write_bytes(bytes(data))
    elif damage == "twin-of-another-frame":  # frame 2's whole PNG in the twin's place
        twin.write_bytes((films.directory / "2.png").read_bytes())
    elif damage == "names-another-frame":
        records[5] = records[5]._replace(file=2)
    else:
        records[5] = records[5]._replace(pixels=records[5].pixels ^ 1)
    if records != films.records:
        (films.directory / CHECKS).write_bytes(pack_checks(records, films.key, 40, 24))
    check = stored(comp)
    assert check.frame(5) is None and check.cache.rejected == 1
    if damage == "names-another-frame":  # the record is wrong, not frame 2's file
        assert (films.directory / "2.png").exists()
    # a warm render (which reads frames 0-4 first) writes the right pictures ...
    again = rendered(comp, tmp_path / "b")
    assert all(np.array_equal(a, e) for a, e in zip(again, expected))
    # ... and video's reading too: a pixel check only it takes is refused there
    c, film, got = read_again(comp)
    assert all(np.array_equal(f, expected[i]) for i, f in got)
    if damage == "flipped-check":
        assert c.rejected == 1 and film.rasterized == 1
    assert stored(comp).frame(5) is not None


WRITER = textwrap.dedent("""
    import os
    import sys
    import time
    import numpy as np
    from nanoframes.frames.cache import FrameCache

    seed, rounds, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    key = "5e" * 32
    frames = {}
    for k in range(12):
        frames[k] = np.full((30, 50, 4), k * 7 % 256, dtype=np.uint8)
        frames[k][k % 30, :, 3] = 200
    wrong = found = 0
    deadline = time.monotonic() + 120
    while not os.path.exists(go) and time.monotonic() < deadline:  # all start together
        time.sleep(0.005)
    for r in range(rounds):
        order = list(frames)
        if (seed + r) % 2:
            order.reverse()
        films = FrameCache().film(key, 50, 30)
        for k in order:
            films.put(k, frames[k])
        films.save()
        readers = FrameCache().film(key, 50, 30)
        for k in order:
            got = readers.frame(k)
            if got is not None:
                found += 1
                wrong += not np.array_equal(got, frames[k])
    print("wrong", wrong, "found", found)
    sys.exit(1 if wrong or not found else 0)
""")


def test_several_processes_writing_one_film_at_once(cache_dir: Path, tmp_path: Path) -> None:
    env = dict(os.environ, NANOFRAMES_CACHE_DIR=str(cache_dir))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(s), "25", str(go)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for s in range(4)]
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, (out, err)  # never a wrong frame; most found
    films = FrameCache().film("5e" * 32, 50, 30)
    assert sorted(films.records) == list(range(12))
    for k in range(12):
        got = films.frame(k)
        assert got is not None and got[0, 0, 0] == k * 7 % 256
    # no temp file is left behind
    assert not [p for p in films.directory.iterdir() if p.name.startswith(".")]


def test_least_recently_used_films_are_evicted_whole(cache_dir: Path) -> None:
    frame = np.zeros((16, 16, 4), dtype=np.uint8)
    c = FrameCache()
    keys = [f"{k:02x}" * 32 for k in range(5)]
    for n, key in enumerate(keys):
        films = c.film(key, 16, 16)
        films.put(0, frame)
        films.put(1, frame + 1)
        films.save()
        for f in films.directory.iterdir():
            os.utime(f, (1_000_000 + n, 1_000_000 + n))
    one_film = sum(f.stat().st_size for f in c.film(keys[0], 16, 16).directory.iterdir())
    c.limit = int(one_film * 3.5)  # room for three films (eviction goes to 90 %)
    read = c.film(keys[0], 16, 16)
    assert read.png(1) is not None
    read.save()  # a run that read a film makes it recent again
    assert c.prune() == 2 * 2  # two films of two frames
    assert sorted(p.name for p in (cache_dir / "films").iterdir()) == \
        sorted([keys[0], keys[3], keys[4]])
    # files of an older format count, and go first when older
    legacy = cache_dir / "frames" / "ab"
    legacy.mkdir(parents=True)
    (legacy / ("ab" * 32 + ".png-entry")).write_bytes(b"x" * one_film)
    os.utime(legacy / ("ab" * 32 + ".png-entry"), (1_000, 1_000))
    assert c.stats().entries == 7
    assert c.prune() == 1 and not list(legacy.iterdir())


def test_render_and_video_use_the_cache_and_no_cache_does_not(
        cache_dir: Path, comp: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = fresh(comp)
    assert main(["render", str(comp), "-o", str(tmp_path / "a")]) == 0
    assert FrameCache().stats().entries == 6
    # Poison frame 1 with a whole, checked entry of other pixels: render trusts
    # checked entries, so what it writes shows whether the cache was read.
    films = stored(comp)
    poison = np.full((24, 40, 4), 77, dtype=np.uint8)
    films.put(1, poison)
    films.save()

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
    cached_frame(film, 0, kept(film, c))
    cached_frame(film, 4, kept(film, c))
    capsys.readouterr()
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {cache_dir}" in out
    assert "frames: 2" in out
    size = sum(p.stat().st_size for p in (cache_dir / "films").rglob("*"))
    assert size > 2 * 100
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
            "print(any(m in sys.modules for m in ('nanoframes.frames.cache', "
            "'nanoframes.frames.cached_film', 'nanoframes.frames.through_cache')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
