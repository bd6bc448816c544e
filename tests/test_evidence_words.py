"""What moved, in words, and where to look: the command line, for real through ThorVG.

The tiny project of test_evidence.py (48x32, 8 frames). A source edit reads as a
diff of the canonical projection, also after the file changed again; a media
edit names the file and its sizes; the toolchain names its parts and versions;
``diff COMP --frame N`` shows expected, actual and diff against the store;
recording says what it accepts before it writes the ledger; the page says how
many differing frames it left out and how to see them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

import numpy as np
import pytest
from PIL import Image
from scratch_project import in_process
from test_evidence import KEY, SVG, nf, numpy_numbers, read_png, write

from nanoframes.determinism.identity import modules_digest_of
from nanoframes.determinism.inputs import explain, keep, toolchain_change
from nanoframes.frames.store import Store

IMAGE_SVG = SVG.replace('<rect x="0" y="24"', '<image href="dot.png" x="0" y="0" width="4" '
                        'height="4"/>\n  <rect x="0" y="24"')


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """test_evidence.py's project: one composition, recorded by each test."""
    return in_process(tmp_path, monkeypatch, write)


def dot(root: Path, colour: tuple[int, int, int], size: int = 4) -> None:
    Image.new("RGBA", (size, size), (*colour, 255)).save(root / "examples" / "dot.png")


def test_a_source_edit_reads_as_a_diff_even_after_the_file_moved_on(proj, capsys):
    nf(capsys, "digest", "--record")
    write(proj, bar="#21a040")
    status, out, _ = nf(capsys, "digest", "--check", "--html", "r.html")
    assert status == 1
    lines = out.splitlines()
    assert "  moved: source" in "\n".join(lines) and "    --- recorded" in lines
    assert '    -  <rect fill="#20a040" height="8" width="48" x="0" y="24"/>' in lines
    assert '    +  <rect fill="#21a040" height="8" width="48" x="0" y="24"/>' in lines
    assert f"  see: nanoframes diff {KEY} --frame 0  (expected, actual and diff)" in lines
    page = (proj / "r.html").read_text()
    assert '<span class="del">-  &lt;rect fill=&quot;#20a040&quot;' in page
    # the timeline reads one key per line: an edit to it is a readable diff too
    path = proj / KEY
    path.write_text(path.read_text().replace('"x": 36', '"x": 30'))
    nf(capsys, "digest", "--check", "--html", "r.html")
    page = (proj / "r.html").read_text()
    assert re.search(r'<span class="del">- +&quot;x&quot;: 36', page)
    assert re.search(r'<span class="ins">\+ +&quot;x&quot;: 30', page)


def test_a_media_edit_names_the_file_and_its_sizes(proj, capsys):
    (proj / KEY).write_text(IMAGE_SVG.format(bar="#20a040"))
    dot(proj, (200, 0, 0))
    nf(capsys, "digest", "--record")
    before = (proj / "examples" / "dot.png").stat().st_size
    dot(proj, (201, 0, 0))
    after = (proj / "examples" / "dot.png").stat().st_size
    status, out, _ = nf(capsys, "digest", "--check")
    assert status == 1 and "changed, media changed" in out
    line = next(x for x in out.splitlines() if "changed dot.png" in x)
    assert line.startswith(f"    changed dot.png: {before:,} → {after:,} bytes (sha256 ")


def test_toolchain_parts_are_named_with_their_versions(tmp_path):
    assert toolchain_change("thorvg-python", "1.1.2", "1.1.3", None) == [
        "thorvg-python 1.1.2 → 1.1.3"]
    store = Store(tmp_path)
    files = [["evidence/html.py", "1" * 64], ["gone.py", "2" * 64]]
    old = modules_digest_of(files)
    keep(store, {"modules": (old, files)})
    moved = [{"input": "toolchain: modules", "recorded": old, "fresh": "b" * 64}]
    details = explain(moved, tmp_path, lambda: None)[0]["details"]
    assert any(d.startswith("changed evidence/html.py (sha256 111111111111… → ") for d in details)
    assert "removed gone.py" in details
    unknown = explain([dict(moved[0], recorded="c" * 64)], tmp_path, lambda: None)
    assert "not known" in unknown[0]["details"][0]
    # a record that does not hash to its name is not believed
    keep(store, {"modules": ("c" * 64, files)})
    lying = explain([dict(moved[0], recorded="c" * 64)], tmp_path, lambda: None)
    assert "not known" in lying[0]["details"][0]
    assert toolchain_change("libthorvg", "d" * 64, "e" * 64, None) == [
        "libthorvg: the file changed (sha256 dddddddddddd… → eeeeeeeeeeee…)"]


def test_diff_shows_a_frame_against_the_store(proj, capsys):
    nf(capsys, "digest", "--record")
    write(proj, bar="#21a040")
    status, out, err = nf(capsys, "diff", KEY, "--frame", "3", "-o", "d")
    assert status == 1, err
    files = {role: proj / "d" / f"box-3-{role}.png" for role in ("expected", "actual", "diff")}
    expected, actual = read_png(files["expected"]), read_png(files["actual"])
    pixels, max_delta, (x0, y0, x1, y1) = numpy_numbers(expected, actual)
    assert out.splitlines()[0] == (f"frame 3 of {KEY}, recorded → now: {pixels} px differ, "
                                   f"max ±{max_delta}/255, within ({x0},{y0})–({x1},{y1})")
    assert (actual[28, 10, :3] == (0x21, 0xA0, 0x40)).all()  # the bar as drawn now
    assert files["diff"].is_file()
    # two PNG files still compare as before
    status, out, _ = nf(capsys, "diff", str(files["expected"]), str(files["actual"]))
    assert status == 1 and out.startswith(f"{pixels} px differ")
    # no reference: one line, exit 2
    assert nf(capsys, "diff", KEY, "--frame", "99")[0] == 2
    status, _, err = nf(capsys, "diff", KEY, "--frame", "1", "--no-store")
    assert status == 2 and "error[diff-no-reference]" in err and "Traceback" not in err


def test_recording_says_what_it_accepts_before_the_ledger_is_written(proj, capsys):
    nf(capsys, "digest", "--record")
    write(proj, bar="#21a040")
    status, out, _ = nf(capsys, "digest", "--record")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == (f"accepting {KEY}: changed, source changed (8 of 8 frames differ: "
                        "0, 1, 2, 3, 4, 5, 6, 7)")
    assert lines[1] == ("  pixels: 8 of 8 frames differ, 384 px each, max ±1/255, "
                        "within (0,24)–(47,31)")
    assert lines[2].startswith("  moved: source ")
    assert out.index("accepting") < out.index("updated    ")
    # nothing moved: nothing to accept, nothing said
    _, out, _ = nf(capsys, "digest", "--record")
    assert "accepting" not in out
    # --json: stdout stays one object, the words go to stderr
    write(proj, bar="#22a040")
    _, out, err = nf(capsys, "digest", "--record", "--json")
    assert json.loads(out)["updated"] == [KEY] and err.startswith(f"accepting {KEY}")


def test_the_page_says_how_many_frames_it_left_out(proj, capsys):
    nf(capsys, "digest", "--record")
    write(proj, bar="#21a040")
    nf(capsys, "digest", "--check", "--html", "r.html", "--artifacts-frames", "2")
    page = (proj / "r.html").read_text()
    assert page.count('<figure class="actual">') == 2
    assert ('6 more differing frames not shown: <code>nanoframes diff examples/box.nf.svg '
            '--frame 2</code> shows any one (frame 2 is the first), or raise '
            '<code>--artifacts-frames N</code>') in page
    assert np.asarray(Image.open(proj / "r_files" / KEY / "0-actual.png")).shape == (32, 48, 4)


def test_the_records_travel_with_the_store_and_are_verified(proj, capsys):
    import io
    import shutil
    import tarfile

    nf(capsys, "digest", "--record")
    nf(capsys, "store", "--export", "moved.tar")
    with tarfile.open(proj / "moved.tar") as tar:
        kinds = {PurePosixPath(m.name).parts[1] for m in tar if m.name.startswith("inputs/")}
    # no media or fonts: nothing to keep; the scenes (frames/scenes.py) travel too
    assert kinds == {"source", "modules", "scene"}
    shutil.rmtree(proj / ".nanoframes")
    with tarfile.open(proj / "moved.tar", "a") as tar:  # a record that lies about its name
        data = json.dumps({"canonical": "[]", "children": []}).encode()
        info = tarfile.TarInfo(f"inputs/source/{'ab' * 32}.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    status, out, _ = nf(capsys, "store", "--import", "moved.tar")
    assert status == 1 and "1 rejected" in out
    assert not (proj / ".nanoframes" / "store" / "inputs" / "source" / f"{'ab' * 32}.json").exists()
    write(proj, bar="#21a040")
    _, out, _ = nf(capsys, "digest", "--check")
    assert '    -  <rect fill="#20a040" height="8" width="48" x="0" y="24"/>' in out.splitlines()
