"""Every verdict of the README's table, from constructed readings and entries."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from nanoframes.config import Config
from nanoframes.determinism.ledger import Entry
from nanoframes.determinism.verdict import (
    EXCUSED_ENV,
    Kind,
    Reading,
    Verdict,
    error,
    excuse_for,
    excused_list,
    exit_status,
    judge,
    stale,
)
from nanoframes.frames.digest import SHORT, film_digest

KEY = "examples/card.nf.svg"


def hexof(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


IDENTITY = {"source": hexof("src"), "media": "none", "fonts": hexof("fonts"),
            "toolchain": hexof("tc")}
PARTS = {"thorvg-python": "1.1.3", "libthorvg": hexof("lib"), "nanoframes": "0.1.0",
         "modules": hexof("mod")}


def frames_of(n: int, changed: dict[int, str] | None = None) -> list[str]:
    changed = changed or {}
    return [hexof(changed.get(i, f"frame{i}")) for i in range(n)]


def reading(n: int = 6, changed: dict[int, str] | None = None,
            indices: tuple[int, ...] | None = None, **inputs: str) -> Reading:
    full = frames_of(n, changed)
    indices = indices if indices is not None else tuple(range(n))
    digests = tuple(full[i] for i in indices)
    identity = {k: v for k, v in inputs.items() if k in IDENTITY}
    parts = {k.replace("_", "-"): v for k, v in inputs.items() if k not in IDENTITY}
    return Reading(key=KEY, identity={**IDENTITY, **identity},
                   toolchain_parts={**PARTS, **parts}, frames=n, indices=indices,
                   frame_digests=digests, digest=film_digest(digests))


def entry(n: int = 6, samples: tuple[int, ...] | None = None) -> Entry:
    full = frames_of(n)
    indices = samples if samples is not None else tuple(range(n))
    digests = [full[i] for i in indices]
    return Entry(digest=film_digest(digests), frames=n, sampled=samples is not None,
                 samples=samples, identity=dict(IDENTITY), toolchain_parts=dict(PARTS),
                 frame_digests=tuple(d[:SHORT] for d in digests))


# --- the kinds ---------------------------------------------------------------------


def test_match() -> None:
    v = judge(reading(), entry())
    assert v.kind is Kind.MATCH and v.ok
    assert v.reasons == () and v.note is None and v.compared_frames == 6
    assert v.summary() == "match"
    assert v.line() == f"MATCH {KEY}: match"


def test_absent() -> None:
    v = judge(reading(), None)
    assert v.kind is Kind.ABSENT and not v.ok
    assert v.digest == reading().digest
    assert v.line() == f"ABSENT {KEY}: absent, no ledger entry; record it with --record"
    assert v.summary(record_hint="--nf-record").endswith("record it with --nf-record")


def test_regression_names_the_frames_that_differ() -> None:
    v = judge(reading(changed={1: "x", 4: "y"}), entry())
    assert v.kind is Kind.REGRESSION and not v.ok
    assert v.reasons == ()
    assert v.differing_frames == (1, 4) and v.compared_frames == 6
    assert v.summary() == "regression, 2 of 6 frames differ: 1, 4"


def test_a_long_regression_lists_ten_frames_then_an_ellipsis() -> None:
    v = judge(reading(30, changed={i: "x" for i in range(0, 30, 2)}), entry(30))
    assert len(v.differing_frames) == 15
    assert v.summary() == ("regression, 15 of 30 frames differ: "
                           "0, 2, 4, 6, 8, 10, 12, 14, 16, 18, …")


def test_a_regression_with_no_differing_recorded_frame_still_says_so() -> None:
    e = entry()
    tampered = Entry(**{**e.__dict__, "digest": hexof("other")})
    v = judge(reading(), tampered)
    assert v.kind is Kind.REGRESSION and v.differing_frames == ()
    assert "no recorded frame digest does" in v.summary()


@pytest.mark.parametrize("name", ["source", "media", "fonts"])
def test_changed_names_the_input(name: str) -> None:
    v = judge(reading(changed={2: "x"}, **{name: hexof("moved")}), entry())
    assert v.kind is Kind.CHANGED and not v.ok
    assert v.reasons == (f"{name} changed",)
    assert v.summary() == f"changed, {name} changed (1 of 6 frames differ: 2)"


def test_changed_reasons_come_in_a_fixed_order() -> None:
    v = judge(reading(changed={0: "x"}, toolchain=hexof("t2"), libthorvg=hexof("lib2"),
                      fonts=hexof("f2"), thorvg_python="1.2.0", source=hexof("s2"),
                      modules=hexof("m2"), media=hexof("m")), entry())
    assert v.reasons == ("source changed", "media changed", "fonts changed",
                         "toolchain changed (thorvg-python, libthorvg, modules)")
    assert v.summary().startswith("changed, source changed, media changed, fonts changed, "
                                  "toolchain changed (thorvg-python, libthorvg, modules)")


def test_toolchain_names_each_part_that_moved() -> None:
    v = judge(reading(changed={0: "x"}, toolchain=hexof("t2"), libthorvg=hexof("lib2")),
              entry())
    assert v.reasons == ("toolchain changed (libthorvg)",)
    v = judge(reading(changed={0: "x"}, toolchain=hexof("t2"), nanoframes="0.2.0"), entry())
    assert v.reasons == ("toolchain changed (nanoframes)",)


def test_toolchain_digest_moved_without_a_named_part() -> None:
    v = judge(reading(changed={0: "x"}, toolchain=hexof("t2")), entry())
    assert v.kind is Kind.CHANGED and v.reasons == ("toolchain changed",)


def test_frame_count_change_is_changed_and_never_a_match() -> None:
    v = judge(reading(4), entry(6))
    assert v.kind is Kind.CHANGED
    assert v.reasons == ("frame count 6 → 4",)
    assert v.summary() == "changed, frame count 6 → 4"
    assert v.compared_frames == 0 and v.differing_frames == ()


def test_frame_count_comes_after_the_inputs() -> None:
    v = judge(reading(4, source=hexof("s2")), entry(6))
    assert v.reasons == ("source changed", "frame count 6 → 4")


def test_a_match_with_moved_inputs_says_so() -> None:
    v = judge(reading(libthorvg=hexof("lib2"), toolchain=hexof("t2")), entry())
    assert v.kind is Kind.MATCH and v.ok
    assert v.reasons == ("toolchain changed (libthorvg)",)
    assert v.summary() == "match (recorded inputs moved: toolchain changed (libthorvg))"


def test_stale_and_error() -> None:
    e = entry()
    v = stale("examples/gone.nf.svg", e)
    assert v.kind is Kind.STALE and not v.ok and v.digest == e.digest
    assert v.line().startswith("STALE examples/gone.nf.svg: stale, ")
    v = error(KEY, "examples/card.nf.svg:3: error[parse]: bad")
    assert v.kind is Kind.ERROR and not v.ok
    assert v.line() == f"ERROR {KEY}: error, examples/card.nf.svg:3: error[parse]: bad"


# --- sampled readings and entries ----------------------------------------------


def test_a_sampled_check_of_a_full_entry_matches_without_false_regression() -> None:
    r = reading(30, indices=(0, 10, 20))
    assert r.sampled and r.digest != entry(30).digest  # the film digests cannot agree
    v = judge(r, entry(30))
    assert v.kind is Kind.MATCH and v.compared_frames == 3
    assert v.note == "a sampled check: compared 3 of 30 frames"


def test_a_sampled_check_of_a_full_entry_finds_a_regression_in_its_samples() -> None:
    v = judge(reading(30, changed={10: "x", 11: "y"}, indices=(0, 10, 20)), entry(30))
    assert v.kind is Kind.REGRESSION
    assert v.differing_frames == (10,) and v.compared_frames == 3
    assert v.summary().startswith("regression, 1 of 3 frames differ: 10; a sampled check")


def test_a_full_check_of_a_sampled_entry_compares_the_samples() -> None:
    e = entry(180, samples=tuple(range(0, 180, 15)))
    v = judge(reading(180, changed={7: "not sampled"}), e)
    assert v.kind is Kind.MATCH and v.compared_frames == 12
    assert v.note == ("the entry was sampled (12 of 180 frames); "
                      "this check compared 12 frames only")
    v = judge(reading(180, changed={45: "x"}), e)
    assert v.kind is Kind.REGRESSION and v.differing_frames == (45,)


def test_a_sampled_check_of_a_sampled_entry_compares_the_common_frames() -> None:
    e = entry(30, samples=(0, 10, 20))
    v = judge(reading(30, indices=(0, 15, 20), changed={15: "x"}), e)
    assert v.kind is Kind.MATCH and v.compared_frames == 2
    assert "this check compared 2 frames only" in v.note


def test_disjoint_samples_with_the_same_inputs_cannot_be_judged() -> None:
    v = judge(reading(30, indices=(5, 15)), entry(30, samples=(0, 10, 20)))
    assert v.kind is Kind.ERROR and "nothing to compare" in v.error
    v = judge(reading(30, indices=(5, 15), source=hexof("s2")), entry(30, samples=(0, 10)))
    assert v.kind is Kind.CHANGED and v.reasons == ("source changed",)


def test_a_reading_needs_one_digest_per_index() -> None:
    with pytest.raises(ValueError):
        Reading(KEY, IDENTITY, PARTS, 3, (0, 1, 2), (hexof("a"),), hexof("a"))


# --- excused --------------------------------------------------------------------


def test_an_excused_non_match_is_ok_and_printed() -> None:
    v = judge(reading(changed={1: "x"}), entry(), excused="host lacks the brand font")
    assert v.kind is Kind.REGRESSION and v.ok
    assert v.line() == (f"EXCUSED {KEY}: regression, 1 of 6 frames differ: 1 "
                        "(excused: host lacks the brand font)")


def test_an_excused_match_is_reported_so_the_exemption_does_not_outlive_its_cause() -> None:
    v = judge(reading(), entry(), excused="flaky font")
    assert v.ok
    assert v.line() == (f"EXCUSED {KEY}: match "
                        "(excused: flaky font; it matches: remove the exemption)")


def test_excused_list_from_config_and_environment(tmp_path: Path) -> None:
    config = Config(root=tmp_path, excused={"./examples/a.nf.svg": "needs a font",
                                            "examples\\b.nf.svg": "windows path"})
    env = {EXCUSED_ENV: f"  c  examples/a.nf.svg {tmp_path}/examples/d.nf.svg "}
    excused = excused_list(config, env)
    assert excused == {
        "examples/a.nf.svg": "needs a font",  # configured reason wins
        "examples/b.nf.svg": "windows path",
        "c": EXCUSED_ENV,
        "examples/d.nf.svg": EXCUSED_ENV,
    }
    assert excused_list(config, {}) == {"examples/a.nf.svg": "needs a font",
                                        "examples/b.nf.svg": "windows path"}


def test_excuse_for_matches_path_file_name_stem_or_id() -> None:
    assert excuse_for("examples/a.nf.svg", {"examples/a.nf.svg": "r"}) == "r"
    assert excuse_for("examples/sub/a.nf.svg", {"a.nf.svg": "r"}) == "r"
    assert excuse_for("examples/sub/a.nf.svg", {"a": "r"}) == "r"
    assert excuse_for("examples/a.nf.svg", {"title": "r"}, composition_id="title") == "r"
    assert excuse_for("examples/a.nf.svg", {"examples/b.nf.svg": "r", "b": "r"}) is None
    assert excuse_for("examples/ab.nf.svg", {"a": "r"}) is None


def test_excused_via_environment_end_to_end(tmp_path: Path) -> None:
    excused = excused_list(Config(root=tmp_path), {EXCUSED_ENV: "card"})
    v = judge(reading(4), entry(6), excused=excuse_for(KEY, excused))
    assert v.kind is Kind.CHANGED and v.ok
    assert v.line().startswith(f"EXCUSED {KEY}: changed, frame count 6 → 4 "
                               f"(excused: {EXCUSED_ENV})")


# --- exit status -----------------------------------------------------------------


def test_exit_status() -> None:
    match = Verdict(KEY, Kind.MATCH)
    changed = Verdict(KEY, Kind.CHANGED, reasons=("source changed",))
    bad = Verdict(KEY, Kind.ERROR, error="boom")
    assert exit_status([]) == 0
    assert exit_status([match, Verdict(KEY, Kind.ABSENT, excused="r")]) == 0
    assert exit_status([match, changed]) == 1
    assert exit_status([match, Verdict(KEY, Kind.STALE)]) == 1
    assert exit_status([changed, bad, match]) == 2
    assert exit_status([Verdict(KEY, Kind.ERROR, error="boom", excused="r"), changed]) == 1
