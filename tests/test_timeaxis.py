"""The time axis of a film's difference from frame digests alone (frames/timeaxis.py):
unit cases, properties over random shifts (Hypothesis), and a real shift drawn by ThorVG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanoframes.cli import main
from nanoframes.frames.timeaxis import HELD, NEW, SAME, SHIFTED, TimeAxis, time_axis

REC = [f"r{i:03d}" for i in range(121)]


def test_one_frame_late_reads_as_the_issue_says() -> None:
    fresh = REC[:30] + [REC[29]] + REC[30:120]
    axis = time_axis(REC, fresh)
    assert axis.first_difference == 30
    assert axis.summary == ("first difference at frame 30; frame 30 holds recorded frame 29; "
                            "frames 31–120 are recorded frames 30–119: one frame late from "
                            "frame 30; recorded frame 120 removed from the end")
    shifted = [s for s in axis.segments if s.kind == SHIFTED]
    assert [(s.start, s.end, s.recorded_start, s.recorded_end, s.offset) for s in shifted] \
        == [(31, 120, 30, 119, 1)]


def test_dropped_duplicated_added_removed() -> None:
    dropped = time_axis(REC, REC[:10] + REC[12:])
    assert dropped.dropped == ((10, 11),)
    assert "frames 10–118 are recorded frames 12–120: 2 frames early from frame 12" \
        in dropped.summary
    frozen = time_axis(REC, REC[:20] + [REC[20]] * 5 + REC[25:])
    assert [(s.kind, s.start, s.end, s.recorded_start) for s in frozen.segments
            if s.kind != SAME] == [(HELD, 21, 24, 20)]
    assert frozen.dropped == ((21, 24),)
    longer = time_axis(REC, REC + ["x", "y"])
    assert longer.added_at_end == (121, 122) and longer.first_difference == 121
    assert longer.summary == "first difference at frame 121; 2 frames added at the end " \
                             "(frames 121–122)"
    shorter = time_axis(REC, REC[:100])
    assert shorter.removed_at_end == (100, 120)
    assert shorter.summary.endswith("recorded frames 100–120 removed from the end")


def test_new_pixels_in_place_did_not_move_in_time() -> None:
    axis = time_axis(REC, REC[:50] + ["x", "y"] + REC[52:])
    assert not axis.moved_in_time
    assert axis.summary == ("first difference at frame 50; frames 50–51 match no recorded "
                            "frame; no frame moved in time")
    assert [s.kind for s in axis.segments] == [SAME, NEW, SAME]


def test_equal_films_and_empty_ones() -> None:
    assert time_axis(REC, REC).first_difference is None
    assert time_axis([], ["a"]).added_at_end == (0, 0)
    assert time_axis(["a"], []).removed_at_end == (0, 0)


def test_json_round_trip() -> None:
    axis = time_axis(REC, REC[:30] + [REC[29]] + REC[30:120] + ["n"])
    data = json.loads(json.dumps(axis.as_dict()))
    assert TimeAxis.from_json(data) == axis
    assert data["summary"] == axis.summary


def _check_mapping(recorded: list[str], fresh: list[str], axis: TimeAxis) -> None:
    """Every segment's claim holds frame by frame, and the segments tile the film."""
    covered = 0
    for s in axis.segments:
        assert s.start == covered
        covered = s.end + 1
        for j in range(s.start, s.end + 1):
            if s.kind == NEW:
                assert fresh[j] not in recorded
            elif s.kind == HELD:
                assert fresh[j] == recorded[s.recorded_start]
            else:
                assert fresh[j] == recorded[j - s.offset]
                assert (s.kind == SAME) == (s.offset == 0)
    assert covered == len(fresh)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 300), at=st.integers(0, 299), k=st.integers(-20, 20),
       held=st.booleans())
def test_random_shifts_are_found(n: int, at: int, k: int, held: bool) -> None:
    recorded = [f"f{i}" for i in range(n)]
    at = at % n
    if k >= 0:  # k frames late from frame `at`: the frame before is held (or repeated)
        fill = [recorded[at - 1] if held and at else "blank"] * k
        fresh = recorded[:at] + fill + recorded[at:]
    else:  # -k frames early: recorded frames at..at-k-1 dropped
        fresh = recorded[:at] + recorded[at - k:]
    axis = time_axis(recorded, fresh)
    _check_mapping(recorded, fresh, axis)
    if k == 0:
        assert axis.first_difference is None
        return
    assert axis.first_difference == at
    if k > 0 and at < n:
        late = [s for s in axis.segments if s.kind == SHIFTED]
        assert late and late[0].offset == k and late[0].recorded_start == at
        assert axis.added_at_end == (n, n + k - 1)
    if k < 0 and at - k < n:
        assert axis.dropped == ((at, min(at - k, n) - 1),)
        early = [s for s in axis.segments if s.kind == SHIFTED]
        assert early and early[0].offset == k


@settings(max_examples=100, deadline=None)
@given(recorded=st.lists(st.sampled_from("abcdefgh"), max_size=60),
       fresh=st.lists(st.sampled_from("abcdefghxyz"), max_size=60))
def test_any_two_films_are_described_truthfully(recorded: list[str], fresh: list[str]) -> None:
    axis = time_axis(recorded, fresh)
    _check_mapping(recorded, fresh, axis)
    first = next((j for j in range(min(len(recorded), len(fresh)))
                  if recorded[j] != fresh[j]), None)
    if first is None and len(recorded) != len(fresh):
        first = min(len(recorded), len(fresh))
    assert axis.first_difference == first


def test_linear_in_frames_by_counting_comparisons() -> None:
    """Counted work, not time: digest comparisons grow linearly with the film."""
    class Counted(str):
        calls = 0

        def __eq__(self, other: object) -> bool:
            Counted.calls += 1
            return str.__eq__(self, other)

        __hash__ = str.__hash__

    def cost(n: int) -> int:
        recorded = [Counted(f"f{i}") for i in range(n)]
        fresh = recorded[: n // 3] + [Counted("new")] * 5 + recorded[n // 3:] + recorded[:7]
        Counted.calls = 0
        time_axis(recorded, fresh)
        return Counted.calls

    small, large = cost(2_000), cost(20_000)
    assert large <= 12 * small  # 10× the frames: about 10× the comparisons, never 100×


SVG = """<svg xmlns="http://www.w3.org/2000/svg" data-width="32" data-height="12"
     data-fps="4" data-duration="3">
  <rect width="32" height="12" fill="#101820"/>
  <rect id="box" x="1" y="2" width="6" height="6" fill="#e0a020"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box",
      "keyframes": [{{"t": {start}, "x": 1}}, {{"t": {end}, "x": 23}}]}}]}}
  </script>
</svg>
"""


@pytest.fixture
def shifted_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> Path:
    """Recorded with keyframes at 0.5 s–2 s, then edited to start one frame (0.25 s) later."""
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    comp = tmp_path / "examples" / "slide.nf.svg"
    comp.parent.mkdir()
    comp.write_text(SVG.format(start=0.5, end=2))
    assert main(["digest", "--record"]) == 0
    comp.write_text(SVG.format(start=0.75, end=2.25))
    capsys.readouterr()
    return tmp_path


def test_a_keyframe_edit_one_frame_later_is_named_in_check(shifted_project: Path,
                                                           capsys) -> None:
    assert main(["digest", "--check"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("CHANGED examples/slide.nf.svg: changed, source changed")
    assert ("  time: first difference at frame 3; frame 3 holds recorded frame 2; "
            "frames 4–8 are recorded frames 3–7: one frame late from frame 3") in out


def test_the_time_axis_in_json(shifted_project: Path, capsys) -> None:
    main(["digest", "--check", "--json"])
    verdict = json.loads(capsys.readouterr().out)["verdicts"][0]
    axis = verdict["time_axis"]
    assert axis["first_difference"] == 3 and axis["moved_in_time"]
    assert {"kind": SHIFTED, "frames": [4, 8], "recorded": [3, 7], "offset": 1} \
        in axis["segments"]


def test_the_time_axis_in_pytest_failure_text(shifted_project: Path, pytester) -> None:
    (shifted_project / "pyproject.toml").write_text(
        '[tool.nanoframes]\n[tool.pytest.ini_options]\ntestpaths = ["examples"]\n')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-check",
                                           "--nf-strict", str(shifted_project / "examples"))
    text = result.stdout.str()
    assert result.ret == 1, text
    assert "time: first difference at frame 3; frame 3 holds recorded frame 2" in text


def test_the_time_axis_in_the_html_report(shifted_project: Path, capsys) -> None:
    from nanoframes.evidence.html import page

    main(["digest", "--check", "--json"])
    verdict = json.loads(capsys.readouterr().out)["verdicts"][0]
    html = page([{**verdict, "composition": verdict["key"]}], "", "report")
    assert ('<p class="time">time: first difference at frame 3; frame 3 holds recorded '
            'frame 2; frames 4–8 are recorded frames 3–7') in html
