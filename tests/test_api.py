"""The public API (docs/api.md): nanoframes.load, render_frame, frames, film_digest,
identity, judge, lint. Everything renders for real through ThorVG."""

from __future__ import annotations

import hashlib
import pickle
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import nanoframes
from nanoframes.determinism.ledger import Ledger, merge, read_ledger, write_ledger
from nanoframes.determinism.reading import check_composition, entry_from_reading
from nanoframes.lint import lint_file

# 4 frames, 40x24, a square sliding over an image drawn from a relative path.
TEXT = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="4" data-duration="1">
  <image href="assets/dot.png" x="0" y="0" width="8" height="8"/>
  <rect id="box" x="0" y="12" width="8" height="8" fill="#ff8800"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#box", "keyframes": [{"t": 0, "x": 0}, {"t": 0.75, "x": 30}]}]}
  </script>
</svg>
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    (tmp_path / "scenes" / "assets").mkdir(parents=True)
    Image.new("RGBA", (4, 4), (20, 200, 90, 255)).save(tmp_path / "scenes/assets/dot.png")
    (tmp_path / "scenes" / "slide.nf.svg").write_text(TEXT)
    return tmp_path


def test_text_and_file_draw_digest_and_identify_the_same(project: Path) -> None:
    from_file = nanoframes.load(project / "scenes" / "slide.nf.svg")
    from_text = nanoframes.load(TEXT, base=project / "scenes")
    from_bytes = nanoframes.load(TEXT.encode(), base=project / "scenes")
    assert from_text.text is not None and from_file.text is None
    digest = nanoframes.film_digest(from_file)
    assert len(digest) == 64
    assert nanoframes.film_digest(from_text) == digest == nanoframes.film_digest(from_bytes)
    assert nanoframes.identity(from_text) == nanoframes.identity(from_file)
    assert nanoframes.identity(from_file).media != "none"  # the image counted, relative to base


def test_text_with_another_base_does_not_find_its_image(project: Path) -> None:
    comp = nanoframes.load(TEXT, base=project)
    with pytest.raises(nanoframes.NanoframesError) as err:
        nanoframes.render_frame(comp, 0)
    assert err.value.code == "image-missing"


def test_render_frame_is_an_rgba_copy_with_the_recorded_digest(project: Path) -> None:
    comp = nanoframes.load(project / "scenes" / "slide.nf.svg")
    first = nanoframes.render_frame(comp, 1)
    assert first.shape == (24, 40, 4) and first.dtype == np.uint8
    again = nanoframes.render_frame(comp, 2)
    assert not np.shares_memory(first, again)
    assert not np.array_equal(first, again)  # the square moved: not the reused canvas
    assert first.flags.writeable
    digest = nanoframes.film_digest(comp)
    assert hashlib.sha256(first.tobytes()).hexdigest() == digest.frame_digests[1]
    assert tuple(first[14, 12]) == (255, 136, 0, 255)  # straight RGBA: the square at x=10
    with pytest.raises(nanoframes.NanoframesError) as err:
        nanoframes.render_frame(comp, 4)
    assert err.value.code == "frame-range"


def test_frames_iterates_without_holding_the_film(project: Path) -> None:
    comp = nanoframes.load(TEXT, base=project / "scenes")
    it = nanoframes.frames(comp)
    assert isinstance(it, types.GeneratorType)
    got = [hashlib.sha256(f.tobytes()).hexdigest() for f in it]
    digest = nanoframes.film_digest(comp)
    assert tuple(got) == digest.frame_digests
    copy = pickle.loads(pickle.dumps(digest))
    assert copy == digest and copy.frame_digests == digest.frame_digests
    assert len(got) == comp.frame_count == 4
    # The subpackage of the same name stays importable and callable.
    import nanoframes.frames.film as film_module

    assert film_module.Film is not None
    assert len(list(nanoframes.frames(comp))) == 4


def test_judge_needs_a_key_for_text_and_returns_the_cli_verdict(project: Path) -> None:
    comp = nanoframes.load(TEXT, base=project / "scenes")
    with pytest.raises(nanoframes.NanoframesError) as err:
        nanoframes.judge(comp)
    assert err.value.code == "key-missing"
    ledger_path = project / "tests" / "digests.json"
    verdict = nanoframes.judge(comp, key="charts::slide")
    assert verdict.kind is nanoframes.Kind.ABSENT
    # Record it as --nf-record does, then judge again: a match, then an edit is "changed".
    _, reading = check_composition(comp, "charts::slide")
    new, _ = merge(read_ledger(ledger_path), {"charts::slide": entry_from_reading(reading)}, [])
    write_ledger(new)
    matched = nanoframes.judge(comp, key="charts::slide")
    assert matched.line() == "MATCH charts::slide: match"
    # The docs' idiom holds for a match (issue 43, item 7), and only for it.
    assert matched == "match" and matched == nanoframes.Kind.MATCH and "match" == matched
    assert matched != "changed" and matched != nanoframes.Kind.CHANGED
    edited = nanoframes.load(TEXT.replace("#ff8800", "#ff8801"), base=project / "scenes")
    verdict = nanoframes.judge(edited, ledger=ledger_path, key="charts::slide")
    assert verdict.kind is nanoframes.Kind.CHANGED
    assert verdict.reasons == ("source changed",)
    assert verdict == "changed" and verdict != "match" and verdict != matched
    # A file's key is its path from the project root.
    assert nanoframes.judge(project / "scenes" / "slide.nf.svg", ledger=Ledger(ledger_path, {})
                            ).key == "scenes/slide.nf.svg"


def test_judge_of_a_broken_composition_is_an_error_verdict(project: Path) -> None:
    comp = nanoframes.load(TEXT.replace("assets/dot.png", "assets/gone.png"),
                           base=project / "scenes")
    verdict = nanoframes.judge(comp, key="broken")
    assert verdict.kind is nanoframes.Kind.ERROR
    assert "image-missing" in verdict.line()


def test_load_errors(project: Path) -> None:
    with pytest.raises(nanoframes.NanoframesError) as err:
        nanoframes.load("<svg")
    assert err.value.code == "xml-malformed" and "<text>" in str(err.value)
    with pytest.raises(nanoframes.NanoframesError) as err:
        nanoframes.load(project / "missing.nf.svg")
    assert err.value.code == "file-missing"
    with pytest.raises(ValueError, match="text only"):
        nanoframes.load(project / "scenes" / "slide.nf.svg", base=project)


def test_lint_is_the_check_command(project: Path) -> None:
    path = project / "scenes" / "slide.nf.svg"
    text = TEXT.replace("<rect id", '<rect x="100" y="100" width="4" height="4"/><rect id')
    path.write_text(text)
    found = nanoframes.lint(nanoframes.load(path))
    assert found and found == lint_file(path)
    assert all(isinstance(f, nanoframes.Finding) for f in found)
    assert [f.code for f in nanoframes.lint(nanoframes.load(text, base=path.parent))] == \
        [f.code for f in found]


def test_import_stays_light() -> None:
    code = ("import sys, nanoframes; nanoframes.__version__; "
            "print(sorted(m for m in ('numpy', 'thorvg_python', 'lxml', 'nanoframes.api') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    assert set(nanoframes.__all__) <= set(dir(nanoframes))


def test_the_cli_leaves_entries_of_tests_alone(project: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from nanoframes.cli import main

    monkeypatch.chdir(project)
    (project / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = ["scenes/*.nf.svg"]\n')
    assert main(["digest", "--record"]) == 0
    key = "tests/test_scenes.py::test_slide[de]"
    _, reading = check_composition(nanoframes.load(TEXT, base=project / "scenes"), key)
    ledger_path = project / "tests" / "digests.json"
    new, _ = merge(read_ledger(ledger_path), {key: entry_from_reading(reading)}, [])
    write_ledger(new)
    capsys.readouterr()
    # Not stale for the CLI (it cannot see tests; the plugin decides), and never dropped.
    assert main(["digest", "--check", "--all"]) == 0
    assert "STALE" not in capsys.readouterr().out
    assert main(["digest", "--record", "--all"]) == 0
    assert key in read_ledger(ledger_path).entries
