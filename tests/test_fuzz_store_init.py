"""A bounded fuzz of two entry points a pull request or a CI artifact reaches (issue 42,
item 7): ``store --import`` and ``init``.

Hypothesis builds store archives (tar, gzip, bzip2, xz) of good frames, frames whose
pixels do not hash to their names, junk, input records (good, nested deep, random),
names out of the store (``..``, absolute), links, folders, and headers that declare
sizes they do not hold; then truncates some and flips bytes in others. Each import
adds only verified entries, or ends in one ``NanoframesError``; nothing lands outside
the store. And it builds projects whose pyproject.toml holds values of every kind
where tables and lists belong, whose ``.gitignore``, ``.gitattributes``,
``pyproject.toml`` and ``.github`` are files, folders, FIFOs or links to files and
folders outside: ``init`` writes only regular files inside the project, or refuses
with one ``NanoframesError``; it never blocks and never changes a file outside.

Limits: ``NANOFRAMES_FUZZ_INPUTS`` examples per test (default 40), archives of at
most a few hundred kilobytes (the bounds themselves are tested in
tests/test_bounded_inputs.py under an address-space limit), each example under a
10 s alarm (a blocked read fails the test instead of hanging it).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import signal
import tarfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanoframes.adopt.project import init
from nanoframes.determinism.inputs import digest_of, verified
from nanoframes.errors import NanoframesError
from nanoframes.frames.archive import import_tar
from nanoframes.frames.digest import frame_digest
from nanoframes.frames.store import Store, decode_png, encode_png

EXAMPLES = int(os.environ.get("NANOFRAMES_FUZZ_INPUTS", "40"))
SECONDS = 10
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])


@contextlib.contextmanager
def alarm(seconds: int = SECONDS):
    """Fail, rather than hang, where a read blocks (a FIFO opened for reading)."""
    def blocked(signum, frame):
        raise TimeoutError(f"blocked for {seconds} s")

    old = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _frame(seed: int) -> tuple[str, bytes]:
    rgba = np.full((3, 5, 4), seed % 256, np.uint8)
    rgba[..., 3] = 255
    return frame_digest(rgba), encode_png(rgba)


def _media_record(seed: int) -> tuple[str, bytes]:
    data = [[f"img{seed}.png", f"{seed:064x}", seed]]
    import json

    return digest_of("media", data), json.dumps(data).encode()


@st.composite
def members(draw) -> tuple[tarfile.TarInfo, bytes]:
    seed = draw(st.integers(0, 255))
    kind = draw(st.sampled_from(["frame", "frame", "wrong-pixels", "junk", "record",
                                 "deep-record", "random-record", "outside", "absolute",
                                 "symlink", "hardlink", "folder", "long-name", "lying-size"]))
    digest, png = _frame(seed)
    name, data, info_type = f"{digest[:2]}/{digest}.png", png, tarfile.REGTYPE
    if kind == "wrong-pixels":
        data = _frame(seed + 1)[1]
    elif kind == "junk":
        data = draw(st.binary(max_size=256))
    elif kind == "record":
        rec, data = _media_record(seed)
        name = f"inputs/media/{rec}.json"
    elif kind == "deep-record":
        name, data = f"inputs/source/{digest}.json", b"[" * draw(st.integers(1, 50_000))
    elif kind == "random-record":
        name = f"inputs/{draw(st.sampled_from(['source', 'media', 'scene', 'blob', 'x']))}/" \
               f"{digest}{draw(st.sampled_from(['.json', '.z']))}"
        data = draw(st.binary(max_size=512))
    elif kind == "outside":
        name = f"../{digest[:2]}/{digest}.png"
    elif kind == "absolute":
        name = f"/tmp/{digest[:2]}/{digest}.png"
    elif kind == "symlink":
        info_type, data = tarfile.SYMTYPE, b""
    elif kind == "hardlink":
        info_type, data = tarfile.LNKTYPE, b""
    elif kind == "folder":
        name, info_type, data = digest[:2], tarfile.DIRTYPE, b""
    elif kind == "long-name":
        name = "x/" * draw(st.integers(60, 400)) + name
    info = tarfile.TarInfo(name)
    info.type = info_type
    info.size = len(data)
    if info_type in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        info.linkname = draw(st.sampled_from(["/etc/passwd", "../../x", "ab/cd"]))
    if kind == "lying-size":
        info.size = draw(st.sampled_from([1 << 30, 1 << 33, len(data) + 1]))
    return info, data


def _archive(items, compression: str, cut: float | None, flips: list[int]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in items:
            if info.size != len(data) and info.isfile():  # a header that lies: raw bytes
                tar.fileobj.write(info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
                tar.fileobj.write(data + bytes(-len(data) % 512))
                tar.offset += 512 + len(data) + (-len(data) % 512)
                continue
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    raw = buf.getvalue()
    raw = {"tar": lambda b: b, "gz": gzip.compress, "bz2": bz2.compress,
           "xz": lzma.compress}[compression](raw)
    data = bytearray(raw)
    for at in flips:
        if data:
            data[at % len(data)] ^= 0xA5
    if cut is not None:
        data = data[:int(len(data) * cut)]
    return bytes(data)


@FUZZ
@given(items=st.lists(members(), max_size=8),
       compression=st.sampled_from(["tar", "gz", "bz2", "xz"]),
       cut=st.none() | st.floats(0, 1), flips=st.lists(st.integers(0, 1 << 20), max_size=3))
def test_store_import_adds_only_verified_entries_or_says_one_line(
        tmp_path: Path, items, compression, cut, flips) -> None:
    case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    (case / "store").mkdir(parents=True)
    source = case / "in.tar"
    source.write_bytes(_archive(items, compression, cut, flips))
    store = Store(case / "store", warn=None)

    def check(kind: str, digest: str, raw: bytes) -> bool:
        return verified(kind, digest, raw) is not None

    with alarm():
        try:
            added, rejected = import_tar(store, source, check)
        except NanoframesError as exc:
            assert exc.code == "store-import-failed", exc
            assert "\n" not in str(exc)
        else:
            assert added >= 0 and len(rejected) <= len(items)
    assert sorted(p.name for p in case.iterdir()) == ["in.tar", "store"]  # nothing beside it
    for entry in store.entries():
        assert frame_digest(decode_png(entry.read_bytes())) == entry.stem
    for record in store.records():
        assert verified(record.parent.name, record.stem, record.read_bytes()) is not None
    assert not [p for p in (case / "store").rglob("*") if p.is_symlink()]


# --- init ------------------------------------------------------------------------

VALUES = st.sampled_from(['1', '"text"', "true", "[]", '["films/*.nf.svg"]', "[1, 2]",
                          "{}", '{ledger = "x.json"}', "1.5", '"*.nf.svg"',
                          "2020-01-01", '[["a"]]'])
KEYS = st.sampled_from(["tool", "tool.nanoframes", "tool.nanoframes.compositions",
                        "tool.nanoframes.ledger", "tool.pytest", "tool.pytest.ini_options",
                        "tool.pytest.ini_options.testpaths", "tool.pytest.ini_options.nf_check",
                        "project"])
KINDS = st.sampled_from(["absent", "file", "file", "folder", "fifo", "link-file",
                         "link-folder", "link-dev-zero", "dangling"])
FOLDERS = st.sampled_from(["films", "shots[1]", "a*b", "what?", "deep/er", "[x]"])


@st.composite
def pyproject(draw) -> str:
    """TOML with values of every kind where init expects tables, lists and strings
    (dotted keys: one valid document however they combine, or a parse error)."""
    lines = [f"{key} = {draw(VALUES)}" for key in draw(st.lists(KEYS, max_size=3,
                                                               unique=True))]
    return "\n".join(lines) + "\n"


def _make(path: Path, kind: str, outside: Path, text: str) -> None:
    if kind == "file":
        path.write_text(text)
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-file":
        path.symlink_to(outside / "secret.env")
    elif kind == "link-folder":
        path.symlink_to(outside)
    elif kind == "link-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dangling":
        path.symlink_to(outside / "nothing-here")


def _outside_state(outside: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(outside.iterdir())}


@FUZZ
@given(toml=pyproject(), kinds=st.fixed_dictionaries({
    name: KINDS for name in ("pyproject.toml", ".gitignore", ".gitattributes", ".github")}),
    folders=st.lists(FOLDERS, max_size=3, unique=True))
def test_init_writes_regular_files_inside_or_says_one_line(tmp_path: Path, toml, kinds,
                                                           folders) -> None:
    case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    root, outside = case / "repo", case / "outside"
    root.mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.env").write_text("TOKEN=1\n")
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "f.nf.svg").write_text("<svg/>")
    for name, kind in kinds.items():
        text = toml if name == "pyproject.toml" else "# theirs\n"
        _make(root / name, "folder" if name == ".github" and kind == "file" else kind,
              outside, text)
    before = _outside_state(outside)
    links = {p: os.readlink(p) for p in root.rglob("*") if p.is_symlink()}
    with alarm():
        try:
            setup = init(root)
        except NanoframesError as exc:
            assert exc.code in ("config-invalid", "init-not-regular", "init-write"), exc
            assert "\n" not in str(exc)
        else:
            assert setup.wrote or setup.kept
    assert _outside_state(outside) == before  # nothing written through a link
    assert {p: os.readlink(p) for p in root.rglob("*") if p.is_symlink()} == links
