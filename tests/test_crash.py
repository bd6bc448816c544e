"""A crash in ThorVG is one line, never a dead process (docs/errors.md, render-crashed).

The crash is real: ``NANOFRAMES_DEBUG_CRASH`` (engine/site.py) makes the ThorVG
call of one site dereference a canvas pointer that points nowhere, inside the
library (SIGSEGV), or abort (SIGABRT); the process that drew or measured dies
of the signal exactly as it would of a hostile composition. Every command runs
for real, with a timeout and a memory limit, and each test asserts the one line
(composition, frame, code), the exit status, and that the ledger is untouched.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from launched import launched

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="fork, faulthandler records and /proc")

NS = "http://www.w3.org/2000/svg"
EXE = shutil.which("nanoframes", path=str(Path(sys.executable).parent)) or "nanoframes"
MEMORY = 4 << 30  # RLIMIT_AS of each command: a runaway cannot take the machine


def _moving(path: Path, text: bool = False) -> Path:
    label = ('<text x="4" y="40" font-family="sans-serif" font-size="12" '
             'data-fit="40">nanoframes</text>\n' if text else "")
    path.write_text(
        f'<svg xmlns="{NS}" data-width="64" data-height="48" data-fps="10" '
        'data-duration="1">\n<rect width="64" height="48" fill="#202830"/>\n'
        '<rect id="b" x="1" y="1" width="8" height="8" fill="#ff8000"/>\n' + label +
        '<script type="application/nanoframes+json">{"animations": [{"target": "#b", '
        '"keyframes": [{"t": 0, "transform": {"translate": [0, 0]}}, '
        '{"t": 1, "transform": {"translate": [50, 30]}}]}]}</script>\n</svg>\n')
    return path


@pytest.fixture()
def proj(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        "[tool.nanoframes]\ncompositions = ['*.nf.svg']\n\n"
        "[tool.pytest.ini_options]\nnf_check = true\naddopts = '-p no:cacheprovider'\n")
    _moving(root / "a.nf.svg")
    _moving(root / "b.nf.svg", text=True)
    _moving(root / "c.nf.svg")
    # the commands' TMPDIR: short, since the forkserver puts its socket there
    short = Path(tempfile.mkdtemp(prefix="nfc", dir="/tmp"))
    (root / "tmp").symlink_to(short)
    yield root
    shutil.rmtree(short, ignore_errors=True)


def _run(root: Path, args: list[str], crash: str | None, timeout: float = 120
         ) -> subprocess.CompletedProcess:
    env = dict(os.environ, NANOFRAMES_CACHE_DIR=str(root / "cache"),
               TMPDIR=os.readlink(root / "tmp"))
    env.pop("NANOFRAMES_DEBUG_CRASH", None)
    if crash is not None:
        env["NANOFRAMES_DEBUG_CRASH"] = crash
    return subprocess.run(launched(args, address_space=MEMORY), cwd=root, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _one_line(out: subprocess.CompletedProcess) -> str:
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr and "Fatal Python" not in out.stderr
    return lines[0]


def _record(root: Path, jobs: int = 1) -> bytes:
    out = _run(root, [EXE, "digest", "--record", "-j", str(jobs)], None)
    assert out.returncode == 0, out.stderr
    return (root / "tests" / "digests.json").read_bytes()


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("how", ["segv", "abort"])
def test_a_crash_while_drawing_is_one_line_and_the_ledger_is_untouched(
        proj: Path, jobs: int, how: str) -> None:
    before = _record(proj)
    (proj / "a.nf.svg").write_text((proj / "a.nf.svg").read_text().replace("#ff8000", "#00ff80"))
    for mode in ("--check", "--record"):
        out = _run(proj, [EXE, "digest", mode, "-j", str(jobs)], f"draw:a.nf.svg:7:{how}")
        signame = "SIGSEGV" if how == "segv" else "SIGABRT"
        assert _one_line(out) == ("nanoframes: a.nf.svg: error[render-crashed]: ThorVG "
                                  f"crashed ({signame}) while drawing frame 7"), mode
        assert out.returncode == 2
        assert (proj / "tests" / "digests.json").read_bytes() == before
    # the crash records went with the command (the forkserver's socket dirs are its own)
    assert [n for n in os.listdir(proj / "tmp") if "crash" in n] == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crash_while_measuring_text_names_the_frame_being_baked(proj: Path,
                                                                   jobs: int) -> None:
    out = _run(proj, [EXE, "digest", "--check", "-j", str(jobs)], "measure:b.nf.svg:0:segv")
    assert _one_line(out) == ("nanoframes: b.nf.svg: error[render-crashed]: ThorVG crashed "
                              "(SIGSEGV) while measuring text for frame 0")
    assert out.returncode == 2


def test_every_command_that_reaches_thorvg_reports_a_crash_the_same_way(proj: Path) -> None:
    cases = [
        (["svg", "b.nf.svg", "--frame", "3"], "measure:b.nf.svg:3:segv",
         "while measuring text for frame 3"),
        (["check", "b.nf.svg"], "measure:b.nf.svg::abort",
         "(SIGABRT) while measuring text for the composition"),
        (["render", "a.nf.svg", "-o", "out", "-j", "2"], "draw:a.nf.svg:4:segv",
         "while drawing frame 4"),
        (["render", "a.nf.svg", "--frame", "2", "-o", "one.png", "--no-cache"],
         "draw:a.nf.svg:2:segv", "while drawing frame 2"),
        (["video", "a.nf.svg", "-o", "v.mp4", "--no-cache"], "draw:a.nf.svg:5:abort",
         "(SIGABRT) while drawing frame 5"),
    ]
    for args, crash, said in cases:
        out = _run(proj, [EXE, *args], crash)
        line = _one_line(out)
        assert line.startswith(f"nanoframes: {args[1]}: error[render-crashed]: "), line
        assert line.endswith(said), line
        assert out.returncode == 2, args


def test_without_a_crash_the_testing_aid_changes_nothing(proj: Path) -> None:
    before = _record(proj)
    out = _run(proj, [EXE, "digest", "--check", "-j", "2"], "draw:other.nf.svg:1:segv")
    assert out.returncode == 0, out.stderr
    assert (proj / "tests" / "digests.json").read_bytes() == before


def test_a_crash_record_says_where_and_only_a_report_makes_a_crash(tmp_path: Path) -> None:
    """Only a fatal signal with a record is a crash: a SIGKILL (the OOM killer) is not."""
    from nanoframes.engine.site import find_crash, read_crash

    record = tmp_path / "123"
    record.write_bytes(b"nanoframes-site\ndraw\n4\n/x/a.nf.svg\n\0".ljust(4095, b"\0") + b"\1")
    assert read_crash(record) is None and find_crash(tmp_path) is None
    with record.open("ab") as fh:
        fh.write(b"Fatal Python error: Aborted\n\nCurrent thread ...\n")
    crash = find_crash(tmp_path)
    assert crash is not None and (crash.pid, crash.frame, crash.path) == (123, 4, "/x/a.nf.svg")
    assert crash.line() == "ThorVG crashed (SIGABRT) while drawing frame 4"
    record.write_bytes(record.read_bytes()[:4095] + b"\0" + record.read_bytes()[4096:])
    assert find_crash(tmp_path).line() == \
        "the renderer's process crashed (SIGABRT) after drawing frame 4"


# Slow with -n 2: pytest and its workers start in fresh processes, and the
# crashed drawing worker is started again.
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_under_the_plugin_a_crash_fails_its_item_and_the_session_goes_on(
        proj: Path, xdist: list[str]) -> None:
    _record(proj)
    out = _run(proj, [sys.executable, "-m", "pytest", "-p", "no:randomly", "-q", *xdist,
                      "-p", "no:cacheprovider", "."], "draw:a.nf.svg:3:segv", timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "1 failed, 3 passed" in text, text  # b and c drawn by the next worker; the ledger
    assert "a.nf.svg: error[render-crashed]: ThorVG crashed (SIGSEGV) while drawing " \
           "frame 3" in text
    assert "Traceback" not in text and "Fatal Python" not in text
    assert "node down" not in text and "crashed" not in text.replace("render-crashed", "") \
        .replace("ThorVG crashed", "")


def test_a_crash_in_the_film_queued_behind_another_is_that_films_alone(proj: Path) -> None:
    """The plugin queues the next item's film while this one is judged
    (determinism/ahead.py): b crashes while a's verdict is made, and only b fails."""
    _record(proj)
    out = _run(proj, [sys.executable, "-m", "pytest", "-p", "no:randomly", "-q", "-p",
                      "no:xdist", "-p", "no:cacheprovider", "."], "draw:b.nf.svg:3:segv",
               timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "1 failed, 3 passed" in text, text
    assert "b.nf.svg: error[render-crashed]: ThorVG crashed (SIGSEGV) while drawing " \
           "frame 3" in text
    assert "a.nf.svg: error" not in text and "c.nf.svg: error" not in text
    assert "Traceback" not in text and "Fatal Python" not in text


TEXT_TESTS = """
import pathlib

HERE = pathlib.Path(__file__).parent


def test_from_text(nf):
    nf.check((HERE.parent / "a.nf.svg").read_text())


def test_after(nf):  # two frames: no frame 3 to crash on
    nf.check((HERE.parent / "c.nf.svg").read_text().replace('data-duration="1"',
                                                            'data-duration="0.2"'))
"""


# Slow with -n 2: as above, for compositions built from text.
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_a_crash_in_a_test_built_composition_fails_that_test_only(
        proj: Path, xdist: list[str]) -> None:
    """nf.check's compositions, built from text, are drawn by the plugin's drawing
    worker too: a crash in ThorVG fails that test, and the session goes on."""
    (proj / "tests").mkdir(exist_ok=True)
    (proj / "tests" / "test_text.py").write_text(TEXT_TESTS)
    pytest_cmd = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-q",
                  "-p", "no:cacheprovider"]
    recorded = _run(proj, [*pytest_cmd, "--nf-record", "tests/test_text.py"], None)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    out = _run(proj, [*pytest_cmd, *xdist, "tests/test_text.py"], "draw:<text>:3:segv",
               timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "1 failed, 1 passed" in text, text
    assert "error[render-crashed]: ThorVG crashed (SIGSEGV) while drawing frame 3" in text
    assert "Traceback" not in text and "Fatal Python" not in text
    assert "node down" not in text


def test_a_crash_inside_thorvg_is_a_real_signal(tmp_path: Path) -> None:
    """The testing aid is no mock: the process dies of the signal, inside libthorvg."""
    code = ("import os\nfrom nanoframes.engine import site\nfrom nanoframes.engine.raster "
            "import get_rasterizer\nwith site.working_on('x.nf.svg', 1):\n"
            "    get_rasterizer().render(b'<svg xmlns=\"http://www.w3.org/2000/svg\"/>', 4, 4)\n")
    env = dict(os.environ, NANOFRAMES_DEBUG_CRASH="draw:x.nf.svg:1:segv",
               NANOFRAMES_CRASH_DIR=str(tmp_path))
    out = subprocess.run(launched([sys.executable, "-c", code], address_space=MEMORY),
                         env=env, capture_output=True, timeout=60)
    assert out.returncode == -signal.SIGSEGV
    report = next(tmp_path.iterdir()).read_bytes()[4096:].decode()
    assert report.startswith("Fatal Python error: Segmentation fault"), report


# Bytes of the bundled NotoSans-Regular.ttf's `loca` table overwritten: (offset in the
# table, new byte). Made once with a seeded generator (random.Random(7), 21 bytes);
# ThorVG 1.0 segfaults measuring ordinary text in the result.
LOCA_DAMAGE = [(614, 109), (763, 113), (812, 203), (968, 217), (1144, 214), (1186, 24),
               (1486, 123), (1688, 92), (2363, 214), (3657, 63), (4744, 68), (5991, 48),
               (6101, 96), (6468, 77), (7104, 44), (8313, 29), (8974, 49), (9179, 157),
               (9246, 32), (9353, 60), (9455, 31)]


def _damaged_face(path: Path) -> Path:
    import struct

    data = bytearray((Path(__file__).parent.parent / "fonts" / "NotoSans-Regular.ttf")
                     .read_bytes())
    for i in range(struct.unpack(">H", data[4:6])[0]):
        tag, _, offset, _ = struct.unpack(">4sIII", data[12 + 16 * i:28 + 16 * i])
        if tag == b"loca":
            for at, value in LOCA_DAMAGE:
                data[offset + at] = value
    path.write_bytes(bytes(data))
    return path


def test_a_hostile_face_crashes_thorvg_for_real_and_the_record_names_the_frame(
        tmp_path: Path) -> None:
    """No testing aid: damaged bytes that ThorVG itself segfaults on, measured as a
    frame is baked; the process dies, and its record names composition and frame."""
    from nanoframes.engine.site import find_crash

    face = _damaged_face(tmp_path / "face.ttf")
    records = tmp_path / "records"
    records.mkdir()
    code = ("import sys\nfrom pathlib import Path\nfrom nanoframes.engine import site\n"
            "from nanoframes.engine.raster import get_rasterizer\n"
            "with site.working_on('/p/hostile.nf.svg', 3):\n"
            "    r = get_rasterizer()\n"
            "    r.register_font('Damaged', Path(sys.argv[1]).read_bytes())\n"
            "    r.text_bounds('Damaged', 40, 'The quick brown fox jumps over the lazy dog "
            "0123456789 ÀÉÎõü')\n")
    env = dict(os.environ, NANOFRAMES_CRASH_DIR=str(records))
    env.pop("NANOFRAMES_DEBUG_CRASH", None)
    out = subprocess.run(launched([sys.executable, "-c", code, str(face)],
                                  address_space=MEMORY),
                         env=env, capture_output=True, timeout=60)
    assert out.returncode == -signal.SIGSEGV, out.stderr
    assert out.stderr == b""  # faulthandler's report went to the record, not the terminal
    crash = find_crash(records)
    assert crash is not None and crash.path == "/p/hostile.nf.svg"
    assert crash.line() == "ThorVG crashed (SIGSEGV) while measuring text for frame 3"
