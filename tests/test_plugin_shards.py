"""A check split into shards across machines with pytest-split (``--splits N
--group K``): together the shards run every composition once, and each shard's
verdicts are the unsplit run's. (Joining the partial ledgers that recording
shards write is ``nanoframes ledger merge``'s job, tested with that command.)"""

from __future__ import annotations

import json

import pytest

COMPOSITION = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="4" data-duration="1">
  <rect id="box" x="0" y="0" width="10" height="10" fill="{fill}"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box",
      "keyframes": [{{"t": 0, "x": 0}}, {{"t": 1, "x": 30}}]}}]}}
  </script>
</svg>
"""
NAMES = ("a", "b", "c", "d", "e")


def verdicts(pytester: pytest.Pytester, report: str) -> dict[str, tuple]:
    data = json.loads((pytester.path / report).read_text())
    return {v["key"]: (v["verdict"], v["outcome"], v["digest"]) for v in data["verdicts"]}


# Slow: a sharded check is pytest started once per shard plus the unsplit run
# (pytest-split runs in fresh processes); the films are 4 frames of 40×24, so the
# time is start-up (decision 0116 keeps it from recompiling plugins each time).
@pytest.mark.parametrize("splits", [2, 3])
def test_shards_cover_every_composition_with_the_unsplit_verdicts(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, splits: int) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    pytester.makefile(".toml", pyproject='[tool.nanoframes]\nledger = "digests.json"\n'
                      '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n')
    for n, name in enumerate(NAMES):
        (pytester.path / f"{name}.nf.svg").write_text(COMPOSITION.format(fill=f"#{n}0a0{n}0"))
    pytester.runpytest_subprocess("--nf-record").assert_outcomes(passed=len(NAMES))
    # one composition edited since: a CHANGED verdict to carry across, not only matches
    (pytester.path / "c.nf.svg").write_text(COMPOSITION.format(fill="#123456"))

    whole = pytester.runpytest_subprocess("--nf-check", "--nf-report", "whole.json")
    assert whole.ret == 0, whole.stdout.str()
    unsplit = verdicts(pytester, "whole.json")
    assert unsplit["c.nf.svg"][0] == "changed" and len(unsplit) == len(NAMES)

    seen: list[str] = []
    for group in range(1, splits + 1):
        report = f"shard-{group}.json"
        shard = pytester.runpytest_subprocess("--nf-check", "--splits", str(splits),
                                              "--group", str(group), "--nf-report", report)
        assert shard.ret == 0, shard.stdout.str()
        got = verdicts(pytester, report)
        assert got and all(got[key] == unsplit[key] for key in got), (group, got)
        seen += got
    assert sorted(seen) == sorted(unsplit)  # every composition, each in exactly one shard


# Slow: five pytest processes (record, each shard, the unsplit recording).
def test_recording_shards_merge_into_the_ledger_one_run_writes(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each shard records into its own copy of the committed ledger; ``nanoframes
    ledger merge`` joins the copies into the ledger an unsplit recording writes."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    pytester.makefile(".toml", pyproject='[tool.nanoframes]\nledger = "digests.json"\n'
                      '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n')
    root = pytester.path
    for n, name in enumerate(NAMES[:4]):
        (root / f"{name}.nf.svg").write_text(COMPOSITION.format(fill=f"#{n}0a0{n}0"))
    assert pytester.runpytest_subprocess("--nf-record").ret == 0
    base = root / "base.json"
    shutil.copy(root / "digests.json", base)  # the committed ledger
    # Since the commit: one composition edited, one added, one deleted.
    (root / "b.nf.svg").write_text(COMPOSITION.format(fill="#654321"))
    (root / "e.nf.svg").write_text(COMPOSITION.format(fill="#0000ff"))
    (root / "d.nf.svg").unlink()

    shards = []
    for group in (1, 2):
        shard = root / f"shard-{group}.json"
        shutil.copy(base, shard)
        run = pytester.runpytest_subprocess("--nf-record", "--nf-ledger", str(shard),
                                            "--splits", "2", "--group", str(group))
        assert run.ret == 0, run.stdout.str()
        shards.append(shard)
    unsplit = pytester.runpytest_subprocess("--nf-record")  # the ledger item drops d
    assert unsplit.ret == 0 and "removed d.nf.svg" in unsplit.stdout.str().replace("  ", " ")
    one_run = json.loads((root / "digests.json").read_text())

    merged = root / "merged.json"
    shutil.copy(shards[0], merged)
    exe = [sys.executable, "-m", "nanoframes", "ledger", "merge"]
    done = subprocess.run([*exe, str(base), str(merged), str(shards[1])], cwd=root,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(Path(merged).read_text()) == one_run
    assert sorted(one_run["compositions"]) == ["a.nf.svg", "b.nf.svg", "c.nf.svg", "e.nf.svg"]
