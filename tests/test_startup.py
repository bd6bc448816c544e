"""Start-up: building the command line imports no command's dependencies, and each
command imports only what it uses (checked through ``sys.modules`` in a fresh
interpreter, since this one has imported everything already)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "title-card.nf.svg"
RASTERIZER = ("thorvg_python", "nanoframes.engine.raster")
HEAVY = (*RASTERIZER, "numpy", "av")
COMMANDS = ("render", "video", "svg", "digest", "identity", "measure", "check", "fonts",
            "cache")

RUN = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + json.dumps(sorted(
    m for m in {heavy!r} if m in sys.modules)) + "\\n"))
sys.argv = ["nanoframes", *{args!r}]
from nanoframes.cli import main
sys.exit(main())
"""


def imported(*args: str, cwd: Path = ROOT) -> list[str]:
    """The heavy modules a fresh ``nanoframes ARGS`` had imported when it exited."""
    proc = subprocess.run([sys.executable, "-c", RUN.format(heavy=HEAVY, args=args)],
                          capture_output=True, text=True, cwd=cwd, timeout=300)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, proc.stderr
    return json.loads(line[-1][len("MODULES "):])


@pytest.mark.parametrize("args", [["--version"], ["--help"], []]
                         + [[name, "--help"] for name in COMMANDS],
                         ids=lambda a: " ".join(a) or "bare")
def test_the_command_line_imports_no_renderer(args: list[str]) -> None:
    assert imported(*args) == []


def test_each_command_imports_only_what_it_uses(tmp_path: Path) -> None:
    png = str(tmp_path / "f.png")
    # the rasterizer and NumPy where frames are drawn; PyAV only for video
    assert imported("render", str(EXAMPLE), "--frame", "3", "-o", png, "--no-cache") == [
        "nanoframes.engine.raster", "numpy"]
    assert "av" not in imported("digest", str(EXAMPLE), "--check")
    assert "av" in imported("video", str(EXAMPLE), "-o", str(tmp_path / "v.mp4"),
                            "--no-cache")
    # nothing drawn or measured, nothing of the renderer imported (svg and check
    # measure text with the renderer, so they load it)
    for args in (["cache"], ["fonts"]):
        assert not set(imported(*args)) & set(RASTERIZER), args


FIRST_PARSE = """
import json, sys
import nanoframes.model.composition as composition
parse = composition.parse
def first(*args, **kwargs):
    if not getattr(first, "seen", False):
        first.seen = True
        sys.stderr.write("\\nAT-FIRST-PARSE " + json.dumps(sorted(
            m for m in {watched!r} if m in sys.modules)) + "\\n")
    return parse(*args, **kwargs)
composition.parse = first
sys.argv = ["nanoframes", *{args!r}]
from nanoframes.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_sweep_parses_before_it_imports_the_drawing_stack(jobs: str) -> None:
    """``digest --check`` parses its first composition before the baker, ThorVG or
    NumPy are imported (they come after every file of the sweep is read), and a
    sweep in this process alone does not import multiprocessing at all."""
    watched = (*HEAVY, "nanoframes.bake.baker", "multiprocessing", "concurrent.futures")
    proc = subprocess.run(
        [sys.executable, "-c", FIRST_PARSE.format(
            watched=watched, args=["digest", str(EXAMPLE), "--check", "-j", jobs])],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("AT-FIRST-PARSE ")]
    assert line, proc.stderr
    # with workers, the pool (multiprocessing) is started before the parse, on purpose
    expected = [] if jobs == "1" else ["concurrent.futures", "multiprocessing"]
    assert json.loads(line[0][len("AT-FIRST-PARSE "):]) == expected
    assert proc.returncode == 0, proc.stdout + proc.stderr
