"""One way out to the terminal (issue 42): every string that comes from data is
shown through ``nanoframes.shown.shown``. Each source a pull request or a CI
artifact controls is fed an escape sequence for real, through the real command,
and the bytes written to stdout and stderr hold no ESC, BEL or C1 control."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from scratch_project import NANOFRAMES, PYTEST, env, nf, write_film
from test_hints import cli_project, recorded_cli_project

from nanoframes.shown import ShownStream, shown

TITLE = "\x1b]0;pwned\x07"          # sets the terminal's title
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # writes the clipboard
CLEAR = "\x1b[2J\x1b[H"              # clears the screen
CSI = "\x9b31m"                      # C1 CSI: red
HOSTILE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def raw(root: Path, *args: str, command=NANOFRAMES) -> tuple[int, str]:
    """Run a command; its stdout and stderr as the bytes a terminal would get,
    decoded strictly (a lone surrogate could not even be written)."""
    done = subprocess.run([*command, *args], cwd=root, env=env(root), capture_output=True,
                          timeout=300)
    text = (done.stdout + done.stderr).decode("utf-8")
    return done.returncode, text


def harmless(text: str) -> str:
    found = HOSTILE.search(text)
    assert found is None, f"{found.group()!r} reached the terminal: {text!r}"
    return text


def test_shown_makes_every_control_visible() -> None:
    assert shown("a\tb\nc") == "a\tb\nc"
    assert shown("a\nb", lines=False) == "a\\x0ab"
    assert shown(TITLE) == "\\x1b]0;pwned\\x07"
    assert shown("x\x9b2J\x85\x7f\r") == "x\\u009b2J\\u0085\\u007f\\x0d"
    assert shown("abc\u202edcba\u2066") == "abc\\u202edcba\\u2066"
    assert shown("caf\udce9") == "caf\\udce9"  # a file name that is not UTF-8
    assert shown("café ✅ 漢字") == "café ✅ 漢字"
    out = io.StringIO()
    ShownStream(out).write(CLIPBOARD + "\n")
    assert out.getvalue() == "\\x1b]52;c;cHduZWQ=\\x07\n"
    document = json.dumps({"key": f"films/{CSI}\u2028{TITLE}"}, ensure_ascii=False)
    assert json.loads(shown(document)) == json.loads(document)  # JSON stays JSON


def test_a_ledger_key_with_escapes(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    path = root / "tests" / "digests.json"
    doc = json.loads(path.read_text())
    entry = doc["compositions"]["films/b.nf.svg"]
    doc["compositions"][f"films/{TITLE}{CLIPBOARD}.nf.svg"] = entry
    path.write_text(json.dumps(doc, indent=2))
    status, text = raw(root, "digest", "--check")
    assert status == 2 and "error[key-invalid]" in harmless(text), text
    assert "\\x1b]52;c;" in text  # shown, not acted on


def test_a_composition_file_name_with_c1_controls(tmp_path: Path) -> None:
    root = cli_project(tmp_path / "p")
    write_film(root, f"x{CSI}")
    status, text = raw(root, "digest", "--check", "--all")
    assert status == 2 and "error[key-invalid]" in harmless(text), text
    status, text = raw(root, "--nf-check", "films", "-p", "no:randomly", command=PYTEST)
    assert "key-invalid" in harmless(text), text


def test_an_element_id_with_c1_controls(tmp_path: Path) -> None:
    root = cli_project(tmp_path / "p")
    film = root / "films" / "a.nf.svg"
    text = film.read_text().replace("box", f"e{CSI}")
    film.write_text(text.replace("<rect", f'<rect id="e{CSI}" width="1" height="1"/><rect', 1))
    status, text = raw(root, "check", "films/a.nf.svg")
    assert status != 0 and "9b31m" in harmless(text), text  # as repr or shown writes it


def test_a_face_family_name_with_escapes(tmp_path: Path) -> None:
    from fontTools.ttLib import TTFont

    root = cli_project(tmp_path / "p")
    (root / "pyproject.toml").write_text('[tool.nanoframes]\ncompositions = ["films/*.nf.svg"]\n'
                                         'font-dirs = ["faces"]\n')
    font = TTFont(Path(__file__).parents[1] / "fonts" / "NotoSans-Regular.ttf")
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = f"Evil{TITLE}{CSI}"
    (root / "faces").mkdir()
    font.save(root / "faces" / "evil.ttf")
    status, text = raw(root, "fonts")
    assert status == 0 and "Evil\\x1b]0;pwned\\x07" in harmless(text), text


def _artifacts(tmp_path: Path) -> tuple[Path, Path]:
    """A project recorded, and a CI run's artifacts of a check where a.nf.svg CHANGED."""
    root = recorded_cli_project(tmp_path)
    ci = tmp_path / "ci"
    shutil.copytree(root, ci)
    write_film(ci, "a", "#00cc00")
    write_film(root, "a", "#00cc00")  # the same edit here: not stale
    assert nf(ci, "digest", "--check", "--artifacts", "art").returncode == 1
    return root, ci / "art"


def _edit_readings(art: Path, edit) -> None:
    path = art / "pending" / "readings.json"
    doc = json.loads(path.read_text())
    edit(doc["readings"])
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("what", ["key", "line", "platform"])
def test_an_artifacts_key_verdict_line_and_platform_tag(tmp_path: Path, what: str) -> None:
    root, art = _artifacts(tmp_path)
    before = (root / "tests" / "digests.json").read_bytes()

    def edit(readings: dict) -> None:
        item = readings["films/a.nf.svg"]
        if what == "key":
            readings[f"films/{CLEAR}a.nf.svg"] = readings.pop("films/a.nf.svg")
        elif what == "line":
            item["verdict"]["line"] = f"{CLEAR}MATCH films/a.nf.svg: match"
        else:
            item["platform"] = f"linux{TITLE}"

    _edit_readings(art, edit)
    status, text = raw(root, "accept", "--from", str(art))
    harmless(text)
    if what == "line":  # what accept says is what it computed, never the reading's line
        assert status == 0 and "accepted films/a.nf.svg: changed, source changed" in text, text
        assert "MATCH" not in text
    else:
        assert status == 2 and text.count("\n") == 1, text
        assert {"key": "key-invalid", "platform": "platform-invalid"}[what] in text
        assert (root / "tests" / "digests.json").read_bytes() == before


def test_a_tar_member_name_with_escapes(tmp_path: Path) -> None:
    root = cli_project(tmp_path / "p")
    archive = tmp_path / "store.tar"
    with tarfile.open(archive, "w") as tar:
        data = b"not a frame"
        info = tarfile.TarInfo(f"frames/{TITLE}{CSI}.png")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    status, text = raw(root, "store", "--import", str(archive))
    harmless(text)


def test_the_plugin_shows_a_hostile_ledger_key_harmlessly(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    path = root / "tests" / "digests.json"
    doc = json.loads(path.read_text())
    doc["compositions"][f"films/{TITLE}.nf.svg"] = doc["compositions"]["films/b.nf.svg"]
    path.write_text(json.dumps(doc, indent=2))
    status, text = raw(root, "--nf-check", "films", "tests", command=PYTEST)
    assert status != 0 and "key-invalid" in harmless(text), text


def test_the_markdown_summary_keeps_names_in_code_spans() -> None:
    from nanoframes.determinism.verdict import Kind, Verdict
    from nanoframes.evidence.summary import markdown

    verdicts = [Verdict("films/a`b|c.nf.svg", Kind.CHANGED, reasons=("source changed",)),
                Verdict("films/``x", Kind.ERROR,
                        error=f"films/``x: error[file-missing]: <img src=x>{TITLE}")]
    text = harmless(markdown(verdicts))
    assert "| ``films/a`b\\|c.nf.svg`` |" in text, text
    assert "| ```films/``x``` |" in text and "```films/``x: error[file-missing]: <img src=x>" \
        "\\x1b]0;pwned\\x07```" in text, text
