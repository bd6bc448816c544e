"""What a pull request or a CI artifact hands over is read bounded and in linear time
(issue 42, items 3 and 4): scene records, store archives (tar, gzip, bzip2, xz),
input records, ``accept --list``, readings files and zip members. Each command runs
in a child under an address-space limit (``tests/launched.py``) and a timeout, and
ends with one line ``error[code]: ...`` (exit 2) or a verdict of its own, never a
traceback, a ``MemoryError`` or a hang.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import subprocess
import tarfile
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from launched import nanoframes_capped

from nanoframes.frames.archive import MAX_TAR_HEADER
from nanoframes.frames.digest import frame_digest
from nanoframes.frames.scenes import pack, scene_digest
from nanoframes.frames.store import MAX_ENTRY, encode_png

MB = 1 << 20
LIMIT = 768 * MB  # the children's address space: a 1 GiB member cannot be read whole
HEX = "ab" * 32


def nf(root: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return nanoframes_capped(root, args, LIMIT, timeout)


def one_error(proc: subprocess.CompletedProcess, code: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and f"error[{code}]" in lines[0], proc.stderr[-2000:]
    return lines[0]


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "MemoryError" not in out, out[-2000:]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.nanoframes]\n")
    return root


def a_frame() -> tuple[str, bytes]:
    rgba = np.zeros((4, 4, 4), np.uint8)
    rgba[..., 0] = 200
    rgba[..., 3] = 255
    return frame_digest(rgba), encode_png(rgba)


# --- scene records: linear in their lines, bounded before blobs are read -------------

def test_a_scene_record_of_two_million_reference_lines_is_read_in_one_pass(
        project: Path) -> None:
    lines = b"".join(b"%d %s 1024\n" % (i, HEX.encode()) for i in range(2_000_000))
    raw = b"nanoframes-scene 1\n2000000\n" + lines + b"<svg/>"
    record = zlib.compress(raw, 9)
    assert len(record) < 8 * MB  # small enough to commit
    folder = project / ".nanoframes" / "store" / "inputs" / "scene"
    folder.mkdir(parents=True)
    (folder / f"{'cd' * 32}.z").write_bytes(record)
    done = nf(project, "store", "--verify", timeout=120)
    no_traceback(done)
    assert done.returncode == 1 and "scenes: 0 good, 1 bad" in done.stdout, done.stdout


def test_a_scene_that_would_rebuild_past_the_limit_reads_no_blob(tmp_path: Path) -> None:
    from nanoframes.frames.scenes import MAX_SCENE, unpack

    asked: list[str] = []
    count = MAX_SCENE // MB + 1  # one 1 MiB blob referenced past the limit
    raw = b"nanoframes-scene 1\n%d\n" % count + b"".join(
        b"0 %s %d\n" % (HEX.encode(), MB) for _ in range(count))
    assert unpack(zlib.compress(raw), lambda d: asked.append(d)) is None
    assert asked == []


def test_a_scene_still_rebuilds_after_the_bounds() -> None:
    uri = b"data:image/png;base64," + b"A" * 4000
    document = b'<svg><image href="' + uri + b'"/><image href="' + uri + b'"/></svg>'
    record, blobs = pack(document)
    from nanoframes.frames.scenes import unpack

    assert unpack(record, blobs.get) == document and scene_digest(document)


# --- store --import: members bounded before they are read ------------------------

def _bomb(compress, size: int, after: list[tuple[str, bytes]] = ()) -> bytes:
    """A tar stream whose first member (a frame by its name) declares ``size`` bytes
    of zeros, written as concatenated streams of one MiB each (the format allows
    it), then ``after``: a small archive for gigabytes read."""
    header = tarfile.TarInfo(f"{HEX[:2]}/{HEX}.png")
    header.size = size
    parts = [compress(header.tobuf(format=tarfile.USTAR_FORMAT))]
    chunk = compress(bytes(MB))
    parts += [chunk] * (size // MB)
    tail = io.BytesIO()
    with tarfile.open(fileobj=tail, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in after:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    parts.append(compress(tail.getvalue()))
    return b"".join(parts)


def test_a_gigabyte_frame_member_of_a_small_tar_gz_is_rejected_unread(project: Path) -> None:
    digest, png = a_frame()
    data = _bomb(gzip.compress, 1024 * MB, [(f"{digest[:2]}/{digest}.png", png)])
    assert len(data) < 8 * MB
    (project / "bomb.tar.gz").write_bytes(data)
    done = nf(project, "store", "--import", "bomb.tar.gz", timeout=180)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"rejected: {HEX[:2]}/{HEX}.png" in done.stdout
    assert "imported 1 entries, 1 rejected" in done.stdout  # the frame after it came in
    assert (project / ".nanoframes" / "store" / digest[:2] / f"{digest}.png").is_file()


@pytest.mark.parametrize("compress", [bz2.compress, lzma.compress], ids=["bz2", "xz"])
def test_an_oversized_member_is_rejected_unread_from_bz2_and_xz(project: Path,
                                                                compress) -> None:
    size = max(MAX_ENTRY + MB, 1024 * MB)  # past the limit, and past what the child may hold
    (project / "bomb.tar").write_bytes(_bomb(compress, size))
    done = nf(project, "store", "--import", "bomb.tar", timeout=180)
    no_traceback(done)
    assert done.returncode == 1 and "imported 0 entries, 1 rejected" in done.stdout, done


def test_an_extended_header_past_its_limit_is_one_line(project: Path) -> None:
    info = tarfile.TarInfo("././@PaxHeader")
    info.type = tarfile.XHDTYPE
    info.size = 1024 * MB
    data = _bomb(gzip.compress, 0)[:0]  # nothing but the header and its zeros:
    parts = [gzip.compress(info.tobuf(format=tarfile.USTAR_FORMAT))]
    parts += [gzip.compress(bytes(MB))] * (info.size // MB)
    (project / "pax.tar.gz").write_bytes(data + b"".join(parts))
    line = one_error(nf(project, "store", "--import", "pax.tar.gz", timeout=120),
                     "store-import-failed")
    assert f"over {MAX_TAR_HEADER:,}" in line


def test_an_input_record_nested_100000_deep_is_rejected(project: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for kind, body in (("source", b"[" * 100_000), ("media", b"{\"a\":" * 100_000)):
            info = tarfile.TarInfo(f"inputs/{kind}/{HEX}.json")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    (project / "deep.tar").write_bytes(buf.getvalue())
    done = nf(project, "store", "--import", "deep.tar")
    no_traceback(done)
    assert done.returncode == 1 and "imported 0 entries, 2 rejected" in done.stdout, done


def test_a_corrupt_archive_is_one_line(project: Path) -> None:
    good = _bomb(gzip.compress, 0, [("x", b"y" * 5000)])
    (project / "cut.tar.gz").write_bytes(good[: len(good) // 2])
    one_error(nf(project, "store", "--import", "cut.tar.gz"), "store-import-failed")


# --- FIFOs and devices never block a read, nor are read whole ----------------------

def test_fifos_block_neither_import_nor_verify_nor_accept_list(project: Path) -> None:
    os.mkfifo(project / "in.tar")
    os.mkfifo(project / "accept.json")
    store = project / ".nanoframes" / "store"
    (store / HEX[:2]).mkdir(parents=True)
    os.mkfifo(store / HEX[:2] / f"{HEX}.png")
    (store / "inputs" / "scene").mkdir(parents=True)
    os.mkfifo(store / "inputs" / "scene" / f"{HEX}.z")
    line = one_error(nf(project, "store", "--import", "in.tar", timeout=30),
                     "store-import-failed")
    assert "not a regular file" in line
    done = nf(project, "store", "--verify", timeout=30)
    no_traceback(done)
    assert done.returncode == 0 and "0 good, 0 bad" in done.stdout, done.stdout
    line = one_error(nf(project, "accept", "--list", "accept.json", timeout=30),
                     "accept-list-invalid")
    assert "not a regular file" in line


def test_accept_list_of_dev_zero_or_nested_brackets_is_one_line(project: Path) -> None:
    (project / "zero.json").symlink_to("/dev/zero")
    assert "not a regular file" in one_error(
        nf(project, "accept", "--list", "zero.json", timeout=30), "accept-list-invalid")
    (project / "deep.json").write_text('{"accept": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested deeper" in one_error(
        nf(project, "accept", "--list", "deep.json", timeout=30), "accept-list-invalid")
    with open(project / "big.json", "wb") as fh:
        fh.truncate(9 * MB)  # sparse: past the limit, refused before a byte is read
    assert "(the limit)" in one_error(
        nf(project, "accept", "--list", "big.json", timeout=30), "accept-list-invalid")


# --- readings files: too large or not a file is an error, never "none pending" -------

def test_a_readings_file_past_its_limit_or_not_a_file_is_one_line(project: Path) -> None:
    from nanoframes.determinism.pending import MAX_READINGS

    pending = project / ".nanoframes" / "pending"
    pending.mkdir(parents=True)
    with open(pending / "readings.json", "wb") as fh:
        fh.truncate(MAX_READINGS + 1)
    assert "(the limit)" in one_error(nf(project, "accept", "--all-changed", timeout=30),
                                      "pending-unreadable")
    (pending / "readings.json").unlink()
    os.mkfifo(pending / "readings.json")
    assert "not a regular file" in one_error(
        nf(project, "accept", "--all-changed", timeout=30), "pending-unreadable")
    (pending / "readings.json").unlink()
    # the project's own readings are checked for their signature before they are parsed
    # (determinism/origin.py); an artifact's are parsed, bounded in depth
    art = project / "art" / "pending"
    art.mkdir(parents=True)
    (art / "readings.json").write_text('{"version": 1, "readings": ' + "[" * 100_000)
    assert "nested deeper" in one_error(
        nf(project, "accept", "--from", str(art.parent), "--all-changed", timeout=30),
        "pending-unreadable")


def _zip_with_readings(path: Path) -> None:
    body = json.dumps({"version": 1, "readings": {}}).encode() * 50
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pending/readings.json", body)


def test_an_encrypted_zip_member_is_one_line(project: Path) -> None:
    art = project / "art.zip"
    _zip_with_readings(art)
    data = bytearray(art.read_bytes())
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # flag bit 0: encrypted
        where = data.find(signature)
        data[where + at] |= 1
    art.write_bytes(bytes(data))
    line = one_error(nf(project, "accept", "--from", "art.zip", timeout=30),
                     "pending-unreadable")
    assert "readings.json" in line and "encrypted" in line


def test_a_corrupt_zip_member_is_one_line(project: Path) -> None:
    art = project / "art.zip"
    _zip_with_readings(art)
    data = bytearray(art.read_bytes())
    start = data.find(b"PK\x03\x04") + 30 + len("pending/readings.json")
    for i in range(start + 2, start + 12):  # the deflate stream, past its first bytes
        data[i] ^= 0x5A
    art.write_bytes(bytes(data))
    line = one_error(nf(project, "accept", "--from", "art.zip", timeout=30),
                     "pending-unreadable")
    assert "readings.json cannot be read" in line


# --- a timeline string an SVG attribute cannot hold --------------------------------

TIMELINE = """<svg xmlns="http://www.w3.org/2000/svg" data-width="32" data-height="32"
     data-fps="2" data-duration="1">
  <rect id="r" width="10" height="10" fill="red"/>
  <script type="application/nanoframes+json">{"animations": [{"target": "#r",
    "keyframes": [{"t": 0, "fill": "%s"}, {"t": 1, "fill": "blue"}]}]}</script>
</svg>
"""


@pytest.mark.parametrize("value", ["\\u0001red", "\\u001b]0;x\\u0007", "\\uffff", "\\ud800"])
def test_a_timeline_string_xml_cannot_hold_is_one_line_everywhere(project: Path,
                                                                  value: str) -> None:
    (project / "a.nf.svg").write_text(TIMELINE % value)
    line = one_error(nf(project, "render", "a.nf.svg", "--frame", "0", "-o", "a.png"),
                     "timeline-string")
    assert "fill holds U+" in line and "\x1b" not in line
    for args in (["digest", "a.nf.svg"], ["check", "a.nf.svg"]):  # a line per file: stdout
        done = nf(project, *args)
        no_traceback(done)
        lines = done.stdout.splitlines()
        assert done.returncode == 2 and "error[timeline-string]" in lines[0], done.stdout
    assert not (project / "a.png").exists()


# --- the ledger's own scans: linear whatever the text ---------------------------------

@pytest.mark.parametrize("text", [
    '{"compositions": {"' + '\\"' * 500_000,  # a string that never ends: was rescanned
    '{"compositions": {' + ",".join(f'"k{i}": 1' for i in range(200_000)) + "}}",
], ids=["unterminated-string", "200000-keys"])
def test_the_ledger_is_scanned_in_one_pass(project: Path, text: str) -> None:
    from nanoframes.config import DEFAULT_LEDGER

    ledger = project / DEFAULT_LEDGER
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text(text)
    done = nf(project, "digest", "--check", timeout=120)
    no_traceback(done)
    assert done.returncode == 2 and "error[ledger-" in done.stdout + done.stderr, done
