"""NANOFRAMES_THORVG_THREADS and Lottie films in one process: the outcome is the
configuration's, whichever film starts ThorVG's engine first (decision 0120)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import lottie_gen as gen
import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
    import sys
    from pathlib import Path
    from nanoframes.engine import raster
    from nanoframes.errors import NanoframesError
    from nanoframes.frames.film import Film

    root = Path(sys.argv[1])
    lines = []
    for name in sys.argv[2:]:
        try:
            lines.append(f"{name} drawn {Film.open(root / name, root).digests()[-1]}")
        except NanoframesError as exc:
            lines.append(f"{name} error[{exc.code}]")
    lines.append(f"engine threads {raster._engine_threads}")
    print("\\n".join(sorted(lines)))
"""

BOX = ('<svg xmlns="http://www.w3.org/2000/svg" data-width="32" data-height="32" '
       'data-fps="4" data-duration="1"><rect id="b" width="8" height="8" fill="#c00"/>'
       '<script type="application/nanoframes+json">{"animations": [{"target": "#b", '
       '"keyframes": [{"t": 0, "x": 0}, {"t": 1, "x": 24}]}]}</script></svg>')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.nanoframes]\ncompositions = []\n')
    (tmp_path / "box.nf.svg").write_text(BOX)
    # an expression film: drawn with threads, ThorVG would leave the expression out
    doc = gen.with_expression(gen.animation(op=4), "$bm_rt = [150, 50, 0];")
    (tmp_path / "expr.json").write_bytes(gen.dumps(doc))
    return tmp_path


def _outcome(project: Path, threads: str, *names: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests"),
           "NANOFRAMES_THORVG_THREADS": threads}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(project), *names],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_thread_setting_decides_whichever_film_starts_the_engine(project: Path) -> None:
    composition_first = _outcome(project, "2", "box.nf.svg", "expr.json")
    lottie_first = _outcome(project, "2", "expr.json", "box.nf.svg")
    assert composition_first == lottie_first
    # the setting is kept for compositions and refused, every time, for Lottie films
    assert "expr.json error[lottie-threads]" in lottie_first
    assert "engine threads 2" in lottie_first
    # with 0 threads both draw, in either order, the same frames
    plain = _outcome(project, "0", "expr.json", "box.nf.svg")
    assert plain == _outcome(project, "0", "box.nf.svg", "expr.json")
    assert "expr.json drawn" in plain and "engine threads 0" in plain
    box = [line for line in plain.splitlines() if line.startswith("box.nf.svg")]
    assert box[0] in lottie_first  # the composition's frames do not depend on the threads
