"""The ledger's rules as a table (``policy.plan_record``), without rendering: the
front-end tests (test_front_ends.py) show both front ends obey them for real."""

from __future__ import annotations

import hashlib
from pathlib import Path

from nanoframes.determinism.identity import TOOLCHAIN_PARTS
from nanoframes.determinism.ledger import Entry, Ledger
from nanoframes.determinism.policy import (
    mixed_toolchains,
    plan_record,
    stale_keys,
    verdict_from_json,
    verdict_to_json,
)
from nanoframes.determinism.verdict import Kind, Verdict
from nanoframes.frames.digest import SHORT


def h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def entry(frames: list[str], samples: tuple[int, ...] | None = None, total: int | None = None,
          source: str = "s", toolchain: str = "t") -> Entry:
    """An entry whose frame ``i`` has content ``frames[i]`` (only ``samples`` kept)."""
    total = total or len(frames)
    indices = samples if samples is not None else tuple(range(total))
    digests = tuple(h(frames[i])[:SHORT] for i in indices)
    return Entry(digest=h("|".join(digests)), frames=total, sampled=samples is not None,
                 samples=samples, identity={"source": h(source), "media": "none",
                                            "fonts": "none", "toolchain": h(toolchain)},
                 toolchain_parts={p: "x" for p in TOOLCHAIN_PARTS}, frame_digests=digests)


FRAMES = ["f0", "f1", "f2", "f3"]
FULL = entry(FRAMES)
SAMPLED = entry(FRAMES, samples=(0, 3))


def plan(recorded: Entry | None, fresh: Entry, force: bool = False):
    ledger = Ledger(Path("l.json"), {} if recorded is None else {"k": recorded})
    return plan_record(ledger, {"k": fresh}, force=force)


def test_sampled_over_full_keeps_the_full_entry() -> None:
    assert plan(FULL, SAMPLED).updates == {"k": FULL}


def test_full_over_sampled_takes_the_full_reading() -> None:
    assert plan(SAMPLED, FULL).updates == {"k": FULL}


def test_absent_and_changed_take_the_reading() -> None:
    assert plan(None, SAMPLED).updates == {"k": SAMPLED}
    moved = entry(["g0", "f1", "f2", "f3"], source="s2")
    assert plan(FULL, moved).updates == {"k": moved}


def test_a_regression_is_refused_unless_forced() -> None:
    drifted = entry(["f0", "XX", "f2", "f3"])  # same inputs, frame 1 differs
    refused = plan(FULL, drifted)
    assert refused.updates == {}
    assert [(v.key, v.kind, v.differing_frames) for v in refused.refused] == [
        ("k", Kind.REGRESSION, (1,))]
    forced = plan(FULL, drifted, force=True)
    assert forced.updates == {"k": drifted} and forced.refused == []


def test_disjoint_samples_record_nothing() -> None:
    other = entry(FRAMES, samples=(1, 2))
    assert plan(SAMPLED, other).updates == {}


def test_stale_only_on_a_full_recording(tmp_path: Path) -> None:
    (tmp_path / "here.nf.svg").write_text("")
    ledger = Ledger(tmp_path / "l.json", {"gone.nf.svg": FULL, "here.nf.svg": FULL,
                                          "unseen-gone.nf.svg": FULL})
    assert stale_keys(ledger, tmp_path, {"gone.nf.svg"}) == ["unseen-gone.nf.svg"]
    assert plan_record(ledger, {}, root=tmp_path).removed == []
    assert plan_record(ledger, {}, root=tmp_path, seen=()).removed == [
        "gone.nf.svg", "unseen-gone.nf.svg"]


def test_mixed_toolchains_are_named() -> None:
    assert mixed_toolchains({"a": FULL, "b": FULL}) is None
    line = mixed_toolchains({"a": FULL, "b": entry(FRAMES, toolchain="u")}, "--nf-record")
    assert line is not None and line.startswith(
        "entries recorded with 2 toolchains, expected one recording pass (`pytest --nf-record` "
        "re-records them): ")


def test_verdict_json_round_trip() -> None:
    v = Verdict("k", Kind.REGRESSION, reasons=(), digest=h("d"), differing_frames=(1, 2),
                compared_frames=4, note="n")
    data = verdict_to_json(v, "--nf-record")
    assert verdict_from_json(data) == v
    assert data["line"] == v.line("--nf-record")
