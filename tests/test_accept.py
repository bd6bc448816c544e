"""Pending readings and ``nanoframes accept`` / ``reject`` (issue 35): a check keeps
what did not match; accepting it writes the ledger without drawing anything; a CI
run's artifacts are accepted on another machine (a second real libthorvg build)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from scratch_project import nf, pytest_run, write_film
from test_hints import cli_project, other_build, other_machine, recorded_cli_project  # noqa: F401 - fixture

PENDING = Path(".nanoframes") / "pending" / "readings.json"


def pending(root: Path) -> dict:
    return json.loads((root / PENDING).read_text())["readings"]


def ledger(root: Path) -> dict:
    return json.loads((root / "tests" / "digests.json").read_text())["compositions"]


def ok(done) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_check_keeps_what_did_not_match_and_never_touches_the_ledger(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    before = (root / "tests" / "digests.json").read_bytes()
    write_film(root, "a", "#00cc00")
    done = nf(root, "digest", "--check", "--artifacts", "art")
    assert done.returncode == 1
    kept = pending(root)
    assert list(kept) == ["films/a.nf.svg"]
    item = kept["films/a.nf.svg"]
    assert item["verdict"]["verdict"] == "changed" and item["verdict"]["reasons"] == [
        "source changed"]
    assert item["entry"]["digest"] != json.loads(before)["compositions"]["films/a.nf.svg"]["digest"]
    store = root / ".nanoframes" / "store"
    for digest in item["frames"]:  # its frames: in the store, and beside the artifacts
        assert (store / digest[:2] / f"{digest}.png").is_file()
        assert (root / "art" / "pending" / "frames" / f"{digest}.png").is_file()
    assert list(json.loads((root / "art" / "pending" / PENDING.name).read_text())[
        "readings"]) == ["films/a.nf.svg"]
    assert (root / "tests" / "digests.json").read_bytes() == before
    write_film(root, "a")  # undone: the next check replaces the pending readings
    ok(nf(root, "digest", "--check"))
    assert pending(root) == {}


def test_accept_a_key_then_the_check_matches(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    write_film(root, "a", "#00cc00")
    write_film(root, "b", "#00cccc")
    assert nf(root, "digest", "--check").returncode == 1
    out = ok(nf(root, "accept", "films/a.nf.svg"))
    assert "accepted films/a.nf.svg" in out and "source changed" in out
    assert list(pending(root)) == ["films/b.nf.svg"]  # accepted: no longer pending
    done = nf(root, "digest", "--check")
    assert "MATCH films/a.nf.svg" in done.stdout and "CHANGED films/b.nf.svg" in done.stdout
    ok(nf(root, "accept", "--all-changed"))
    ok(nf(root, "digest", "--check"))
    entry = ledger(root)["films/b.nf.svg"]
    assert "seal" in entry  # written through the ledger's own path


def test_reject_forgets_and_an_unknown_key_is_one_line(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    before = (root / "tests" / "digests.json").read_bytes()
    write_film(root, "a", "#00cc00")
    nf(root, "digest", "--check")
    done = nf(root, "accept", "films/zzz.nf.svg")
    assert done.returncode == 2 and "error[pending-unknown]" in done.stderr
    assert "Traceback" not in done.stderr
    (root / "not.zip").write_text("text")
    for source, code in (("not.zip", "pending-unreadable"), ("films", "pending-none"),
                         ("gone", "pending-unreadable")):
        done = nf(root, "accept", "--from", source)
        assert done.returncode == 2 and f"error[{code}]" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    out = ok(nf(root, "reject", "films/a.nf.svg"))
    assert "rejected films/a.nf.svg" in out and pending(root) == {}
    assert ok(nf(root, "reject")) == "nothing rejected: no pending readings\n"
    assert (root / "tests" / "digests.json").read_bytes() == before


def test_a_regression_needs_force(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    # the same build, another drawing: the same inputs drew other pixels
    done = other_machine(root, "digest", "--check")
    assert done.returncode == 1 and "REGRESSION" in done.stdout, done.stdout
    # Regressions are not taken, and that is said, never silent (issue 43, item 8).
    assert nf(root, "accept", "--all-changed").stdout == (
        "nothing accepted: --all-changed takes every pending reading but regressions "
        "(pending: films/a.nf.svg (regression), films/b.nf.svg (regression)); accept a "
        "regression by its KEY with --force\n")
    done = nf(root, "accept", "films/a.nf.svg")
    assert done.returncode == 1 and "refused films/a.nf.svg: a regression" in done.stdout
    ok(nf(root, "accept", "--force", "films/a.nf.svg"))
    assert "films/a.nf.svg" not in pending(root)


NF_CHECK = """
def test_drawn(nf):
    nf.check(open("films/a.nf.svg").read().replace("#cc0000", "{fill}"))
"""


# Over 10 s at times: three pytest runs and two accepts, each a fresh process.
def test_the_plugin_keeps_pending_readings(tmp_path: Path) -> None:
    """pytest --nf-check keeps collected files' and nf.check's readings alike."""
    root = cli_project(tmp_path / "p")
    (root / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = ["films/*.nf.svg"]\n'
        '[tool.pytest.ini_options]\ntestpaths = ["films", "tests"]\n')
    (root / "tests").mkdir()
    test = root / "tests" / "test_drawn.py"
    test.write_text(NF_CHECK.replace("{fill}", "#cc0000"))
    ok(pytest_run(root, "--nf-record"))
    write_film(root, "b", "#00cccc")
    test.write_text(NF_CHECK.replace("{fill}", "#00cc00"))
    done = pytest_run(root, "--nf-check", "--nf-strict", "--nf-artifacts", "art")
    assert done.returncode == 1, done.stdout
    keys = ["films/b.nf.svg", "tests/test_drawn.py::test_drawn"]
    assert list(pending(root)) == keys
    assert list(json.loads((root / "art" / "pending" / "readings.json").read_text())[
        "readings"]) == keys
    ok(nf(root, "accept", "films/b.nf.svg"))
    done = nf(root, "accept", "tests/test_drawn.py::test_drawn")
    assert done.returncode == 1 and "--nf-record" in done.stdout  # a test draws it
    ok(pytest_run(root, "films", "--nf-check", "--nf-strict"))  # accepted: it matches


@pytest.mark.parametrize("as_zip", [True, False])
def test_accept_what_ci_saw_under_another_build(tmp_path: Path, other_build: Path,  # noqa: F811
                                                as_zip: bool) -> None:
    """CI (a copy of the project, another libthorvg build that draws otherwise) checks
    with --artifacts; here, on the primary build, accept --from applies what it read
    without drawing; then CI's next check matches, and so does this machine's."""
    root = recorded_cli_project(tmp_path)
    ci = tmp_path / "ci"
    shutil.copytree(root, ci)
    runner = {"NANOFRAMES_PLATFORM": "linux-ci", "NANOFRAMES_LIBTHORVG": str(other_build)}
    done = other_machine(ci, "digest", "--check", "--artifacts", "art", **runner)
    assert done.returncode == 1 and "CHANGED" in done.stdout, done.stdout + done.stderr
    source: Path = ci / "art"
    if as_zip:
        source = tmp_path / "artifacts.zip"
        with zipfile.ZipFile(source, "w") as zf:
            for path in sorted((ci / "art").rglob("*")):
                zf.write(path, Path("nanoframes-artifacts") / path.relative_to(ci / "art"))
    write_film(root, "b", "#0000cd")  # edited here since: CI's reading of it is stale
    done = nf(root, "accept", "--from", str(source))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "accepted films/a.nf.svg (platform entry linux-ci): changed" in done.stdout
    assert ("refused films/b.nf.svg: stale: its source differs from the local files'"
            in done.stdout), done.stdout
    entry = ledger(root)["films/a.nf.svg"]
    assert list(entry["platforms"]) == ["linux-ci"]
    store = root / ".nanoframes" / "store"
    for digest in json.loads((ci / "art" / "pending" / "readings.json").read_text())[
            "readings"]["films/a.nf.svg"]["frames"]:
        assert (store / digest[:2] / f"{digest}.png").is_file()  # CI's frames, kept here
    write_film(root, "b", "#0000cc")
    shutil.copy(root / "tests" / "digests.json", ci / "tests" / "digests.json")
    done = other_machine(ci, "digest", "--check", "films/a.nf.svg", **runner)
    assert done.returncode == 0 and "MATCH films/a.nf.svg" in done.stdout, done.stdout
    assert "films/a.nf.svg" in ok(nf(root, "digest", "--check"))


def edited_here_and_in_ci(tmp_path: Path) -> tuple[Path, Path]:
    """A recorded project and its copy (CI's checkout), the same edit made in both."""
    root = recorded_cli_project(tmp_path)
    ci = tmp_path / "ci"
    shutil.copytree(root, ci)
    for project in (root, ci):
        write_film(project, "a", "#00cc00")
    return root, ci


def test_a_laptop_accepts_what_the_primary_machine_read(tmp_path: Path,
                                                        other_build: Path) -> None:  # noqa: F811
    """The primary is the CI runner's drawing; a source edit, checked there, is accepted
    on a laptop whose own build differs: as the primary (CI drew it with the primary's
    renderer), not as a platform entry, and CI's next check matches."""
    root, ci = edited_here_and_in_ci(tmp_path)
    done = nf(ci, "digest", "--check", "--artifacts", "art", NANOFRAMES_PLATFORM="linux-ci")
    assert done.returncode == 1 and "CHANGED films/a.nf.svg" in done.stdout
    laptop = {"NANOFRAMES_PLATFORM": "macos-arm64", "NANOFRAMES_LIBTHORVG": str(other_build)}
    out = ok(nf(root, "accept", "--from", str(ci / "art"), **laptop))
    assert "accepted films/a.nf.svg: changed, source changed" in out, out
    assert "platforms" not in ledger(root)["films/a.nf.svg"]
    shutil.copy(root / "tests" / "digests.json", ci / "tests" / "digests.json")
    ok(nf(ci, "digest", "--check"))


def test_accepted_from_artifacts_the_scenes_come_too(tmp_path: Path) -> None:
    """CI's check diffed the new scenes and left them beside its frames; the machine
    that accepts its reading keeps them, so the next edit there is diffed element by
    element against what was accepted, not "not in the store"."""
    root, ci = edited_here_and_in_ci(tmp_path)
    assert nf(ci, "digest", "--check", "--artifacts", "art").returncode == 1
    carried = json.loads((ci / "art" / "pending" / PENDING.name).read_text())["readings"]
    scenes = carried["films/a.nf.svg"]["scenes"]
    assert scenes and all((ci / "art" / "pending" / "scenes" / f"{d}.z").is_file()
                          for d in scenes)
    shutil.rmtree(root / ".nanoframes" / "store")  # the accepting machine has none of them
    ok(nf(root, "accept", "--from", str(ci / "art")))
    write_film(root, "a", "#0000cc")
    out = nf(root, "digest", "--check").stdout
    assert "#box fill #00cc00 → #0000cc" in out, out
    assert "not in the store" not in out.split("scene:", 1)[1], out


def test_hostile_artifacts_are_one_line(tmp_path: Path) -> None:
    """accept --from reads what a CI run (or anyone) left: a readings file nested
    100,000 deep is one line, never a RecursionError traceback."""
    root = recorded_cli_project(tmp_path)
    source = tmp_path / "deep.zip"
    with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pending/readings.json", "[" * 100_000 + "]" * 100_000)
    done = nf(root, "accept", "--from", str(source))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "error[pending-unreadable]" in lines[0], done.stderr


def test_a_readings_file_naming_a_path_out_of_its_folder_is_one_line(tmp_path: Path) -> None:
    """Each frame and scene digest a readings file lists names a file beside it: one
    that is not 64 hex digits (here a path up and out) is refused, nothing is read."""
    root, ci = edited_here_and_in_ci(tmp_path)
    assert nf(ci, "digest", "--check", "--artifacts", "art").returncode == 1
    path = ci / "art" / "pending" / PENDING.name
    data = json.loads(path.read_text())
    data["readings"]["films/a.nf.svg"]["scenes"] = ["../../../../etc/passwd"]
    path.write_text(json.dumps(data))
    done = nf(root, "accept", "--from", str(ci / "art"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "error[pending-unreadable]" in lines[0], done.stderr
    assert "64-hex digests" in lines[0]


def test_a_png_declaring_gigapixels_is_refused_before_decoding() -> None:
    """A few bytes of PNG may declare 10,000 x 10,000 pixels (400 MB of RGBA; Pillow's
    own bomb check starts at 179 Mpx): the one PNG decoder refuses it from its header,
    past the largest canvas, before allocating anything."""
    import struct
    import zlib

    from nanoframes.frames.png import decode_png

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", 10_000, 10_000, 8, 6, 0, 0, 0)
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
           + chunk(b"IDAT", zlib.compress(b"\0")) + chunk(b"IEND", b""))
    with pytest.raises(ValueError, match="declares 10000x10000 pixels"):
        decode_png(png)
