"""Everything that enters the ledger is checked as if typed by hand (issue 42):
keys canonical and inside the project, platform tags valid, frame digests equal
to the frames a reading carries and to its film digest, the project's own
pending readings signed by this machine. Each refusal is one line with its code
(docs/errors.md), exit 2 or a ``refused`` line, and the ledger untouched."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from built_once import once
from scratch_project import nf, write_film
from test_hints import cli_project, recorded_cli_project

from nanoframes.frames.png import encode_png
from nanoframes.keys import MAX_KEY, canonical_key, key_problem

LEDGER = Path("tests") / "digests.json"
READINGS = Path("pending") / "readings.json"


def one_line(done, code: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and f"error[{code}]" in done.stderr, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return done.stderr


@pytest.mark.parametrize("key", [
    "films/../films/a.nf.svg", "./films/a.nf.svg", "/etc/passwd", "../outside/x.nf.svg",
    "films//a.nf.svg", "films/a.nf.svg/", "C:/films/a.nf.svg", "films\\a.nf.svg",
    "films/a\x00.nf.svg", "films/\x1b]0;t\x07.nf.svg", "films/\x9b.nf.svg",
    "films/\u202egvs.fn.a", "films/\udcff.nf.svg", "", "f/" + "x" * MAX_KEY,
    "films/" + "x" * 300 + ".nf.svg",
])
def test_a_key_that_is_not_canonical_is_refused(key: str) -> None:
    assert key_problem(key) is not None
    with pytest.raises(Exception) as caught:
        canonical_key(key)
    assert "error[key-invalid]" in str(caught.value) and "\x1b" not in str(caught.value)


@pytest.mark.parametrize("key", ["films/a.nf.svg", "a.nf.svg", "films/caf\u00e9 2.nf.svg",
                                 "tests/test_x.py::test_y[de-1]", "films/.hidden.nf.svg"])
def test_a_canonical_key_passes(key: str) -> None:
    assert canonical_key(key) == key


def test_every_key_of_the_bundled_ledgers_passes() -> None:
    """The defence refuses no real key: the project's own ledger and the examples'."""
    repo = Path(__file__).parents[1]
    keys = [key for path in repo.glob("**/digests.json") if ".venv" not in path.parts
            for key in json.loads(path.read_text())["compositions"]]
    assert keys and [k for k in keys if key_problem(k)] == []


def _record(tmp_path: Path) -> Path:
    return recorded_cli_project(tmp_path)


def _record_into(root: Path) -> None:
    cli_project(root)
    assert nf(root, "digest", "--record").returncode == 0


@pytest.mark.parametrize("key", ["../../etc/hostname", "films/a\x00.nf.svg",
                                 "films/" + "x" * 5000 + ".nf.svg"])
def test_a_ledger_key_out_of_the_project_is_refused_and_dropped_by_force(
        tmp_path: Path, key: str) -> None:
    root = _record(tmp_path)
    path = root / LEDGER
    doc = json.loads(path.read_text())
    doc["compositions"][key] = doc["compositions"]["films/b.nf.svg"]
    path.write_text(json.dumps(doc, indent=2))
    one_line(nf(root, "digest", "--check"), "key-invalid")
    one_line(nf(root, "digest", "--record"), "key-invalid")
    done = nf(root, "digest", "--record", "--force")  # recovered: the bad entry left out
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(json.loads(path.read_text())["compositions"]) == [
        "films/a.nf.svg", "films/b.nf.svg"]


def test_a_file_name_that_is_not_utf8_is_one_line_and_the_ledger_is_kept(
        tmp_path: Path) -> None:
    root = _record(tmp_path)
    before = (root / LEDGER).read_bytes()
    shutil.copy(root / "films" / "a.nf.svg", os.fsencode(root / "films") + b"/\xff.nf.svg")
    one_line(nf(root, "digest", "--record", "--all"), "key-invalid")
    assert (root / LEDGER).read_bytes() == before


def _artifacts(tmp_path: Path) -> tuple[Path, Path]:
    """Built once per session, copied: the projects, their caches (each machine's
    key) and the CI project's artifacts."""
    once(tmp_path, "test_hostile_ledger artifacts", lambda: _artifacts_into(tmp_path), tmp_path)
    return tmp_path / "p", tmp_path / "ci" / "art"


def _artifacts_into(tmp_path: Path) -> None:
    root = tmp_path / "p"
    _record_into(root)
    ci = tmp_path / "ci"
    shutil.copytree(root, ci)
    for project in (ci, root):
        write_film(project, "a", "#00cc00")
    assert nf(ci, "digest", "--check", "--artifacts", "art").returncode == 1


def _edit(art: Path, edit) -> None:
    path = art / READINGS
    doc = json.loads(path.read_text())
    edit(doc["readings"]["films/a.nf.svg"], doc["readings"])
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("case", ["dotted", "dot", "absolute", "outside", "tag", "verdict-type",
                                  "verdict-kind", "nul"])
def test_accept_from_refuses_what_a_person_would_not_type(tmp_path: Path, case: str) -> None:
    root, art = _artifacts(tmp_path)
    before = (root / LEDGER).read_bytes()
    rename = {"dotted": "films/../films/a.nf.svg", "dot": "./films/a.nf.svg",
              "absolute": str(root / "films" / "a.nf.svg"), "outside": "../outside/x.nf.svg",
              "nul": "films/a\x00.nf.svg"}

    def edit(item: dict, readings: dict) -> None:
        if case in rename:
            readings[rename[case]] = readings.pop("films/a.nf.svg")
        elif case == "tag":
            item["platform"] = "EVIL TAG"
        elif case == "verdict-type":
            item["verdict"] = "changed"
        else:
            item["verdict"]["verdict"] = "bogus"

    _edit(art, edit)
    code = {"tag": "platform-invalid", "verdict-type": "pending-unreadable",
            "verdict-kind": "pending-unreadable"}.get(case, "key-invalid")
    for source in (art, shutil.make_archive(str(tmp_path / "art"), "zip", art)):
        one_line(nf(root, "accept", "--from", str(source)), code)
    assert (root / LEDGER).read_bytes() == before
    assert nf(root, "digest", "--check").returncode == 1  # every command still reads it


def _png(rgba: np.ndarray, path: Path) -> None:
    path.write_bytes(encode_png(rgba))


@pytest.mark.parametrize("case", ["missing", "other-pixels", "undecodable", "digests",
                                  "film-digest"])
def test_frame_digests_must_be_the_frames_carried(tmp_path: Path, case: str) -> None:
    root, art = _artifacts(tmp_path)
    before = (root / LEDGER).read_bytes()
    frames = sorted((art / "pending" / "frames").glob("*.png"))
    assert frames
    if case == "missing":
        frames[0].unlink()
    elif case == "other-pixels":
        _png(np.zeros((16, 16, 4), np.uint8), frames[0])
    elif case == "undecodable":
        frames[0].write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    else:
        def edit(item: dict, _readings: dict) -> None:
            entry = item["entry"]
            entry.pop("seal", None)  # anyone can recompute a seal; leave it out
            if case == "digests":
                entry["frame_digests"][0] = "0" * 16
            else:
                entry["digest"] = "f" * 64

        _edit(art, edit)
    done = nf(root, "accept", "--from", str(art))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refused films/a.nf.svg:" in done.stdout and "not accepted" in done.stdout
    assert "Traceback" not in done.stderr
    assert (root / LEDGER).read_bytes() == before


def test_committed_pending_readings_are_refused(tmp_path: Path) -> None:
    """A pull request commits ``.nanoframes/pending/readings.json`` (with a MAC of its
    own): ``accept --all-changed`` and ``review`` refuse it; the check's own pass."""
    root, art = _artifacts(tmp_path)
    before = (root / LEDGER).read_bytes()
    own = root / ".nanoframes" / "pending"
    own.mkdir(parents=True, exist_ok=True)
    shutil.copy(art / READINGS, own / "readings.json")  # signed by another machine's key
    shutil.copy(art / "pending" / "readings.mac", own / "readings.mac")
    one_line(nf(root, "accept", "--all-changed"), "pending-unverified")
    (own / "readings.mac").unlink()
    one_line(nf(root, "accept", "films/a.nf.svg"), "pending-unverified")
    assert (root / LEDGER).read_bytes() == before
    assert nf(root, "digest", "--check").returncode == 1  # the check's own readings
    done = nf(root, "accept", "--all-changed")
    assert done.returncode == 0 and "accepted films/a.nf.svg" in done.stdout, done.stderr


def test_the_sweep_keeps_no_entry_whose_file_is_outside_the_project(tmp_path: Path) -> None:
    """A canonical key whose path is a link out of the project names nothing the
    ledger may keep: stale, and a full recording drops it."""
    root = _record(tmp_path)
    outside = tmp_path / "hostname"
    outside.write_text("not a film\n")
    (root / "other").mkdir()
    (root / "other" / "link.nf.svg").symlink_to(outside)
    path = root / LEDGER
    doc = json.loads(path.read_text())
    doc["compositions"]["other/link.nf.svg"] = doc["compositions"]["films/b.nf.svg"]
    path.write_text(json.dumps(doc, indent=2))
    done = nf(root, "digest", "--check")
    assert "STALE other/link.nf.svg" in done.stdout, done.stdout + done.stderr
    assert nf(root, "digest", "--record").returncode == 0
    assert "other/link.nf.svg" not in json.loads(path.read_text())["compositions"]
