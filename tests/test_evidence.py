"""The frame store and pixel evidence, made to happen for real through ThorVG.

A tiny project (48x32, 8 frames, a square moving and a bar that stays): record,
then a drawn edit (changed) or a regression (the ledger and store of another
recording, in which one frame was drawn ±1/255 off), then check. Every number
the evidence states is compared with a direct numpy comparison of the PNGs.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest
from ledger_edit import reseal
from PIL import Image
from scratch_project import in_process
from scratch_project import main_run as nf

from nanoframes.frames.digest import film_digest, frame_digest
from nanoframes.frames.film import Film
from nanoframes.frames.store import Store, encode_png

SVG = """<svg xmlns="http://www.w3.org/2000/svg" data-width="48" data-height="32"
     data-fps="8" data-duration="1">
  <rect x="0" y="24" width="48" height="8" fill="{bar}"/>
  <rect id="box" x="1" y="1" width="10" height="10" fill="#3050c0"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box", "keyframes": [{{"t": 0, "x": 1}}, {{"t": 1, "x": 36}}]}}]}}
  </script>
</svg>
"""
KEY = "examples/box.nf.svg"


def write(root: Path, bar: str = "#20a040") -> Path:
    path = root / KEY
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SVG.format(bar=bar))
    return path


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return in_process(tmp_path, monkeypatch, write)


def read_png(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGBA"))


def numpy_numbers(a: np.ndarray, b: np.ndarray) -> tuple[int, int, list[int]]:
    """The three numbers, computed independently of nanoframes/frames/compare.py."""
    d = np.abs(a.astype(int) - b.astype(int))
    differs = (d != 0).any(axis=2)
    ys, xs = np.nonzero(differs)
    return int(differs.sum()), int(d.max()), [int(xs.min()), int(ys.min()),
                                              int(xs.max()), int(ys.max())]


def ledger(root: Path) -> dict:
    return json.loads((root / "tests" / "digests.json").read_text())


# --- the store -------------------------------------------------------------------

@pytest.mark.parametrize("jobs", ["1", "2"])
def test_record_keeps_every_distinct_frame_verifiably(proj, capsys, jobs):
    status, out, err = nf(capsys, "digest", "--record", "-j", jobs)
    assert status == 0, err
    store = proj / ".nanoframes" / "store"
    assert (store / ".gitignore").read_text() == "*\n"
    recorded = ledger(proj)["compositions"][KEY]["frame_digests"]
    entries = sorted(store.glob("*/*.png"))
    assert {p.stem[:16] for p in entries} == set(recorded)
    for path in entries:  # verifiable with any PNG reader: the name is the pixels' hash
        assert path.parent.name == path.stem[:2] and len(path.stem) == 64
        assert frame_digest(np.ascontiguousarray(read_png(path))) == path.stem
    assert err == ""


def test_store_location_option_env_and_off(proj, capsys, monkeypatch):
    nf(capsys, "digest", "--record", "--no-store")
    assert not (proj / ".nanoframes" / "store").exists()  # (the ledger's lock is there)
    (proj / "tests" / "digests.json").unlink()
    monkeypatch.setenv("NANOFRAMES_STORE", str(proj / "env-store"))
    nf(capsys, "digest", "--record")
    assert list((proj / "env-store").glob("*/*.png"))
    (proj / "tests" / "digests.json").unlink()
    nf(capsys, "digest", "--record", "--store", "opt-store")
    assert list((proj / "opt-store").glob("*/*.png"))
    assert not (proj / ".nanoframes" / "store").exists()


def test_matching_check_never_opens_the_store(proj, capsys, monkeypatch):
    nf(capsys, "digest", "--record")

    def refuse(*_a, **_k):
        raise AssertionError("a matching check opened the store")

    monkeypatch.setattr(Store, "get", refuse)
    monkeypatch.setattr(Store, "candidates", refuse)
    status, out, _ = nf(capsys, "digest", "--check")
    assert status == 0 and "MATCH" in out


# --- evidence: a drawn edit and a regression ------------------------------------

def test_changed_evidence_equals_numpy(proj, capsys):
    nf(capsys, "digest", "--record")
    write(proj, bar="#21a040")  # the bar's red moves by one: ±1/255 on 8 rows
    status, out, err = nf(capsys, "digest", "--check", "--json", "--artifacts", "art",
                          "--artifacts-frames", "3")
    assert status == 1, err
    verdict = json.loads(out)["verdicts"][0]
    assert verdict["verdict"] == "changed"
    evidence = verdict["evidence"]
    assert evidence["summary"] == ("8 of 8 frames differ, 384 px each, max ±1/255, "
                                   "within (0,24)–(47,31)")
    film = Film.open(proj / KEY, proj)
    fresh = {i: f.copy() for i, f in film.frames()}
    manifest = json.loads((proj / "art" / "manifest.json").read_text())
    assert [f["frame"] for f in manifest["files"]] == [0, 1, 2]
    for frame, listed in zip(evidence["frames"], [*manifest["files"], None, None, None, None,
                                                   None]):
        index = frame["frame"]
        if listed is None:
            assert "files" not in frame
            continue
        expected = read_png(proj / "art" / listed["expected"])
        actual = read_png(proj / "art" / listed["actual"])
        assert (actual == fresh[index]).all()  # the fresh frame, as drawn now
        pixels, max_delta, bbox = numpy_numbers(expected, actual)
        assert (frame["pixels"], frame["max_delta"], frame["bbox"]) == (pixels, max_delta, bbox)
        assert (listed["pixels"], listed["max_delta"], listed["bbox"]) == (pixels, max_delta,
                                                                           bbox)
        assert listed["verdict"] == "changed" and listed["composition"] == KEY
        diff = read_png(proj / "art" / listed["diff"])
        moved = (expected != actual).any(axis=2)  # ±1 shows, in the scale's blue
        assert (diff[..., 2][moved] == 255).all() and (diff[..., 0][moved] == 40).all()
        assert frame["files"]["diff"] == listed["diff"]


def regress(root: Path, index: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The ledger and store of another recording, in which frame ``index`` was drawn
    with a 3x2 patch one step off in red: same inputs, different pixels."""
    doc = ledger(root)
    entry = doc["compositions"][KEY]
    film = Film.open(root / KEY, root)
    frames = {i: f.copy() for i, f in film.frames()}
    digests = [frame_digest(frames[i]) for i in range(len(frames))]
    other = frames[index].copy()
    other[5:7, 20:23, 0] ^= 1
    Store(root / ".nanoframes" / "store").put(other)
    digests[index] = frame_digest(other)
    entry["frame_digests"][index] = digests[index][:16]
    entry["digest"] = film_digest(digests)
    reseal(entry)
    (root / "tests" / "digests.json").write_text(json.dumps(doc, indent=2) + "\n")
    return other, frames[index]


def test_regression_evidence_equals_numpy(proj, capsys):
    nf(capsys, "digest", "--record")
    expected, actual = regress(proj)
    status, out, err = nf(capsys, "digest", "--check", "--artifacts", "art")
    assert status == 1, err
    assert out.splitlines()[:2] == [
        "REGRESSION examples/box.nf.svg: regression, 1 of 8 frames differ: 3",
        "  pixels: 1 of 8 frames differ, 6 px each, max ±1/255, within (20,5)–(22,6)"]
    manifest = json.loads((proj / "art" / "manifest.json").read_text())
    (listed,) = manifest["files"]
    assert (read_png(proj / "art" / listed["expected"]) == expected).all()
    assert (read_png(proj / "art" / listed["actual"]) == actual).all()
    assert [listed["pixels"], listed["max_delta"], listed["bbox"]] == [
        *numpy_numbers(expected, actual)[:2], numpy_numbers(expected, actual)[2]]


def test_missing_store_says_how_to_get_the_frames(proj, capsys):
    nf(capsys, "digest", "--record")
    write(proj, bar="#21a040")
    shutil.rmtree(proj / ".nanoframes")
    status, out, _ = nf(capsys, "digest", "--check")
    assert status == 1
    assert "8 recorded frames are not in the store" in out
    assert "nanoframes digest --record" in out and "nanoframes store --import" in out


def test_corrupt_store_entry_is_missing_and_said(proj, capsys):
    nf(capsys, "digest", "--record")
    regress(proj)
    bad = Store(proj / ".nanoframes" / "store").candidates(
        ledger(proj)["compositions"][KEY]["frame_digests"][3])[0]
    other = np.zeros((32, 48, 4), dtype=np.uint8)  # a valid PNG, the wrong pixels
    bad.write_bytes(encode_png(other))
    status, out, err = nf(capsys, "digest", "--check")
    assert status == 1
    assert "a bad store entry (its pixels do not hash to its name)" in err
    assert "1 recorded frame is not in the store" in out
    bad.write_bytes(b"not a png")
    status, out, err = nf(capsys, "digest", "--check")
    assert "a bad store entry (unreadable" in err and "not in the store" in out
    status, out, _ = nf(capsys, "store", "--verify")
    assert status == 1 and f"bad entry: {bad}" in out


def test_store_on_a_full_disk_costs_one_warning(proj, capsys):
    full = proj / "full"
    full.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(full)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tiny tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        status, out, err = nf(capsys, "digest", "--record", "--store", str(full / "store"))
        assert status == 0
        assert KEY in ledger(proj)["compositions"]  # the ledger is still recorded
        warnings = [line for line in err.splitlines() if "warning" in line]
        assert len(warnings) == 1, err
        assert "could not keep" in warnings[0] and "No space left on device" in warnings[0]
    finally:
        subprocess.run(["umount", str(full)], check=False)


# --- nanoframes store, diff, strip ------------------------------------------------

def test_store_command_counts_prunes_exports_imports(proj, capsys, tmp_path):
    nf(capsys, "digest", "--record")
    status, out, _ = nf(capsys, "store")
    n = len(set(ledger(proj)["compositions"][KEY]["frame_digests"]))
    assert status == 0 and f"entries {n} (" in out and f"{n} of {n} distinct" in out
    Store(proj / ".nanoframes" / "store").put(np.full((2, 2, 4), 7, dtype=np.uint8))
    status, out, _ = nf(capsys, "store", "--prune")
    assert "pruned 1 entries" in out and f"entries {n} (" in out
    nf(capsys, "store", "--export", "moved.tar")
    shutil.rmtree(proj / ".nanoframes")
    status, out, _ = nf(capsys, "store", "--import", "moved.tar")
    assert status == 0 and f"imported {n} entries, 0 rejected" in out

    # a hostile archive: a path out of the store, and an entry that lies about its pixels
    evil = proj / "evil.tar"
    liar = encode_png(np.zeros((2, 2, 4), dtype=np.uint8))
    with tarfile.open(evil, "w") as tar:
        for name in ("../escaped.png", f"ab/{'ab' * 32}.png"):
            info = tarfile.TarInfo(name)
            info.size = len(liar)
            tar.addfile(info, io.BytesIO(liar))
    status, out, _ = nf(capsys, "store", "--import", "evil.tar")
    assert status == 1 and "imported 0 entries, 2 rejected" in out
    assert not (proj / ".nanoframes" / "escaped.png").exists()
    assert not list((proj / ".nanoframes" / "store").glob("ab/*.png"))


def test_diff_command(proj, capsys):
    a = np.zeros((10, 12, 4), dtype=np.uint8)
    b = a.copy()
    b[2:4, 5:9, 1] = 3
    Image.fromarray(a, "RGBA").save(proj / "a.png")
    Image.fromarray(b, "RGBA").save(proj / "b.png")
    Image.fromarray(np.zeros((3, 3, 4), dtype=np.uint8), "RGBA").save(proj / "c.png")
    assert nf(capsys, "diff", "a.png", "a.png")[:2] == (0, "identical\n")
    status, out, _ = nf(capsys, "diff", "a.png", "b.png", "--json", "-o", "d.png")
    data = json.loads(out)
    assert status == 1 and [data["pixels"], data["max_delta"], data["bbox"]] == [
        *numpy_numbers(a, b)[:2], numpy_numbers(a, b)[2]]
    assert read_png(proj / "d.png").shape == (10, 12, 4)
    assert nf(capsys, "diff", "a.png", "c.png")[0] == 2
    (proj / "junk.png").write_bytes(b"junk")
    status, _, err = nf(capsys, "diff", "a.png", "junk.png")
    assert status == 2 and "junk.png" in err and "Traceback" not in err


def test_strip_contact_sheet(proj, capsys):
    status, out, _ = nf(capsys, "strip", KEY, "-o", "sheet.png", "--frames", "0,2-3",
                        "--columns", "2")
    assert status == 0
    sheet = read_png(proj / "sheet.png")
    assert sheet.shape == (6 + 2 * (32 + 20 + 6), 6 + 2 * (48 + 6), 4)
    # frame 0's opaque pixels appear unscaled in the first cell
    frame0 = next(Film.open(proj / KEY, proj).frames([0]))[1]
    cell = sheet[6:6 + 32, 6:6 + 48, :3]
    opaque = frame0[..., 3] == 255
    assert (cell[opaque] == frame0[..., :3][opaque]).all()
    assert nf(capsys, "strip", KEY, "-o", "s.png", "--frames", "99")[0] == 2


# --- the report, in a real browser -----------------------------------------------

def test_html_report_in_headless_chromium(proj, capsys):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    nf(capsys, "digest", "--record")
    (proj / "examples" / "still.nf.svg").write_text(SVG.format(bar="#000000"))
    nf(capsys, "digest", "--record")
    write(proj, bar="#21a040")
    status, _, err = nf(capsys, "digest", "--check", "--html", "report.html")
    assert status == 1, err
    page = proj / "report.html"
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
         "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert 'data-images="decoded"' in dom, dom[:2000]
    assert 'data-verdict="changed"' in dom and 'data-verdict="match"' in dom
    assert "pixels: 8 of 8 frames differ, 384 px each, max ±1/255" in dom
    assert "source" in dom and 'class="moved"' in dom.replace("class=moved", 'class="moved"')
    assert dom.count("<img") >= 2 + 5 * 3  # two sheets, five frames × expected/actual/diff


def test_a_size_change_is_reported_as_one(proj, capsys):
    nf(capsys, "digest", "--record")
    path = proj / KEY
    path.write_text(path.read_text().replace('data-width="48"', 'data-width="50"'))
    status, out, _ = nf(capsys, "digest", "--check", "--artifacts", "art")
    assert status == 1
    assert "  pixels: size changed 48×32 → 50×32" in out.splitlines()
    manifest = json.loads((proj / "art" / "manifest.json").read_text())
    first = manifest["files"][0]
    assert first["size"] == {"expected": [48, 32], "actual": [50, 32]} and "diff" not in first
