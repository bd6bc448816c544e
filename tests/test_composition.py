"""Parsing (docs/compositions.md, canvas to timeline): defaults, exact frame
arithmetic, presence, and every bad-input code with its file and line, through
the library and through the CLI."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from fractions import Fraction
from pathlib import Path

import pytest
from PIL import Image

from nanoframes.bake.baker import Baker
from nanoframes.cli import main
from nanoframes.errors import NanoframesError
from nanoframes.model import composition
from nanoframes.model.composition import Presence, parse, presence_of

NS = 'xmlns="http://www.w3.org/2000/svg"'
TIMELINE = 'type="application/nanoframes+json"'


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI caches frames: keep the user's cache out of these tests."""
    monkeypatch.setenv("NANOFRAMES_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return tmp_path


def write(directory: Path, text: str | bytes, name: str = "comp.nf.svg") -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def canvas(attrs: str = 'data-width="10" data-height="10"', body: str = "") -> str:
    return f"<svg {NS} {attrs}>\n{body}</svg>\n"


def error_of(path: Path) -> NanoframesError:
    with pytest.raises(NanoframesError) as info:
        Baker(parse(path))  # images are validated when a Baker is built
    return info.value


# --- §1 the canvas: defaults and frame arithmetic -------------------------------------

def test_defaults(project: Path) -> None:
    comp = parse(write(project, canvas(), "title-card.nf.svg"))
    assert (comp.width, comp.height) == (10, 10)
    assert comp.fps == 30 and comp.duration == 1
    assert comp.frame_count == 30
    assert comp.id == "title-card"
    assert comp.view_box is None and comp.safe_margin is None and comp.palette_budget is None
    assert comp.animations == ()
    assert comp.project_root == project


def test_width_height_fallback_and_explicit_id(project: Path) -> None:
    comp = parse(write(project, canvas('width="64" height="48px" data-composition-id="hero" '
                                       'data-safe-margin="8" data-palette-budget="4" '
                                       'viewBox="0 0 32 24"')))
    assert (comp.width, comp.height) == (64, 48)
    assert comp.id == "hero"
    assert comp.safe_margin == 8 and comp.palette_budget == 4
    assert comp.view_box == "0 0 32 24"


def test_data_size_wins_over_width(project: Path) -> None:
    comp = parse(write(project, canvas('width="100%" height="100%" data-width="12" '
                                       'data-height="7"')))
    assert (comp.width, comp.height) == (12, 7)


@pytest.mark.parametrize(("fps", "duration", "frames"), [
    ("29.97", "4.0", 120),   # 119.88 → 120
    ("30", "0.1", 3),        # 0.1 × 30 in floats is 3.0000000000000004; exactly 3
    ("24", "0.01", 1),       # never fewer than one frame
    ("10", "0.25", 3),       # 2.5 rounds half up, exactly
    ("23.976", "10", 240),
    ("60", "2.5", 150),
])
def test_frame_count_is_exact(project: Path, fps: str, duration: str, frames: int) -> None:
    comp = parse(write(project, canvas(f'data-width="4" data-height="4" data-fps="{fps}" '
                                       f'data-duration="{duration}"')))
    assert comp.fps == Fraction(fps) and comp.duration == Fraction(duration)
    assert comp.frame_count == frames


def test_frame_times(project: Path) -> None:
    comp = parse(write(project, canvas('data-width="4" data-height="4" data-fps="30" '
                                       'data-duration="2"')))
    assert comp.frame_count == 60
    assert [comp.time_of(i) for i in range(4)] == [0.0, 1 / 30, 2 / 30, 0.1]
    assert comp.time_of(comp.frame_count - 1) == pytest.approx(2 - 1 / 30, abs=1e-12)
    assert comp.time_of(comp.frame_count - 1) < float(comp.duration)
    ntsc = parse(write(project, canvas('data-width="4" data-height="4" data-fps="29.97" '
                                       'data-duration="4.0"'), "ntsc.nf.svg"))
    assert ntsc.time_of(119) == float(Fraction(119) / Fraction("29.97"))


# --- §2 presence -----------------------------------------------------------------------

def test_presence_is_half_open_and_end_to_end_clips_never_overlap() -> None:
    a, b = Presence(0.0, 0.5, 0.0), Presence(0.5, 1.0, 0.0)
    for t in (0.0, 0.25, 0.4999999, 0.5, 0.75, 0.9999):
        assert (a.factor(t) > 0) + (b.factor(t) > 0) == 1, t
    assert a.factor(0.5) == 0.0 and b.factor(0.5) == 1.0
    assert b.factor(1.0) == 0.0 and a.factor(-0.01) == 0.0


@pytest.mark.parametrize(("t", "factor"), [
    (0.9, 0.0), (1.0, 0.0), (1.1, 0.25), (1.2, 0.5), (1.4, 1.0), (2.0, 1.0),
    (2.8, 0.5), (2.9, 0.25), (3.0, 0.0), (3.5, 0.0),
])
def test_fade_factor(t: float, factor: float) -> None:
    p = Presence(1.0, 3.0, 0.4)
    assert p.factor(t) == pytest.approx(factor, abs=1e-12)


def test_presence_attributes(project: Path) -> None:
    comp = parse(write(project, canvas(body=(
        '<rect id="a" data-start="0.5" data-duration="1" data-fade="0.25"/>'
        '<rect id="b" data-fade="0.1"/><rect id="c"/>'))))
    by_id = {el.get("id"): el for el in comp.elements if el.get("id")}
    assert presence_of(by_id["a"], comp.path) == Presence(0.5, 1.5, 0.25)
    # data-start defaults to 0, data-duration to "until the film ends" (1.0 s by default),
    # where a fade mirrors as a fade-out
    assert presence_of(by_id["b"], comp.path) == Presence(0.0, 1.0, 0.1)
    assert presence_of(by_id["c"], comp.path) is None
    assert presence_of(comp.root, comp.path) is None  # the film's data-duration is no clip
    clip = parse(write(project, canvas('data-width="4" data-height="4" data-duration="3"',
                                       '<rect data-start="1"/><rect data-start="1" '
                                       'data-fade="0.5"/>'), "long.nf.svg"))
    plain, faded = (presence_of(el, clip.path) for el in clip.root)
    assert plain == Presence(1.0, float("inf"), 0.0)
    assert faded == Presence(1.0, 3.0, 0.5)


def test_negative_presence_is_refused(project: Path) -> None:
    for attrs in ('data-duration="-1"', 'data-fade="-0.5"'):
        err = error_of(write(project, canvas(body=f'\n<rect {attrs}/>')))
        assert (err.code, err.line) == ("attr-invalid", 3)


# --- §3 timeline parsing -----------------------------------------------------------

def test_timeline_in_cdata(project: Path) -> None:
    comp = parse(write(project, canvas(body=(
        f'<rect id="r"/><script {TIMELINE}><![CDATA[{{"animations": [{{"target": "#r, .a, rect",'
        ' "keyframes": [{"t": 1, "opacity": 0}, {"t": 0, "opacity": 1, "ease": "ease-in"}]}]}'
        "]]></script>"))))
    (anim,) = comp.animations
    assert anim.target == "#r, .a, rect"
    assert [kf.t for kf in anim.keyframes] == [0.0, 1.0]  # ordered by t
    assert anim.keyframes[0].ease == "ease-in"


# --- every bad-input code, with file and line -------------------------------------------

def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_header(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IEND", b"")


def _use_bomb() -> str:
    defs = '<g id="l0"><rect/><rect/><rect/><rect/></g>'
    for i in range(1, 10):
        defs += f'<g id="l{i}">' + f'<use href="#l{i - 1}"/>' * 4 + "</g>"
    return canvas(body=f"<defs>\n{defs}</defs>\n")


def _timeline(json_text: str) -> str:
    return canvas(body=f"<rect/>\n<script {TIMELINE}>{json_text}</script>\n")


H = canvas()[: canvas().index(">") + 1] + "\n"  # the opening <svg> line

BAD: dict[str, tuple[str | bytes, str, int]] = {
    # name: (file text, code, line)
    "malformed": (H + "<rect>\n<g></g>\n</svg>\n", "xml-malformed", 4),
    "truncated": (H + '<rect x="1', "xml-malformed", 2),
    "empty": ("  \n", "xml-malformed", None),
    "undefined-entity": (H + "\n<text>&foo;</text></svg>", "xml-malformed", 3),
    "billion-laughs": (
        '<?xml version="1.0"?>\n<!DOCTYPE svg [\n<!ENTITY a "lol">\n'
        + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n'
                  for i in range(8))
        + f"]>\n<svg {NS} data-width=\"10\" data-height=\"10\"><text>&i;</text></svg>",
        "xml-doctype", 2),
    "external-entity": (
        '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        f'<svg {NS} data-width="10" data-height="10"><text>&x;</text></svg>',
        "xml-doctype", 1),
    "not-svg": ('<?xml version="1.0"?>\n\n<html/>', "not-svg", 3),
    # libxml2 numbers an element by the line its start tag ends on
    "size-missing": (f'<svg {NS}\n  data-height="3"/>', "size-missing", 2),
    "size-missing-both": (f'<svg {NS}/>', "size-missing", 1),
    "size-invalid": (canvas('data-width="wide" data-height="3"'), "size-invalid", 1),
    "size-fraction": (canvas('data-width="10.5" data-height="3"'), "size-invalid", 1),
    "size-zero": (canvas('data-width="0" data-height="3"'), "size-invalid", 1),
    "size-negative": (canvas('data-width="4" data-height="-3"'), "size-invalid", 1),
    "canvas-side": (canvas('data-width="16385" data-height="1"'), "canvas-too-large", 1),
    "canvas-area": (canvas('data-width="16384" data-height="16384"'), "canvas-too-large", 1),
    "fps-zero": (canvas('data-width="4" data-height="4" data-fps="0"'), "fps-invalid", 1),
    "fps-text": (canvas('data-width="4" data-height="4" data-fps="fast"'), "fps-invalid", 1),
    "fps-huge": (canvas('data-width="4" data-height="4" data-fps="1000"'), "fps-invalid", 1),
    "duration-zero": (canvas('data-width="4" data-height="4" data-duration="0"'),
                      "duration-invalid", 1),
    "duration-negative": (canvas('data-width="4" data-height="4" data-duration="-2"'),
                          "duration-invalid", 1),
    "duration-text": (canvas('data-width="4" data-height="4" data-duration="long"'),
                      "duration-invalid", 1),
    "too-many-frames": (canvas('data-width="4" data-height="4" data-fps="240" '
                               'data-duration="420"'), "too-many-frames", 1),
    "too-deep": (H + "<g>" * 300 + "</g>" * 300 + "</svg>", "too-deep", 2),
    "too-many-elements": (H + "\n" + "<rect/>" * 20_001 + "</svg>", "too-many-elements", 3),
    "use-bomb": (_use_bomb(), "use-bomb", 3),
    "use-external": (canvas(body='\n<use href="other.svg#a"/>'), "use-external", 3),
    "attr-nan": (canvas(body='\n\n<rect x="NaN"/>'), "attr-invalid", 4),
    "attr-inf": (canvas(body='<rect width="-inf"/>'), "attr-invalid", 2),
    "attr-text": (canvas(body='<rect data-start="soon"/>'), "attr-invalid", 2),
    "timeline-json": (_timeline('{"animations": [\n\n  {"target": }]}'), "timeline-json", 5),
    "timeline-json-cdata": (H + f"<script\n  {TIMELINE}>\n<![CDATA[\n"
                            '{"animations": [\n  {"target": "#a",\n   "keyframes": [}\n]}\n'
                            "]]></script>\n</svg>", "timeline-json", 7),
    "timeline-shape": (_timeline("[]"), "timeline-shape", 3),
    "timeline-no-keyframes": (_timeline('{"animations": [{"target": "#a"}]}'),
                              "timeline-shape", 3),
    "keyframe-no-t": (_timeline('{"animations": [{"target": "#a", "keyframes": '
                                '[{"opacity": 1}]}]}'), "keyframe-no-t", 3),
    "selector-invalid": (_timeline('{"animations": [{"target": "svg > rect", "keyframes": '
                                   '[]}]}'), "selector-invalid", 3),
    "timeline-number": (_timeline('{"animations": [{"target": "#a", "keyframes": '
                                  '[{"t": 0, "opacity": NaN}]}]}'), "timeline-number", 3),
    "timeline-magnitude": (_timeline('{"animations": [{"target": "#a", "keyframes": '
                                     '[{"t": 0, "x": 1e10}]}]}'), "timeline-number", 3),
    "timeline-too-large": (H + "<rect/>" * 1000 + f"\n<script {TIMELINE}>"
                           '{"animations": [{"target": "rect", "keyframes": ['
                           + ", ".join(f'{{"t": {i}, "x": 1}}' for i in range(2100))
                           + "]}]}</script></svg>", "timeline-too-large", 1),
    "attr-magnitude": (canvas(body='<rect x="2e9"/>'), "attr-invalid", 2),
    "too-many-attributes": (canvas(body="\n<rect " + " ".join(f'a{i}="1"' for i in range(257))
                                   + "/>"), "too-many-attributes", 3),
    "text-too-long": (canvas(body="<text>" + "x" * 100_001 + "</text>"), "text-too-long", 2),
    "size-exponent": (canvas('data-width="1e999999999" data-height="3"'), "size-invalid", 1),
    "xml-encoding": (H.encode() + b"<text>caf\xe9</text>\n</svg>", "xml-encoding", 2),
    "xml-encoding-unknown": (b'<?xml version="1.0" encoding="latin-1"?>\n' + H.encode()
                             + b"</svg>", "xml-encoding", 1),
    "image-absolute": (canvas(body='\n<image href="/etc/hosts.png" width="4" height="4"/>'),
                       "image-outside", 3),
    "image-file-url": (canvas(body='<image href="file:///tmp/a.png"/>'), "image-outside", 2),
    "image-http": (canvas(body='<image xmlns:xlink="http://www.w3.org/1999/xlink" '
                          'xlink:href="http://example.com/a.png"/>'), "image-outside", 2),
    "image-escape": (canvas(body='<image href="../outside.png"/>'), "image-outside", 2),
    "image-symlink": (canvas(body='<image href="link.png"/>'), "image-outside", 2),
    "image-missing": (canvas(body='\n<image href="nope.png"/>'), "image-missing", 3),
    "image-invalid": (canvas(body='<image href="junk.png"/>'), "image-invalid", 2),
    "image-truncated": (canvas(body='<image href="trunc.png"/>'), "image-invalid", 2),
    "image-too-large": (canvas(body='<image href="huge.png"/>'), "image-too-large", 2),
    "image-too-wide": (canvas(body='<image href="wide.png"/>'), "image-too-large", 2),
    "image-empty": (canvas(body='<image href="empty.png"/>'), "image-invalid", 2),
    "image-data-uri": (canvas(body='<image href="data:image/png;base64,AAAA"/>'),
                       "image-invalid", 2),
    "image-no-href": (canvas(body='<image width="3" height="3"/>'), "image-href", 2),
}


@pytest.fixture()
def hostile(tmp_path: Path) -> Path:
    """A project (tmp/proj) with an image outside it (tmp/outside.png) and a link to it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text("")
    good = tmp_path / "outside.png"
    Image.new("RGBA", (2, 2), (255, 0, 0, 255)).save(good)
    os.symlink(good, proj / "link.png")
    (proj / "junk.png").write_bytes(b"not an image at all")
    (proj / "trunc.png").write_bytes(good.read_bytes()[:40])
    (proj / "huge.png").write_bytes(_png_header(100_000, 100_000))
    (proj / "wide.png").write_bytes(_png_header(16_385, 1))
    (proj / "empty.png").write_bytes(_png_header(0, 5))
    return proj


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_code_file_and_line(hostile: Path, case: str) -> None:
    text, code, line = BAD[case]
    path = write(hostile, text, f"{case}.nf.svg")
    err = error_of(path)
    assert err.code == code, err
    assert err.file == str(path)
    assert err.line == line, err
    shown = str(err)
    assert shown.startswith(f"{path}:{line}: " if line else f"{path}: ")
    assert f"error[{code}]" in shown and "\n" not in shown


def test_no_entity_is_ever_expanded(hostile: Path) -> None:
    secret = hostile / "secret.txt"
    secret.write_text("TOP-SECRET")
    path = write(hostile, f'<!DOCTYPE svg [<!ENTITY x SYSTEM "{secret.as_uri()}">]>\n'
                          f'<svg {NS} data-width="4" data-height="4"><text>&x;</text></svg>')
    err = error_of(path)
    assert err.code == "xml-doctype" and "TOP-SECRET" not in str(err)


def test_file_missing(tmp_path: Path) -> None:
    err = error_of(tmp_path / "nowhere.nf.svg")
    assert err.code == "file-missing" and err.file == str(tmp_path / "nowhere.nf.svg")


def test_file_too_large(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(composition, "MAX_FILE_BYTES", 64)
    err = error_of(write(project, canvas(body="<rect/>" * 20)))
    assert err.code == "file-too-large"


def test_limits_are_inclusive(project: Path) -> None:
    """The documented limits themselves are accepted; one more is refused (above)."""
    comp = parse(write(project, canvas('data-width="16384" data-height="8" data-fps="240" '
                                       'data-duration="416.6625"')))
    assert comp.width == 16384 and comp.frame_count == 99_999
    deep = parse(write(project, H + "<g>" * 250 + "</g>" * 250 + "</svg>", "deep.nf.svg"))
    assert len(deep.elements) == 251


def test_accepted_encodings(project: Path) -> None:
    latin = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n' + canvas(body="<text>café</text>")
             ).encode("latin-1")
    comp = parse(write(project, latin))
    assert "".join(comp.root.itertext()).strip() == "café"


# --- the CLI: one line on stderr, exit 2, never a traceback ----------------------------

CLI_CASES = ["malformed", "billion-laughs", "size-missing", "duration-zero", "timeline-json",
             "selector-invalid", "use-bomb", "image-symlink", "image-too-large", "xml-encoding"]


@pytest.mark.parametrize("case", CLI_CASES)
@pytest.mark.parametrize("command", [["svg"], ["render", "--frame", "0", "-o", "x.png"]])
def test_cli_prints_one_line_and_exits_2(hostile: Path, case: str, command: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    text, code, line = BAD[case]
    path = write(hostile, text, f"{case}.nf.svg")
    argv = [command[0], str(path), *command[1:]]
    if command[0] == "render":
        argv[-1] = str(hostile / "x.png")
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n")
    assert err.startswith(f"nanoframes: {path}:{line}: error[{code}]")
    assert not (hostile / "x.png").exists()


def test_cli_subprocess_has_no_traceback(hostile: Path) -> None:
    path = write(hostile, BAD["use-bomb"][0])
    proc = subprocess.run([sys.executable, "-m", "nanoframes", "svg", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"nanoframes: {path}:3: error[use-bomb]: <use> "
                                        "references expand to more than 20000 elements"]
    missing = subprocess.run([sys.executable, "-m", "nanoframes", "render", "nope.nf.svg",
                              "-o", "out"], capture_output=True, text=True, timeout=60,
                             cwd=hostile)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert len(missing.stderr.splitlines()) == 1 and "error[file-missing]" in missing.stderr


def test_prolog_scan_is_linear(project: Path) -> None:
    """The DOCTYPE pre-scan once backtracked exponentially over a prolog of many PIs
    (2^k steps for k PIs): 40 would never finish."""
    prolog = '<?xml version="1.0"?>\n' + "<?nf x?><!-- c -->" * 40 + "\n"
    comp = parse(write(project, prolog + canvas()))
    assert comp.width == 10
    err = error_of(write(project, prolog + "<!DOCTYPE svg>\n" + canvas(), "d.nf.svg"))
    assert (err.code, err.line) == ("xml-doctype", 3)
