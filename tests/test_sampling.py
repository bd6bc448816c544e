"""``--samples N``: a cheap reading is recorded as one and never mistaken for a whole film."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ledger_edit import reseal

from nanoframes.cli import main
from nanoframes.determinism.ledger import read_ledger
from nanoframes.determinism.reading import read_film, sample_indices

SVG = """<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="10" data-duration="3">
  <rect id="box" x="1" y="1" width="8" height="8" fill="#3060c0"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#box", "keyframes": [{"t": 0, "x": 1}, {"t": 2.9, "x": 30}]}]}
  </script>
</svg>
"""
KEY = "examples/a.nf.svg"


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "a.nf.svg").write_text(SVG)
    return tmp_path


def digest(capsys, *args: str) -> tuple[int, list[str]]:
    status = main(["digest", *args])
    return status, capsys.readouterr().out.splitlines()


def alter(root: Path, frames: list[int]) -> None:
    """Alter recorded frame digests while keeping the identity: a regression there."""
    path = root / "tests" / "digests.json"
    doc = json.loads(path.read_text())
    entry = doc["compositions"][KEY]
    index = {f: n for n, f in enumerate(entry.get("samples") or range(entry["frames"]))}
    for f in frames:
        entry["frame_digests"][index[f]] = "0" * 16
    entry["digest"] = "4" * 64
    reseal(entry)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def test_a_sampled_record_says_so_with_its_indices(proj: Path, capsys) -> None:
    assert digest(capsys, "--record", "--samples", "4")[0] == 0
    entry = read_ledger(proj / "tests" / "digests.json").entries[KEY]
    assert entry.sampled is True and entry.samples == (0, 10, 19, 29) == sample_indices(30, 4)
    full = read_film(proj / "examples" / "a.nf.svg")
    assert entry.frame_digests == tuple(full.frame_digests[i][:16] for i in entry.samples)
    raw = json.loads((proj / "tests" / "digests.json").read_text())["compositions"][KEY]
    assert raw["sampled"] is True and raw["samples"] == [0, 10, 19, 29]


def test_samples_at_or_above_the_frame_count_are_a_full_reading(proj: Path, capsys) -> None:
    digest(capsys, "--record", "--samples", "30")
    entry = read_ledger(proj / "tests" / "digests.json").entries[KEY]
    assert entry.sampled is False and entry.samples is None and len(entry.frame_digests) == 30


def test_a_sampled_check_of_a_full_entry_compares_its_frames_only(proj: Path, capsys) -> None:
    digest(capsys, "--record")
    alter(proj, [3, 7])  # not among the samples 0, 10, 19, 29
    assert digest(capsys, "--check")[0] == 1  # a full check sees them
    status, out = digest(capsys, "--check", "--samples", "4")
    assert status == 0
    assert out[0] == "MATCH examples/a.nf.svg: match; a sampled check: compared 4 of 30 frames"


def test_a_sampled_check_finds_a_regression_among_its_frames(proj: Path, capsys) -> None:
    digest(capsys, "--record")
    alter(proj, [19])
    status, out = digest(capsys, "--check", "--samples", "4")
    assert status == 1
    assert out[0] == ("REGRESSION examples/a.nf.svg: regression, 1 of 4 frames differ: 19; "
                      "a sampled check: compared 4 of 30 frames")


def test_a_full_check_of_a_sampled_entry_says_the_entry_was_sampled(proj: Path, capsys) -> None:
    digest(capsys, "--record", "--samples", "5")
    status, out = digest(capsys, "--check")
    assert status == 0
    assert out[0] == ("MATCH examples/a.nf.svg: match; the entry was sampled (5 of 30 frames); "
                      "this check compared 5 frames only")
    status, out = digest(capsys, "--check", "--json")
    verdict = json.loads("\n".join(out))["verdicts"][0]
    assert verdict["note"].startswith("the entry was sampled") and verdict["compared_frames"] == 5


def test_a_sampled_check_with_a_moved_input_is_changed(proj: Path, capsys) -> None:
    digest(capsys, "--record")
    path = proj / "examples" / "a.nf.svg"
    path.write_text(SVG.replace("#3060c0", "#3060c1"))
    status, out = digest(capsys, "--check", "--samples", "3")
    assert status == 1
    assert out[0] == ("CHANGED examples/a.nf.svg: changed, source changed (3 of 3 frames differ: "
                      "0, 15, 29); a sampled check: compared 3 of 30 frames")


def test_a_sampled_record_never_replaces_a_full_entry_it_agrees_with(proj: Path, capsys) -> None:
    digest(capsys, "--record")
    before = (proj / "tests" / "digests.json").read_bytes()
    status, out = digest(capsys, "--record", "--samples", "3")
    assert status == 0 and out[0] == "unchanged  examples/a.nf.svg"
    assert (proj / "tests" / "digests.json").read_bytes() == before


def test_sampling_with_workers_gives_the_same_digests(proj: Path, capsys) -> None:
    serial = digest(capsys, "--samples", "7")[1]
    assert digest(capsys, "--samples", "7", "-j", "2")[1] == serial
    assert "(7 of 30 frames sampled)" in serial[0]
