"""The self-test renders for real, in fresh processes, and names what differs."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from nanoframes.cli.selftest import run_selftest_cli
from nanoframes.config import load_config
from nanoframes.determinism import variations
from nanoframes.determinism.selftest import VARIATIONS, run, run_one

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.nf.svg"))

# 8 frames, every one different: a square sliding right.
SLIDE = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="48" data-height="32"
     data-fps="4" data-duration="2">
  <rect width="48" height="32" fill="#203040"/>
  <rect id="box" x="0" y="8" width="12" height="12" fill="#ffcc00"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#box",
      "keyframes": [{"t": 0, "x": 0}, {"t": 1.75, "x": 35}]}]}
  </script>
</svg>
"""

# A deliberately order-dependent render hook: each raster in a process nudges
# one pixel by the number of rasters that process did before. Installed only in
# self-test workers, through the job's ``setup`` callable.
ORDER_HOOK = """\
from nanoframes.frames import film as _film

def install():
    original = _film.Film.raster
    count = [0]

    def raster(self, doc):
        frame = original(self, doc).copy()
        frame[0, 0, 0] = (int(frame[0, 0, 0]) + count[0]) % 256
        count[0] += 1
        frame.flags.writeable = False
        return frame

    _film.Film.raster = raster
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    (tmp_path / "slide.nf.svg").write_text(SLIDE)
    return tmp_path


def by_name(result) -> dict:
    return {v.name: v for v in result.variations}


# Over 10 s: every example under every variation, each variation its own process
# (sampled to 6 frames a film).
def test_examples_reproduce_under_every_variation() -> None:
    # A sample of each film keeps this quick; `nanoframes digest --selftest` does them whole.
    result = run(EXAMPLES, load_config(ROOT), samples=6, per_frame=1)
    assert [c.key for c in result.compositions] == [
        p.relative_to(ROOT).as_posix() for p in EXAMPLES]
    assert result.ok, "\n".join(result.lines())
    for comp in result.compositions:
        assert [v.name for v in comp.variations] == list(VARIATIONS)
        v = by_name(comp)
        assert len(v["fresh-process-per-frame"].compared) == 1
        assert all(len(v[name].compared) == len(comp.indices) for name in VARIATIONS
                   if name != "fresh-process-per-frame")


def test_order_dependent_hook_is_caught_by_name(project: Path) -> None:
    (project / "order_hook.py").write_text(ORDER_HOOK)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(project), *filter(None, [os.environ.get("PYTHONPATH")])]))
    result = run_one(project / "slide.nf.svg", load_config(project), per_frame=3,
                     env=env, setup="order_hook:install")
    assert result.error is None
    v = by_name(result)
    assert not result.ok
    # Order and process layout move the picture ...
    for name in ("reversed-order", "shuffled-order", "fresh-process-per-frame"):
        assert v[name].differing, name
        assert v[name].error is None
    # reversed: frame i was the (7 - i)-th raster instead of the i-th: every frame moves
    assert v["reversed-order"].differing == tuple(range(8))
    # a fresh process per frame: each is its process's first raster, like frame 0 is
    assert v["fresh-process-per-frame"].differing == (4, 7)
    # ... what keeps the order does not.
    for name in ("threads-0", "threads-1", "threads-2", "locale", "tz", "hash-seed",
                 "dedup-off", "pipeline-off"):
        assert v[name].ok, name
    lines = "\n".join(result.lines())
    assert "DIFF  reversed-order" in lines and "first at frame 0" in lines
    assert "DIFF  shuffled-order" in lines


def test_variation_subset_and_samples(project: Path) -> None:
    result = run_one(project / "slide.nf.svg", load_config(project),
                     variations=("reversed-order", "tz"), samples=3)
    assert result.indices == (0, 4, 7)
    assert [v.name for v in result.variations] == ["reversed-order", "tz"]
    assert all(v.compared == (0, 4, 7) for v in result.variations)
    assert result.ok


def test_unknown_variation_is_refused(project: Path) -> None:
    with pytest.raises(ValueError, match="unknown self-test variation"):
        run_one(project / "slide.nf.svg", load_config(project), variations=("moon-phase",))


def test_unreadable_composition_is_an_error(project: Path) -> None:
    bad = project / "bad.nf.svg"
    bad.write_text("<svg")
    result = run([bad], load_config(project))
    assert result.exit_status == 2
    assert result.compositions[0].error
    assert "could not be rendered" in result.lines()[-1]


# Slow: the self-test starts one fresh process per variation.
def test_cli_entry_point(project: Path, capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    args = argparse.Namespace(paths=[project / "slide.nf.svg"], all_=False, samples=2,
                              json=False, check=False, record=False, selftest=True,
                              selftest_per_frame=2)
    assert run_selftest_cli(args) == 0
    out = capsys.readouterr().out
    assert "selftest slide.nf.svg: 8 frames, 2 sampled" in out
    for name in VARIATIONS:
        assert f"ok    {name}" in out
    assert out.rstrip().endswith("every variation reproduces the baseline")

    args.json = True
    args.selftest_variation = ["reversed-order"]
    assert run_selftest_cli(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["compositions"][0]["key"] == "slide.nf.svg"
    assert [v["name"] for v in data["compositions"][0]["variations"]] == ["reversed-order"]

    args.check = True
    assert run_selftest_cli(args) == 2


def test_locale_and_tz_choices_differ_from_the_caller() -> None:
    assert variations.alternate_locale({"LC_ALL": "POSIX"}) != "POSIX"
    assert variations.alternate_locale({"LANG": "C.UTF-8"}) not in ("C.UTF-8",)
    assert variations.alternate_tz({"TZ": "Pacific/Chatham"}) == "UTC"
    assert variations.alternate_tz({}) != ""


def test_the_locale_variation_says_when_there_is_no_second_locale(monkeypatch) -> None:
    """Asked of this interpreter's C library (under emulation ``locale -a`` is the
    host's program, and Debian's arm64 root as unpacked has no locale of its own)."""
    assert variations.loads("C") and not variations.loads("xx_XX.NOPE-8")
    monkeypatch.setattr(variations, "loads", lambda name: name == "C.UTF-8")
    alt = variations.alternate_locale({})
    assert alt == "C.UTF-8"
    assert variations.locale_note(alt) == (
        "LC_ALL=C.UTF-8; no second locale here (none of de_DE.UTF-8, fr_FR.UTF-8, "
        "tr_TR.UTF-8 loads): only the C locales vary")
    monkeypatch.setattr(variations, "loads", lambda name: name == "fr_FR.UTF-8")
    assert variations.locale_note(variations.alternate_locale({})) == "LC_ALL=fr_FR.UTF-8"


# Pretends the source was edited while the self-test ran, in the tz worker only.
MOVED_HOOK = """\
import dataclasses
import os

from nanoframes.determinism import reading

def install():
    if not os.environ.get("TZ"):
        return
    original = reading.composition_identity

    def moved(comp, baker):
        return dataclasses.replace(original(comp, baker), source="0" * 64)

    reading.composition_identity = moved
"""


def test_inputs_moving_during_the_run_are_not_blamed_on_a_variation(project: Path) -> None:
    (project / "moved_hook.py").write_text(MOVED_HOOK)
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    env["PYTHONPATH"] = os.pathsep.join([str(project), *filter(None, [env.get("PYTHONPATH")])])
    result = run_one(project / "slide.nf.svg", load_config(project), env=env,
                     setup="moved_hook:install", variations=("reversed-order", "tz"), samples=2)
    v = by_name(result)
    assert v["reversed-order"].ok
    assert not v["tz"].ok and not v["tz"].differing
    assert "inputs moved during the self-test: source" in (v["tz"].error or "")
    assert not result.ok


# Slow: pytest in a fresh process, which starts one process per variation.
def test_pytest_nf_selftest_collects_a_selftest_item(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject="[tool.nanoframes]\n")
    (pytester.path / "slide.nf.svg").write_text(SLIDE)
    result = pytester.runpytest_subprocess("--nf-selftest", "--nf-samples", "2", "-rA",
                                           "-p", "no:cacheprovider", "slide.nf.svg")
    result.stdout.fnmatch_lines(["PASSED slide.nf.svg::selftest*"])
