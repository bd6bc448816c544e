"""Scene digests (frames/scenes.py, determinism/scenes.py, evidence/scenediff.py).

Each frame's scene is the document handed to ThorVG for it. Recording keeps the
distinct scenes in the store (data: images once, as blobs); the ledger records
their digests; a check whose frames differ classifies each as the same scene
drawn otherwise or a different scene, and names what changed in it. Everything
here renders for real; the cases that need another build are in
test_scene_cases.py.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import shutil
import sys
import tarfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from ledger_edit import reseal
from PIL import Image
from scratch_project import in_process
from scratch_project import main_run as nf

from nanoframes.cli import main
from nanoframes.determinism.ledger import read_ledger
from nanoframes.determinism.scenes import PREDATES, SceneEvidence, classify, grouped
from nanoframes.determinism.verdict import Kind, Reading, judge
from nanoframes.evidence.scenediff import frame_diff, shown, structural_diff
from nanoframes.frames import scenes
from nanoframes.frames.film import Film
from nanoframes.frames.parallel import film_readings
from nanoframes.frames.store import Store

SVG = """<svg xmlns="http://www.w3.org/2000/svg" data-width="48" data-height="32"
     data-fps="8" data-duration="1">
  <rect x="0" y="24" width="48" height="8" fill="#20a040"/>
  <g id="card"><rect width="6" height="6" fill="#802020"/></g>
  <rect id="box" x="1" y="1" width="10" height="10" fill="#3050c0"/>
  {image}
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box",
                       "keyframes": [{{"t": 0, "x": 1}}, {{"t": 1, "x": {end}}}]}},
                     {{"target": "#card", "keyframes": [{{"t": 0, "opacity": 1}},
                                                       {{"t": 1, "opacity": {fade}}}]}}]}}
  </script>
</svg>
"""
KEY = "examples/box.nf.svg"


def noise_png(seed: int = 7) -> bytes:
    """A PNG that does not compress: its data: URI is a blob of several kilobytes."""
    pixels = np.random.default_rng(seed).integers(0, 256, (40, 40, 4), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(out, format="PNG")
    return out.getvalue()


def write(root: Path, end: int = 36, fade: float = 0.5, image: bool = False,
          seed: int = 7) -> Path:
    tag = ""
    if image:
        uri = "data:image/png;base64," + base64.b64encode(noise_png(seed)).decode()
        tag = f'<image id="pic" x="30" y="2" width="10" height="10" href="{uri}"/>'
    path = root / KEY
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SVG.format(end=end, fade=fade, image=tag))
    return path


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return in_process(tmp_path, monkeypatch, write)


def entry(root: Path) -> dict:
    return json.loads((root / "tests" / "digests.json").read_text())["compositions"][KEY]


# --- what is hashed, what is kept ---------------------------------------------------

def test_a_scene_digest_is_the_hash_of_the_bytes_thorvg_is_handed(proj: Path) -> None:
    film = Film.open(proj / KEY, proj)
    digests, scene_digests = film_readings(film)
    assert len(scene_digests) == film.comp.frame_count == len(digests)
    for index, digest in enumerate(scene_digests):
        assert digest == hashlib.sha256(film.document(index)).hexdigest()
    # without de-duplication the scenes are still hashed, and they are the same
    plain = Film.open(proj / KEY, proj, dedup=False)
    assert film_readings(plain)[1] == scene_digests
    # over worker processes too
    assert film_readings(Film.open(proj / KEY, proj), jobs=2)[1] == scene_digests


def test_the_svg_command_prints_the_scene(proj: Path, capsysbinary) -> None:
    """docs/digest.md: the scene is what `nanoframes svg` prints, less its newline."""
    assert main(["svg", KEY, "--frame", "3"]) == 0
    out = capsysbinary.readouterr().out
    film = Film.open(proj / KEY, proj)
    assert out.endswith(b"\n") and out[:-1] == film.document(3)
    assert hashlib.sha256(out[:-1]).hexdigest() == film_readings(film, [3])[1][0]


def test_plain_json_lists_the_scene_digests(proj: Path, capsys) -> None:
    status, out, _ = nf(capsys, "digest", "--json", KEY)
    row = json.loads(out)["compositions"][0]
    film = Film.open(proj / KEY, proj)
    assert status == 0 and row["scene_digests"] == [
        hashlib.sha256(film.document(i)).hexdigest() for i in range(8)]


def test_packing_is_exact_deterministic_and_keeps_images_once(tmp_path: Path) -> None:
    uri = b"data:image/png;base64," + base64.b64encode(noise_png())
    docs = [b'<svg xmlns="http://www.w3.org/2000/svg"><image href="%s" x="%d"/></svg>'
            % (uri, i) for i in range(3)]
    store = Store(tmp_path / "store", warn=None)
    for doc in docs:
        assert scenes.keep(store, scenes.scene_digest(doc), doc)
        assert scenes.pack(doc) == scenes.pack(doc)  # the same bytes every time
    assert len(store.record_candidates("blob", "")) == 0  # a short prefix is not a lookup
    blobs = list((tmp_path / "store" / "inputs" / "blob").iterdir())
    assert len(blobs) == 1  # one image, three scenes
    kept = list((tmp_path / "store" / "inputs" / "scene").iterdir())
    assert len(kept) == 3 and all(p.stat().st_size < len(uri) // 4 for p in kept)
    for doc in docs:
        digest = scenes.scene_digest(doc)
        assert scenes.recorded_scene(store, digest) == doc
        assert scenes.recorded_scene(store, digest[:16]) == doc  # the ledger's prefix
    # a record that does not rebuild its name is missing, never trusted
    victim = kept[0]
    victim.write_bytes(zlib.compress(b"nanoframes-scene 1\n0\n<svg/>"))
    assert scenes.recorded_scene(store, victim.stem) is None
    blobs[0].write_bytes(zlib.compress(b"data:image/png;base64,AAAA"))
    assert all(scenes.recorded_scene(store, scenes.scene_digest(d)) is None for d in docs)


def test_recording_keeps_the_scenes_and_the_ledger_seals_them(proj: Path, capsys) -> None:
    write(proj, image=True)
    assert nf(capsys, "digest", "--record")[0] == 0
    recorded = entry(proj)
    assert len(recorded["scene_digests"]) == recorded["frames"] == 8
    store = Store(proj / ".nanoframes" / "store", warn=None)
    film = Film.open(proj / KEY, proj)
    for index, short in enumerate(recorded["scene_digests"]):
        assert scenes.recorded_scene(store, short) == film.document(index)
    assert len(list((store.root / "inputs" / "blob").iterdir())) == 1  # the image, once
    # a hand-edited scene digest breaks the seal
    recorded["scene_digests"][2] = "0" * 16
    doc = {"version": 1, "compositions": {KEY: recorded}}
    (proj / "tests" / "digests.json").write_text(json.dumps(doc))
    status, _, err = nf(capsys, "digest", "--check")
    assert status == 2 and "do not match its seal" in err
    # resealed (as a recording with other scenes would write it), it reads
    (proj / "tests" / "digests.json").write_text(json.dumps(
        {"version": 1, "compositions": {KEY: reseal(recorded)}}))
    assert read_ledger(proj / "tests" / "digests.json").entries[KEY].scene_digests[2] == "0" * 16


def test_export_and_import_carry_the_scenes(proj: Path, capsys, tmp_path: Path) -> None:
    write(proj, image=True)
    nf(capsys, "digest", "--record")
    assert nf(capsys, "store", "--export", "all.tar")[0] == 0
    with tarfile.open(proj / "all.tar") as tar:
        names = tar.getnames()
    distinct = len(set(entry(proj)["scene_digests"]))
    assert sum(n.startswith("inputs/scene/") for n in names) == distinct
    assert sum(n.startswith("inputs/blob/") for n in names) == 1
    other = tmp_path / "elsewhere"
    status, out, _ = nf(capsys, "store", "--store", str(other), "--import", "all.tar")
    assert status == 0 and "0 rejected" in out, out
    moved = Store(other, warn=None)
    film = Film.open(proj / KEY, proj)
    assert scenes.recorded_scene(moved, entry(proj)["scene_digests"][5]) == film.document(5)
    # a scene that lies about its name is rejected at the door
    with tarfile.open(proj / "all.tar", "a") as tar:
        data = zlib.compress(b"nanoframes-scene 1\n0\n<svg/>")
        info = tarfile.TarInfo(f"inputs/scene/{'ab' * 32}.z")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    status, out, _ = nf(capsys, "store", "--store", str(tmp_path / "third"), "--import", "all.tar")
    assert status == 1 and "1 rejected" in out


def test_verify_finds_a_bad_scene_and_prune_keeps_only_the_ledgers(proj: Path, capsys) -> None:
    write(proj, image=True)
    nf(capsys, "digest", "--record")
    status, out, _ = nf(capsys, "store", "--verify")
    distinct = len(set(entry(proj)["scene_digests"]))
    assert status == 0 and f"scenes: {distinct + 1} good, 0 bad" in out, out  # + the blob
    write(proj, image=True, seed=8)  # another image: other scenes and another blob
    nf(capsys, "digest", "--record")
    store = Store(proj / ".nanoframes" / "store", warn=None)
    assert len(scenes._kept(store, "blob")) == 2
    status, out, _ = nf(capsys, "store", "--prune")
    now = set(entry(proj)["scene_digests"])
    assert status == 0 and f"and {distinct + 1} scene records" in out, out
    kept = {d[:16] for d, _ in scenes._kept(store, "scene")}
    assert kept == {d[:16] for d in now} and len(scenes._kept(store, "blob")) == 1
    film = Film.open(proj / KEY, proj)
    assert scenes.recorded_scene(store, entry(proj)["scene_digests"][2]) == film.document(2)
    # a scene whose bytes were altered is named by --verify
    victim = scenes._kept(store, "scene")[0][1]
    victim.write_bytes(zlib.compress(b"nanoframes-scene 1\n0\n<svg/>"))
    status, out, _ = nf(capsys, "store", "--verify")
    assert status == 1 and f"bad entry: {victim}" in out and "scenes: " in out


# --- classification and the diff --------------------------------------------------

def test_an_edited_keyframe_is_a_different_scene_named_element_and_attribute(
        proj: Path, capsys) -> None:
    nf(capsys, "digest", "--record")
    write(proj, fade=0.25)  # #card's opacity keyframe edited
    status, out, _ = nf(capsys, "digest", "--check", "--json")
    assert status == 1
    verdict = json.loads(out)["verdicts"][0]
    found = verdict["scenes"]
    assert found["classification"] == "different scene" and not found["same_scene"]
    assert found["different_scene"] == verdict["differing_frames"] == list(range(1, 8))
    first = found["diffs"][0]
    assert first["frame"] == 1 and first["keys"] == ["#card opacity"]
    assert first["changes"][0].startswith("#card opacity 0.9375 → 0.90625")
    assert [g["frames"] for g in found["groups"]] == [[1, 7]]
    assert "in frames 1–7 only #card's opacity differs" in found["summary"]
    # the terminal says it under the verdict
    status, out, _ = nf(capsys, "digest", "--check")
    lines = out.splitlines()
    assert any(line.startswith("  scene: different scene in every differing frame: in "
                               "frames 1–7 only #card's opacity differs") for line in lines)
    assert "    frame 1: #card opacity 0.9375 → 0.90625" in lines
    # the HTML report too
    status, _, _ = nf(capsys, "digest", "--check", "--html", "report.html")
    page = (proj / "report.html").read_text()
    assert '<p class="scene">scene: different scene' in page and "#card opacity" in page
    assert '<p class="time">time: first difference at frame 1' in page  # the record has it


def test_an_image_that_moved_is_named_by_hash_not_spelled_out(proj: Path, capsys) -> None:
    write(proj, image=True)
    nf(capsys, "digest", "--record")
    write(proj, image=True, seed=8)
    _, out, _ = nf(capsys, "digest", "--check", "--json")
    found = json.loads(out)["verdicts"][0]["scenes"]
    assert found["classification"] == "different scene"
    change = found["diffs"][0]["changes"][0]
    assert change.startswith("#pic href data:image/png;base64,… (") and " → " in change
    assert len(change) < 200 and "sha256 " in change
    assert "in frames 0–7 only #pic's href differs" in found["summary"]


def test_a_recorded_scene_the_store_lacks_is_said_with_the_hint(proj: Path, capsys) -> None:
    nf(capsys, "digest", "--record")
    for path in (proj / ".nanoframes" / "store" / "inputs" / "scene").iterdir():
        path.unlink()
    write(proj, end=20)
    _, out, _ = nf(capsys, "digest", "--check", "--json")
    found = json.loads(out)["verdicts"][0]["scenes"]
    assert found["classification"] == "different scene" and found["diffs"] == []
    assert found["missing"] == found["different_scene"]
    assert "is not in the store: record them with `nanoframes digest --record`" in found["summary"]


def test_an_entry_recorded_before_scene_digests_says_so_and_a_re_record_adds_them(
        proj: Path, capsys) -> None:
    nf(capsys, "digest", "--record")
    old = entry(proj)
    del old["scene_digests"]
    (proj / "tests" / "digests.json").write_text(json.dumps(
        {"version": 1, "compositions": {KEY: reseal(old)}}))
    assert nf(capsys, "digest", "--check")[0] == 0  # it still reads, and matches
    write(proj, end=20)
    _, out, _ = nf(capsys, "digest", "--check", "--json")
    found = json.loads(out)["verdicts"][0]["scenes"]
    assert found["predates"] and found["summary"] == PREDATES
    write(proj)
    status, out, _ = nf(capsys, "digest", "--record")
    assert status == 0 and "updated" in out  # a match, yet the scenes are added
    assert len(entry(proj)["scene_digests"]) == 8


def test_same_scene_other_pixels_is_classified_from_the_digests(proj: Path, capsys) -> None:
    """The reading as a machine whose rasterizer drew frame 3 otherwise: its frame
    digest moved, its scene did not (the real builds: test_scene_cases.py)."""
    nf(capsys, "digest", "--record")
    recorded = read_ledger(proj / "tests" / "digests.json").entries[KEY]
    film = Film.open(proj / KEY, proj)
    digests, scene_digests = film_readings(film)
    digests[3] = "f" * 64
    reading = Reading(KEY, recorded.identity, recorded.toolchain_parts, 8, tuple(range(8)),
                      tuple(digests), "0" * 64, scene_digests=tuple(scene_digests))
    verdict = judge(reading, recorded)
    assert verdict.kind is Kind.REGRESSION and verdict.scenes.same == (3,)
    assert verdict.scene_lines[0].startswith(
        "scene: same scene, different pixels in every differing frame: ThorVG was handed "
        "the recorded document and drew it otherwise")
    # judged against a platform entry, its scenes are the ones compared
    other = dataclasses.replace(recorded, scene_digests=("e" * 16,) * 8)
    assert judge(reading, other).scenes.different == (3,)


def test_classification_and_diff_units() -> None:
    found = classify((0, 1, 2), ("a" * 16, "b" * 16, "c" * 16), (0, 1, 2),
                     ("a" * 64, "d" * 64, "c" * 64), (0, 1))
    assert found == SceneEvidence(same=(0,), different=(1,))
    assert found.classification == "mixed"
    assert SceneEvidence.from_json(json.loads(json.dumps(found.as_dict()))) == found
    assert classify((0,), None, (0,), ("a" * 64,), (0,)).predates
    old = (b'<svg xmlns="http://www.w3.org/2000/svg"><g id="t" opacity="0.42"><rect/><rect '
           b'x="1"/></g><g><circle r="2"/><text>hi</text></g></svg>')
    new = (b'<svg xmlns="http://www.w3.org/2000/svg"><g id="t" opacity="0.45"><rect/><rect '
           b'x="2"/></g><g><circle r="2"/><text>ho</text><path d="M0"/></g></svg>')
    changes, keys = structural_diff(old, new)
    # the second <g> (the first has an id, yet it is a g all the same)
    assert changes == ["#t opacity 0.42 → 0.45", "#t/rect[2] x 1 → 2",
                       "svg/g[2]/text[1] text 'hi' → 'ho'", "svg/g[2]/path[1] added"]
    assert keys == ["#t opacity", "#t/rect[2] x", "svg/g[2]/text[1] text",
                    "svg/g[2]/path[1] added"]
    # documents that differ in their bytes only (attribute order, whitespace)
    same = frame_diff(3, b'<svg xmlns="http://www.w3.org/2000/svg"><rect x="1" y="2"/></svg>',
                      b'<svg xmlns="http://www.w3.org/2000/svg">\n<rect y="2" x="1"/></svg>')
    assert same.line == "frame 3: no element, attribute or text differs"
    assert grouped([same])[0].text.startswith("in frame 3 the documents differ in their bytes")
    long = "data:image/png;base64," + "A" * 5000
    assert shown(long).startswith("data:image/png;base64,… (5,022 chars, sha256 ")


def test_a_matching_check_does_no_scene_work(proj: Path, capsys, monkeypatch) -> None:
    nf(capsys, "digest", "--record")
    shutil.rmtree(proj / ".nanoframes" / "store")  # a CI job's empty store

    def refuse(*_a, **_k):
        raise AssertionError("a matching check touched the scenes")

    monkeypatch.setattr(scenes, "recorded_scene", refuse)
    monkeypatch.setattr(scenes, "pack", refuse)
    monkeypatch.setattr("nanoframes.evidence.scenediff.recorded_scene", refuse)
    for jobs in ("1", "2"):
        assert nf(capsys, "digest", "--check", "-j", jobs)[0] == 0
    assert (proj / ".nanoframes" / "store").is_dir()  # the check kept its frames ...
    assert not (proj / ".nanoframes" / "store" / "inputs" / "scene").exists()  # ... no scene


def test_a_check_keeps_the_new_scenes_it_diffed_so_accepting_keeps_them(
        proj: Path, capsys) -> None:
    nf(capsys, "digest", "--record")
    write(proj, fade=0.25)
    assert nf(capsys, "digest", "--check")[0] == 1
    assert nf(capsys, "accept", "--all-changed")[0] == 0
    accepted = entry(proj)["scene_digests"]
    store = Store(proj / ".nanoframes" / "store", warn=None)
    film = Film.open(proj / KEY, proj)
    assert all(scenes.recorded_scene(store, accepted[i]) == film.document(i) for i in range(8))
    write(proj, fade=0.75)  # the next edit is diffed against the accepted scenes
    _, out, _ = nf(capsys, "digest", "--check", "--json")
    found = json.loads(out)["verdicts"][0]["scenes"]
    assert not found["missing"] and found["diffs"][0]["changes"][0].startswith(
        "#card opacity 0.90625 → ")


def test_the_plugin_failure_text_has_the_scene_line(tmp_path: Path) -> None:
    from scratch_project import pytest_run

    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = ["examples/*.nf.svg"]\n')
    write(root)
    done = pytest_run(root, "--nf-record")
    assert done.returncode == 0, done.stdout + done.stderr
    write(root, fade=0.25)
    done = pytest_run(root, "--nf-check", "--nf-strict")  # an edit fails under --nf-strict
    assert done.returncode == 1, done.stdout + done.stderr
    assert "scene: different scene in every differing frame: in frames 1–7 only " \
           "#card's opacity differs" in done.stdout, done.stdout
    assert "frame 1: #card opacity 0.9375 → 0.90625" in done.stdout


def test_review_shows_the_scene_line(tmp_path: Path) -> None:
    import pexpect
    from scratch_project import env, write_film
    from scratch_project import nf as nf_cli
    from test_hints import cli_project

    root = cli_project(tmp_path / "p")
    assert nf_cli(root, "digest", "--record").returncode == 0
    write_film(root, "a", "#00cc00")
    assert nf_cli(root, "digest", "--check").returncode == 1
    child = pexpect.spawn(sys.executable, ["-m", "nanoframes", "review"], cwd=str(root),
                          env=env(root), encoding="utf-8", timeout=120)
    child.expect("CHANGED films/a.nf.svg: changed, source changed")
    child.expect(r"scene: different scene in every differing frame: in frames 0–1 only "
                 r"#box's fill differs")
    child.expect("frame 0: #box fill #cc0000 → #00cc00")
    child.expect(r"\[q\]uit\? ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
