"""A second opinion on a regression (determinism/second_opinion.py).

The end-to-end cases are real: a preloaded library (tests/switched_nudge.py)
nudges libm's ``sinf``/``cosf``/``sincosf`` one ulp when the environment says so.
The same file is preloaded when recording and when checking (a preload is a
toolchain part), so a check under the environment that switches it on reads
``regression``; the re-render under the variation that switches it off draws
the recorded pixels, and the opinion names that variation. Every command runs
in a child with an address-space limit and a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import switched_nudge
from launched import launched

from nanoframes.config import load_config
from nanoframes.determinism.policy import verdict_from_json, verdict_to_json
from nanoframes.determinism.second_opinion import (
    MAX_FRAMES,
    ORDER,
    Opinion,
    Render,
    redrawn,
    variations_for,
)
from nanoframes.determinism.verdict import Kind, Verdict
from nanoframes.errors import NanoframesError

ROOT = Path(__file__).resolve().parent.parent
MEMORY = 4 << 30  # RLIMIT_AS of each command: a runaway cannot take the machine
KEY = "examples/spinner-loop.nf.svg"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD: Linux")
needs_cc = pytest.mark.skipif(switched_nudge.compiler() is None,
                              reason="no C compiler here to build the preloaded library")


# --- what an opinion says, from digests ------------------------------------------

def _opinion(*renders: tuple[str, tuple[str, ...]] | Render, recorded=("r0", "r1"),
             frames=(3, 7), differing=2) -> Opinion:
    made = tuple(r if isinstance(r, Render) else Render(r[0], r[1]) for r in renders)
    return Opinion(tuple(frames), differing, tuple(recorded), made)


def test_the_same_new_pixels_in_every_render_is_reproducible() -> None:
    new = ("n0", "n1")
    opinion = _opinion(("check", new), ("plain", new), ("locale", new), ("tz", new))
    assert opinion.kind == "reproducible"
    assert opinion.summary == ("reproducible: the same new pixels in every render "
                               "(4 renders: the check's, plain, locale, tz)")


def test_a_frame_that_moves_with_one_variation_is_named() -> None:
    new = ("n0", "n1")
    opinion = _opinion(("check", new), ("plain", new), ("locale", ("n0", "r1")), ("tz", new))
    assert opinion.kind == "unstable"
    assert opinion.unstable_frames == (1,)
    assert opinion.summary == ("unstable: frame 7 drew 2 different ways in 4 renders, it "
                               "moves with locale (under locale it drew the recorded pixels); "
                               "1 of the 2 frames redrawn are unstable")


def test_a_frame_that_moves_with_nothing_varied_says_so() -> None:
    opinion = _opinion(("check", ("n0",)), ("plain", ("x0",)), ("locale", ("y0",)),
                       recorded=("r0",), frames=(31,), differing=1)
    assert opinion.summary == ("unstable: frame 31 drew 3 different ways in 3 renders, it "
                               "moves between fresh processes with nothing varied")


def test_failed_renders_are_named_and_none_drawn_is_inconclusive() -> None:
    new = ("n0", "n1")
    crashed = Render("tz", error="crashed (SIGSEGV)")
    opinion = _opinion(("check", new), ("plain", new), crashed, differing=40)
    assert opinion.kind == "reproducible"
    assert opinion.summary.endswith("(2 renders: the check's, plain; 2 of the 40 differing "
                                    "frames redrawn, evenly spaced); the tz re-render crashed "
                                    "(SIGSEGV)")
    alone = _opinion(("check", new), Render("plain", error="timed out after 300 s"))
    assert alone.kind == "inconclusive"
    assert alone.summary == ("inconclusive: no re-render drew the frames; the plain re-render "
                             "timed out after 300 s")


def test_an_opinion_travels_as_json_with_its_verdict() -> None:
    opinion = _opinion(("check", ("n0", "n1")), ("plain", ("n0", "n1")),
                       Render("locale", ("n0", "r1"), "LC_ALL=C.UTF-8"),
                       Render("tz", error="crashed (SIGSEGV)"))
    verdict = Verdict(KEY, Kind.REGRESSION, digest="d" * 64, differing_frames=(3, 7),
                      compared_frames=41, opinion=opinion)
    data = json.loads(json.dumps(verdict_to_json(verdict)))
    assert data["opinion"]["kind"] == "unstable"
    assert data["opinion"]["unstable_frames"] == [7]
    back = verdict_from_json(data)
    assert back.opinion == opinion
    assert back.opinion_line == f"opinion: {opinion.summary}"
    from nanoframes.evidence.summary import markdown

    assert f"- `{KEY}`: opinion: unstable: frame 7 drew 2 different ways" in markdown([back])


def test_which_frames_and_which_variations() -> None:
    assert redrawn(list(range(5))) == (0, 1, 2, 3, 4)
    many = redrawn(list(range(100, 400)))
    assert len(many) == MAX_FRAMES and many[0] == 100 and many[-1] == 399
    assert variations_for(1, {}) == ()
    assert variations_for(3, {}) == ("locale", "tz")
    every = variations_for(99, {"NANOFRAMES_THORVG_THREADS": "2"})
    assert "threads-2" not in every and "threads-0" in every
    assert every == tuple(n for n in ORDER if n != "threads-2")


def test_the_configured_count_is_checked(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\nsecond_opinion = 0\n")
    assert load_config(tmp_path).second_opinion == 0
    for bad in ("9", "-1", "true", '"3"'):
        root = tmp_path / f"bad{len(list(tmp_path.iterdir()))}"
        root.mkdir()
        (root / "pyproject.toml").write_text(f"[tool.nanoframes]\nsecond_opinion = {bad}\n")
        with pytest.raises(NanoframesError, match="second_opinion must be an integer"):
            load_config(root)


# --- real regressions, drawn again -----------------------------------------------

def _env(root: Path, **extra: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "EXCUSED_COMPOSITIONS", "TZ", "CI", "NANOFRAMES_STORE",
                            "NANOFRAMES_THORVG_THREADS", "NF_NUDGE_WHEN", "NF_CRASH_WHEN")
               and not k.startswith("PYTEST_")}
    environ.update(XDG_CACHE_HOME=str(root / "cache"), NANOFRAMES_CACHE_DIR=str(root / "cc"))
    environ.update(extra)
    return environ


def _run(root: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(launched(argv, address_space=MEMORY), cwd=root, env=_env(root, **env),
                          capture_output=True, text=True, timeout=600)


def _digest(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run(root, [sys.executable, "-m", "nanoframes", "digest", *args], **env)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not sys.platform.startswith("linux"):
        pytest.skip("LD_PRELOAD: Linux")
    if switched_nudge.compiler() is None:
        pytest.skip("no C compiler here to build the preloaded library")
    return switched_nudge.build(tmp_path_factory.mktemp("nudge"))


@pytest.fixture(scope="module")
def recorded(library: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """spinner-loop recorded with the nudge preloaded but switched off (LC_ALL is not C)."""
    root = tmp_path_factory.mktemp("p")
    (root / "examples").mkdir()
    (root / "pyproject.toml").write_text("[tool.nanoframes]\n")
    shutil.copy(ROOT / "examples" / "spinner-loop.nf.svg", root / "examples")
    done = _digest(root, "--record", **_locale_switched(library, "C.UTF-8"))
    assert done.returncode == 0, done.stderr
    return root


def _locale_switched(library: Path, locale: str) -> dict[str, str]:
    """The nudge on exactly where LC_ALL is C: the self-test's locale variation
    (another locale than the caller's) switches it off."""
    return {"LD_PRELOAD": str(library), "NF_NUDGE_WHEN": "LC_ALL=C", "LC_ALL": locale,
            "LANG": locale}


@linux
@needs_cc
def test_an_unstable_frame_is_named_with_the_variation_it_moves_with(
        recorded: Path, library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = recorded / "report.html"
    done = _digest(recorded, "--check", "--json", "--html", str(page),
                   **_locale_switched(library, "C"))
    assert done.returncode == 1, done.stderr
    verdict = json.loads(done.stdout)["verdicts"][0]
    assert verdict["verdict"] == "regression", verdict["line"]  # same inputs, other pixels
    opinion = verdict["opinion"]
    assert opinion["kind"] == "unstable"
    assert [r["name"] for r in opinion["renders"]] == ["check", "plain", "locale", "tz"]
    first = opinion["frames"][0]
    assert opinion["summary"].startswith(
        f"unstable: frame {first} drew 2 different ways in 4 renders, it moves with locale "
        "(under locale it drew the recorded pixels)")
    locale = opinion["renders"][2]
    assert locale["digests"] == opinion["recorded"]  # switched off: the recorded pixels
    assert len(opinion["frames"]) == min(MAX_FRAMES, len(verdict["differing_frames"]))
    assert "opinion: unstable: frame" in page.read_text()
    shown = _digest(recorded, "--check", **_locale_switched(library, "C"))
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"REGRESSION {KEY}: regression, ")
    assert f"  opinion: {opinion['summary']}" in lines
    # kept pending: `nanoframes review` shows what the check's opinion said
    from nanoframes.determinism.ledger import read_ledger
    from nanoframes.determinism.pending import load
    from nanoframes.evidence.review import shown_lines

    config = load_config(recorded)
    monkeypatch.setenv("NANOFRAMES_CACHE_DIR", _env(recorded)["NANOFRAMES_CACHE_DIR"])
    _, pending = load(config.root)  # signed by the check (its key: that cache folder)
    review = shown_lines(pending[KEY], read_ledger(config.ledger_path), config, None,
                         own=True)
    assert f"  opinion: {opinion['summary']}" in review


@linux
@needs_cc
def test_the_same_new_pixels_everywhere_is_reproducible_and_a_crash_is_named(
        recorded: Path, library: Path) -> None:
    # The nudge always on: every render draws the new pixels; the tz re-render (TZ set)
    # crashes inside libm's caller, and the check goes on to its verdict.
    env = {**_locale_switched(library, "C.UTF-8"), "NF_NUDGE_WHEN": "always",
           "NF_CRASH_WHEN": "TZ"}
    done = _digest(recorded, "--check", "--second-opinion", "4", **env)
    assert done.returncode == 1, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("  opinion: "))
    assert line.startswith("  opinion: reproducible: the same new pixels in every render "
                           "(4 renders: the check's, plain, locale, hash-seed; ")
    assert line.endswith("; the tz re-render crashed (SIGSEGV)")
    assert "Traceback" not in done.stderr


@linux
@needs_cc
def test_off_by_flag_by_configuration_and_for_an_excused_regression(
        recorded: Path, library: Path) -> None:
    env = _locale_switched(library, "C")
    done = _digest(recorded, "--check", "--no-second-opinion", **env)
    assert done.returncode == 1 and "REGRESSION" in done.stdout
    assert "opinion:" not in done.stdout
    excused = _digest(recorded, "--check", "--json", EXCUSED_COMPOSITIONS=KEY, **env)
    verdict = json.loads(excused.stdout)["verdicts"][0]
    assert verdict["excused"] and verdict["verdict"] == "regression"
    assert verdict["opinion"] is None  # it fails nothing: not drawn again
    bad = _digest(recorded, "--check", "--second-opinion", "9", **env)
    assert bad.returncode == 2 and "must be from 0 (off) to 8" in bad.stderr


@linux
@needs_cc
def test_pytest_items_nf_check_and_the_api_give_the_same_opinion(
        recorded: Path, library: Path, tmp_path: Path) -> None:
    project = tmp_path / "q"
    shutil.copytree(recorded / "examples", project / "examples")
    (project / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = ["examples/*.nf.svg"]\n'
        '[tool.pytest.ini_options]\ntestpaths = ["examples", "tests"]\n')
    (project / "tests").mkdir()
    spinner = (project / "examples" / "spinner-loop.nf.svg").read_text()
    # a composition built from text: its bytes travel to the re-renders
    (project / "tests" / "test_text.py").write_text(
        f"def test_spinner_text(nf):\n    nf.check({spinner!r})\n")
    pytest_argv = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p",
                   "no:cacheprovider", "-q"]
    off = _locale_switched(library, "C.UTF-8")
    done = _run(project, [*pytest_argv, "--nf-record"], **off)
    assert done.returncode == 0, done.stdout + done.stderr
    on = _locale_switched(library, "C")
    done = _run(project, [*pytest_argv, "--nf-check"], **on)
    assert done.returncode == 1, done.stdout + done.stderr
    text = done.stdout
    assert f"REGRESSION {KEY}: regression" in text
    assert "REGRESSION tests/test_text.py::test_spinner_text: regression" in text
    said = [x.strip() for x in text.splitlines() if x.strip().startswith("opinion: unstable")]
    assert len(said) == 2, text  # the collected file and the test's text alike
    assert all("it moves with locale (under locale it drew the recorded pixels)" in x
               for x in said)
    none = _run(project, [*pytest_argv, "--nf-check", "--nf-no-second-opinion"], **on)
    assert "opinion:" not in none.stdout
    api = _run(project, [sys.executable, "-c",
                         "import nanoframes; v = nanoframes.judge('examples/spinner-loop.nf.svg')"
                         "; print(v.kind.value); print(v.opinion_line)"], **on)
    assert api.returncode == 0, api.stderr
    kind, line = api.stdout.splitlines()
    assert kind == "regression" and line.startswith("opinion: unstable: frame ")
    assert "it moves with locale" in line
