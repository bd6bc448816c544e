"""Outputs through the command line: PNG frames, directories of frames, H.264 video, and
the baked SVG. Each checks the bytes against frames rendered directly."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from nanoframes.bake.baker import Baker
from nanoframes.cli import main
from nanoframes.frames.film import Film
from nanoframes.frames.output import even_size, read_png_rgba
from nanoframes.model.composition import parse
from nanoframes.progress import Progress

NS = "http://www.w3.org/2000/svg"
TIMELINE = 'type="application/nanoframes+json"'


def _write(root: Path, name: str, w: int, h: int, fps: str = "10", duration: str = "0.6"
           ) -> Path:
    path = root / name
    path.write_text(
        f'<svg xmlns="{NS}" data-width="{w}" data-height="{h}" data-fps="{fps}" '
        f'data-duration="{duration}">\n'
        f'<rect width="{w}" height="{h}" fill="#202830"/>\n'
        f'<rect id="b" x="1" y="1" width="8" height="8" fill="#ff8000" opacity="0.75"/>\n'
        f'<text x="1" y="{h - 2}" font-size="9" data-start="0.2">A &amp; B</text>\n'
        f'<script {TIMELINE}>{{"animations": [{{"target": "#b", "keyframes": ['
        f'{{"t": 0, "transform": {{"translate": [0, 0]}}, "fill": "#ff8000"}}, '
        f'{{"t": 0.5, "transform": {{"translate": [{w - 10}, {h - 10}]}}, '
        f'"fill": "#00ffff80"}}]}}]}}</script>\n</svg>\n')
    return path


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI caches frames: keep the user's cache out of it (and it out of the user's)."""
    monkeypatch.setenv("NANOFRAMES_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("outputs")
    (root / "pyproject.toml").write_text("")
    _write(root, "even.nf.svg", 32, 24)
    _write(root, "odd.nf.svg", 33, 21)
    return root


@pytest.fixture(scope="module")
def frames(project: Path) -> list[np.ndarray]:
    film = Film.open(project / "even.nf.svg")
    return [frame.copy() for _, frame in film.frames()]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err: str, code: str) -> None:
    assert err.count("\n") == 1 and f"error[{code}]" in err and "Traceback" not in err


# --- PNG ------------------------------------------------------------------------------

def test_render_one_frame(project: Path, frames: list[np.ndarray], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "f3.png"
    code, stdout, err = run(["render", project / "even.nf.svg", "--frame", "3", "-o", out],
                            capsys)
    assert code == 0 and err == "" and "frame 3 of 6" in stdout
    rgba = read_png_rgba(out)
    assert rgba.shape == (24, 32, 4)
    assert np.array_equal(rgba, frames[3])
    assert hashlib.sha256(rgba.tobytes()).hexdigest() == hashlib.sha256(frames[3]).hexdigest()


@pytest.mark.parametrize(("t", "index"), [("0", 0), ("0.1", 1), ("0.25", 2), ("0.3", 3),
                                          ("0.59", 5)])
def test_render_at_t_selects_the_frame(project: Path, frames: list[np.ndarray], t: str,
                                       index: int, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.png"
    code, stdout, _ = run(["render", project / "even.nf.svg", "--t", t, "-o", out], capsys)
    assert code == 0 and f"frame {index} of 6" in stdout
    assert np.array_equal(read_png_rgba(out), frames[index])


def test_render_directory(project: Path, frames: list[np.ndarray], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "all"
    code, stdout, err = run(["render", project / "even.nf.svg", "-o", out], capsys)
    assert code == 0 and "wrote 6 frames" in stdout
    assert err == ""  # no progress bar when stderr is not a terminal
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"{i:05d}.png" for i in range(6)]
    for i, frame in enumerate(frames):
        assert np.array_equal(read_png_rgba(out / f"{i:05d}.png"), frame), i


def test_render_jobs_2_files_identical(project: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    runs = {"1": ["-j", "1", "--no-cache"], "2": ["-j", "2", "--no-cache"],
            "cold": ["-j", "2"], "warm": ["-j", "2"]}  # the last two through the frame cache
    for name, opts in runs.items():
        assert run(["render", project / "odd.nf.svg", *opts, "-o", tmp_path / name],
                   capsys)[0] == 0
    files = {name: {p.name: p.read_bytes() for p in (tmp_path / name).iterdir()}
             for name in runs}
    assert len(files["1"]) == 6
    assert files["1"] == files["2"] == files["cold"] == files["warm"]


def test_progress_bar_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    with Progress(3, "comp", enabled=True) as bar:
        for _ in range(3):
            bar.advance()
    err = capsys.readouterr().err
    assert "comp [" in err and "3/3" in err and err.endswith("\n")
    with Progress(3, "quiet", enabled=False) as bar:
        bar.advance(3)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("args", [["--frame", "6"], ["--frame", "-1"], ["--t", "0.6"],
                                  ["--t", "-0.1"], ["--t", "nan"]])
def test_out_of_range_frame(project: Path, tmp_path: Path, args: list[str],
                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.png"
    code, stdout, err = run(["render", project / "even.nf.svg", *args, "-o", out], capsys)
    assert code == 2 and stdout == ""
    one_error(err, "frame-range")
    assert not out.exists()
    code, stdout, err = run(["svg", project / "even.nf.svg", *args], capsys)
    assert code == 2 and stdout == ""
    one_error(err, "frame-range")


def test_png_output_without_frame_is_refused(project: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = run(["render", project / "even.nf.svg", "-o", tmp_path / "a.png"],
                            capsys)
    assert code == 2
    one_error(err, "output-invalid")
    assert not (tmp_path / "a.png").exists()


# --- svg ------------------------------------------------------------------------------

def test_svg_prints_the_baked_document(project: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    baker = Baker(parse(project / "even.nf.svg"))
    code, stdout, err = run(["svg", project / "even.nf.svg", "--frame", "4"], capsys)
    assert code == 0 and err == ""
    assert stdout.encode() == baker.document(4) + b"\n"
    assert "<script" not in stdout and "<![CDATA[A & B]]>" in stdout
    assert run(["svg", project / "even.nf.svg", "--t", "0.42"], capsys)[1] == stdout
    assert run(["svg", project / "even.nf.svg"], capsys)[1].encode() == baker.document(0) + b"\n"


# --- video ----------------------------------------------------------------------------

def test_video_pinned_and_padded(project: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    av = pytest.importorskip("av")
    first, second = tmp_path / "a.mp4", tmp_path / "b.mp4"
    code, stdout, err = run(["video", project / "odd.nf.svg", "--no-cache", "-o", first],
                            capsys)
    assert code == 0 and "6 frames, 33x21" in stdout and err == ""
    assert run(["video", project / "odd.nf.svg", "-j", "2", "--no-cache", "-o", second],
               capsys)[0] == 0
    assert first.read_bytes() == second.read_bytes()
    assert even_size(33, 21) == (34, 22)
    with av.open(str(first)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name in ("h264", "libx264")
        assert (stream.codec_context.width, stream.codec_context.height) == (34, 22)
        decoded = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]
    assert len(decoded) == 6
    assert all(f.shape == (22, 34, 3) for f in decoded)
    # the padding is black; the picture is there (the background is #202830)
    last = decoded[-1].astype(int)
    assert last[:, 33].max() <= 24 and last[21, :].max() <= 24
    assert abs(last[5, 20] - [0x20, 0x28, 0x30]).max() <= 12
    assert not list(tmp_path.glob(".*.tmp*"))  # temp files renamed or removed


@pytest.mark.parametrize("command", [["render", "--frame", "0", "-o", "{dir}"],
                                     ["video", "-o", "{dir}"],
                                     ["render", "-o", "{file}/frames"],
                                     ["render", "--t", "0", "-o", "{file}/f.png"]])
def test_unwritable_output_is_one_line(project: Path, tmp_path: Path, command: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("")
    argv = [command[0], project / "even.nf.svg", *(
        a.format(dir=tmp_path, file=tmp_path / "a-file") for a in command[1:])]
    code, stdout, err = run(argv, capsys)
    assert code == 2 and stdout == ""
    one_error(err, "output-failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # no temp file left
