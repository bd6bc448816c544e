"""Every verdict, made to happen for real: record, change one thing, check.

Inputs are edited on disk and films re-rendered through ThorVG; the toolchain
and regression cases alter what the ledger recorded (or perturb the raster
output after a real render), since neither can be moved honestly in a test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from fontTools import subset
from fontTools.ttLib import TTFont
from ledger_edit import reseal
from PIL import Image

from nanoframes.cli import main
from nanoframes.frames.film import Film
from nanoframes.text.fonts import bundled_fonts_dir

SVG = """<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="10" data-duration="{duration}">
  <rect id="box" x="1" y="1" width="8" height="8" fill="{fill}"/>
  {extra}
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box", "keyframes": [{{"t": 0, "x": 1}}, {{"t": 1, "x": 30}}]}}]}}
  </script>
</svg>
"""


def write(root: Path, name: str, fill: str = "#c03030", duration: str = "1",
          extra: str = "") -> Path:
    path = root / "examples" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SVG.format(fill=fill, duration=duration, extra=extra))
    # Same-size rewrites within one clock tick must still read as a new version.
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    return path


def png(path: Path, rgba: tuple[int, int, int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGBA", (4, 4), rgba).save(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.nanoframes]\nfont-dirs = ["fonts"]\n'
        '[tool.nanoframes.excused]\n"examples/excused.nf.svg" = "waiting for a new face"\n')
    return tmp_path


def digest(capsys, *args: str) -> tuple[int, list[str]]:
    status = main(["digest", *args])
    return status, capsys.readouterr().out.splitlines()


def ledger_doc(root: Path) -> dict:
    return json.loads((root / "tests" / "digests.json").read_text())


def save_ledger(root: Path, doc: dict) -> None:
    (root / "tests" / "digests.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def test_match_and_absent(proj: Path, capsys) -> None:
    write(proj, "a.nf.svg")
    assert digest(capsys, "--check") == (1, [
        "ABSENT examples/a.nf.svg: absent, no ledger entry; record it with --record",
        "1 composition: 1 absent",
        "next: nanoframes review (each reading: accept, reject or skip); or all the changes "
        "at once: nanoframes accept --all-changed"])
    digest(capsys, "--record")
    assert digest(capsys, "--check") == (0, ["MATCH examples/a.nf.svg: match",
                                             "1 composition: 1 match"])


def test_editing_a_source_is_changed_source(proj: Path, capsys) -> None:
    write(proj, "a.nf.svg")
    digest(capsys, "--record")
    write(proj, "a.nf.svg", fill="#30c030")
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out[0] == ("CHANGED examples/a.nf.svg: changed, source changed "
                      "(10 of 10 frames differ: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)")


def test_changing_an_images_bytes_is_changed_media(proj: Path, capsys) -> None:
    png(proj / "examples" / "logo.png", (255, 0, 0, 255))
    write(proj, "a.nf.svg", extra='<image href="logo.png" x="30" y="10" width="8" height="8"/>')
    digest(capsys, "--record")
    png(proj / "examples" / "logo.png", (0, 0, 255, 255))
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out[0].startswith("CHANGED examples/a.nf.svg: changed, media changed (10 of 10 ")


def _face(src: str, dest: Path) -> None:
    """A tiny face of the family "Swap Test", cut from a bundled face."""
    font = TTFont(str(bundled_fonts_dir() / src))
    cutter = subset.Subsetter(subset.Options())
    cutter.populate(text="Hi")
    cutter.subset(font)
    for rec in font["name"].names:
        if rec.nameID in (1, 16):
            rec.string = "Swap Test"
    dest.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(dest))


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    # A fresh process per run: ThorVG's registered faces are process-global, so
    # one process cannot draw two versions of one face name.
    env = {k: v for k, v in os.environ.items() if k != "EXCUSED_COMPOSITIONS"}
    return subprocess.run([sys.executable, "-m", "nanoframes", "digest", *args], cwd=root,
                          capture_output=True, text=True, env=env)


def test_swapping_a_face_file_is_changed_fonts(proj: Path) -> None:
    face = proj / "fonts" / "Brand.ttf"
    _face("NotoSans-Regular.ttf", face)
    write(proj, "a.nf.svg", extra="<text x='2' y='20' font-family='\"Swap Test\"'>Hi</text>")
    assert _cli(proj, "--record").returncode == 0
    assert _cli(proj, "--check").returncode == 0
    _face("NotoSans-Bold.ttf", face)
    run = _cli(proj, "--check")
    assert run.returncode == 1, run.stderr
    line = run.stdout.splitlines()[0]
    assert line.startswith("CHANGED examples/a.nf.svg: changed, fonts changed (")
    assert "source" not in line and "toolchain" not in line


def test_altering_a_recorded_toolchain_part_is_changed_toolchain_naming_it(
        proj: Path, capsys) -> None:
    write(proj, "a.nf.svg")
    digest(capsys, "--record")
    doc = ledger_doc(proj)
    entry = doc["compositions"]["examples/a.nf.svg"]
    entry["toolchain_parts"]["libthorvg"] = "0" * 64
    entry["identity"]["toolchain"] = "1" * 64
    entry["frame_digests"][4] = "f" * 16  # the old library drew frame 4 differently
    entry["digest"] = "2" * 64
    reseal(entry)
    save_ledger(proj, doc)
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out[0] == ("CHANGED examples/a.nf.svg: changed, toolchain changed (libthorvg) "
                      "(1 of 10 frames differ: 4)")


def test_a_toolchain_move_that_draws_the_same_is_a_match_that_says_so(
        proj: Path, capsys) -> None:
    write(proj, "a.nf.svg")
    digest(capsys, "--record")
    doc = ledger_doc(proj)
    entry = doc["compositions"]["examples/a.nf.svg"]
    entry["toolchain_parts"]["nanoframes"] = "0.0.9"
    entry["identity"]["toolchain"] = "1" * 64
    save_ledger(proj, doc)
    assert digest(capsys, "--check")[1][0] == (
        "MATCH examples/a.nf.svg: match (recorded inputs moved: toolchain changed (nanoframes))")


def test_reasons_come_in_a_fixed_order_with_the_frame_count(proj: Path, capsys) -> None:
    png(proj / "examples" / "logo.png", (255, 0, 0, 255))
    write(proj, "a.nf.svg", extra='<image href="logo.png" width="4" height="4"/>')
    digest(capsys, "--record")
    doc = ledger_doc(proj)
    doc["compositions"]["examples/a.nf.svg"]["toolchain_parts"]["modules"] = "0" * 64
    save_ledger(proj, doc)
    png(proj / "examples" / "logo.png", (0, 255, 0, 255))
    write(proj, "a.nf.svg", duration="2", extra='<image href="logo.png" width="4" height="4"/>')
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out[0] == ("CHANGED examples/a.nf.svg: changed, source changed, media changed, "
                      "toolchain changed (modules), frame count 10 → 20")


def test_a_recorded_digest_altered_with_the_identity_kept_is_a_regression(
        proj: Path, capsys) -> None:
    write(proj, "long.nf.svg", duration="18")
    digest(capsys, "--record")
    doc = ledger_doc(proj)
    entry = doc["compositions"]["examples/long.nf.svg"]
    assert entry["frames"] == 180
    for i in (12, 13, 57):
        entry["frame_digests"][i] = "0" * 16
    entry["digest"] = "3" * 64
    reseal(entry)
    save_ledger(proj, doc)
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out[0] == "REGRESSION examples/long.nf.svg: regression, 3 of 180 frames differ: " \
                     "12, 13, 57"


@pytest.fixture
def perturbed(monkeypatch: pytest.MonkeyPatch):
    """A test-only perturbation of the raster output: frames really rendered by ThorVG,
    then one pixel flipped in the frames whose document draws the box at x=1."""
    real = Film.raster

    def raster(self, doc: bytes) -> numpy.ndarray:
        frame = real(self, doc)
        if b'x="1"' in doc:
            frame = frame.copy()
            frame[0, 0, 0] ^= 0xFF
        return frame

    monkeypatch.setattr(Film, "raster", raster)


def test_a_perturbed_raster_with_identical_inputs_is_a_regression(
        proj: Path, capsys, request) -> None:
    write(proj, "a.nf.svg")
    digest(capsys, "--record")
    request.getfixturevalue("perturbed")
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out[0] == "REGRESSION examples/a.nf.svg: regression, 1 of 10 frames differ: 0"


def test_recording_refuses_to_overwrite_a_regression_unless_forced(
        proj: Path, capsys, request) -> None:
    write(proj, "a.nf.svg")
    digest(capsys, "--record")
    before = (proj / "tests" / "digests.json").read_bytes()
    request.getfixturevalue("perturbed")
    status, out = digest(capsys, "--record")
    assert status == 1
    assert out[0] == ("REFUSED examples/a.nf.svg: regression, 1 of 10 frames differ: 0; "
                      "not recorded (--force overwrites it)")
    assert (proj / "tests" / "digests.json").read_bytes() == before
    status, out = digest(capsys, "--record", "--force")
    # what --force accepts is said first, before the ledger is written (evidence.md)
    assert status == 0 and out[0].startswith("accepting examples/a.nf.svg: regression")
    assert any(line.startswith("updated    examples/a.nf.svg: regression") for line in out)
    assert digest(capsys, "--check")[0] == 0


def test_an_entry_whose_file_is_gone_is_stale_on_a_full_sweep(proj: Path, capsys) -> None:
    write(proj, "a.nf.svg")
    gone = write(proj, "gone.nf.svg")
    digest(capsys, "--record")
    gone.unlink()
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out == ["MATCH examples/a.nf.svg: match",
                   "STALE examples/gone.nf.svg: stale, the ledger has an entry but the file "
                   "is gone; --record drops it",
                   "2 compositions: 1 match, 1 stale",
                   "next: nanoframes digest --record --all drops the stale entries"]
    assert digest(capsys, "--check", "--all")[0] == 1
    assert digest(capsys, "--check", "examples/a.nf.svg")[0] == 0


def test_excused_from_configuration_is_printed_and_exit_0(proj: Path, capsys) -> None:
    write(proj, "excused.nf.svg")
    digest(capsys, "--record")
    write(proj, "excused.nf.svg", fill="#000000")
    for _ in range(2):  # on every run
        status, out = digest(capsys, "--check")
        assert status == 0
        assert out[0].startswith("EXCUSED examples/excused.nf.svg: changed, source changed (")
        assert out[0].endswith("(excused: waiting for a new face)")
    status, out = digest(capsys, "--check", "--json")
    data = json.loads("\n".join(out))
    assert status == data["exit_status"] == 0
    assert data["verdicts"][0]["excused"] == "waiting for a new face"
    assert capsys.readouterr().err == ""  # (already consumed with the JSON run's output)


def test_excused_lines_go_to_stderr_with_json(proj: Path) -> None:
    write(proj, "excused.nf.svg")
    assert _cli(proj, "--record").returncode == 0
    write(proj, "excused.nf.svg", fill="#000000")
    run = _cli(proj, "--check", "--json")
    assert run.returncode == 0
    json.loads(run.stdout)
    assert run.stderr.startswith("EXCUSED examples/excused.nf.svg: changed, source changed")


def test_excused_from_the_environment(proj: Path, capsys, monkeypatch) -> None:
    write(proj, "a.nf.svg")
    write(proj, "b.nf.svg")
    monkeypatch.setenv("EXCUSED_COMPOSITIONS", "a.nf.svg examples/b.nf.svg")
    status, out = digest(capsys, "--check")
    assert status == 0
    assert out[:2] == [
        "EXCUSED examples/a.nf.svg: absent, no ledger entry; record it with --record "
        "(excused: EXCUSED_COMPOSITIONS)",
        "EXCUSED examples/b.nf.svg: absent, no ledger entry; record it with --record "
        "(excused: EXCUSED_COMPOSITIONS)"]


def test_an_excused_composition_that_matches_is_reported(proj: Path, capsys) -> None:
    write(proj, "excused.nf.svg")
    digest(capsys, "--record")
    status, out = digest(capsys, "--check")
    assert status == 0
    assert out[0] == ("EXCUSED examples/excused.nf.svg: match (excused: waiting for a new face; "
                      "it matches: remove the exemption)")
    status, out = digest(capsys, "--record")
    assert "EXCUSED examples/excused.nf.svg: match" in "\n".join(out)


def test_a_broken_excused_composition_is_still_an_error(proj: Path, capsys) -> None:
    (proj / "examples").mkdir()
    (proj / "examples" / "excused.nf.svg").write_text("<svg")
    status, out = digest(capsys, "--check")
    assert status == 2 and out[0].startswith("ERROR examples/excused.nf.svg: error, ")
