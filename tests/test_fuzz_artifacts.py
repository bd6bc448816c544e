"""A bounded fuzz of what a CI artifact or a pull request hands nanoframes
(issue 42, item 7): ``accept --from`` a folder and a zip, ``review --from`` (what
it loads, verifies, shows and would open) and the ledger reader.

Each example starts from real readings of a real check (a scratch project whose
film changed) and mutates them: a field replaced by a random JSON value (keys
and strings with control characters, NUL, ``..``, huge and mistyped numbers,
nesting), a field or a reading dropped, random bytes spliced into the file.
Within the documented limits (docs/limits.md: a readings file under 64 MiB, a
ledger under its cap), every example ends in one of three ways: accepted, a
``refused KEY: …`` line, or one ``error[code]`` line with exit 2 and the ledger
untouched; never a traceback; and nothing written to the terminal holds an ESC,
BEL or C1 control. The ledger reader returns only canonical keys or refuses.
Kept small (tens of examples each, ``derandomize``): the suite's time bound.
"""

from __future__ import annotations

import copy
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scratch_project import nf, write_film
from test_hints import cli_project

from nanoframes.errors import NanoframesError
from nanoframes.keys import is_canonical

HOSTILE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

TEXT = st.one_of(
    st.sampled_from(["films/a.nf.svg", "films/../films/a.nf.svg", "/etc/hostname", "..",
                     "films/a\x00.nf.svg", "\x1b[2J\x1b[HMATCH", "\x1b]52;c;eA==\x07", "\x9b31m",
                     "EVIL TAG", "linux-x86_64", "changed", "match", "regression", "bogus",
                     "x" * 5000, "0" * 64, "f" * 16, "\udcff", "--renderer-cmd-prefix=x",
                     "file:///etc/passwd.html", ""]),
    st.text(max_size=20))
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
              st.floats(allow_nan=False, allow_infinity=False), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12)


def _paths(doc, prefix=()):
    """Every place in a JSON document a mutation may land."""
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _paths(value, (*prefix, index))


@st.composite
def mutated(draw, doc: dict) -> bytes:
    """``doc`` with one to three mutations, as bytes (some with junk spliced in)."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        path = draw(st.sampled_from(paths))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        how = draw(st.sampled_from(["value", "value", "drop", "rename"]))
        if how == "value":
            parent[path[-1]] = draw(VALUES)
        elif how == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif how == "rename" and isinstance(parent, dict):
            parent[draw(TEXT)] = parent.pop(path[-1])
    raw = json.dumps(doc).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 5)) == 0:
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(max_size=16)) + raw[at:]
    return raw


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A recorded project with an edit, and the artifacts of a CI check of that edit."""
    base = tmp_path_factory.mktemp("fuzz")
    root = cli_project(base / "p")
    assert nf(root, "digest", "--record").returncode == 0
    ci = base / "ci"
    shutil.copytree(root, ci)
    for project in (ci, root):
        write_film(project, "a", "#00cc00")
    assert nf(ci, "digest", "--check", "--artifacts", "art", "--html",
              "art/index.html").returncode == 1
    return root, ci / "art"


def _template(art: Path) -> dict:
    return json.loads((art / "pending" / "readings.json").read_text())


def _run(root: Path, source: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> str:
    """``nanoframes accept --from SOURCE`` in this process, into a fresh copy of the
    ledger; what it printed, checked."""
    from nanoframes.cli import main

    ledger = root / "fuzz-ledger.json"
    ledger.write_bytes((root / "tests" / "digests.json").read_bytes())
    before = ledger.read_bytes()
    monkeypatch.chdir(root)
    capsys.readouterr()
    status = main(["accept", "--from", str(source), "--ledger", str(ledger),
                   "--store", str(root.parent / "fuzz-store")])
    out, err = capsys.readouterr()
    assert HOSTILE.search(out + err) is None, out + err
    assert status in (0, 1, 2), status
    if status == 2:
        assert err.count("\n") == 1 and "error[" in err, err
        assert ledger.read_bytes() == before
        event(f"refused: {err.split('error[')[1].split(']')[0]}")
    else:
        event("accepted" if status == 0 else "a reading refused")
    return out


@SETTINGS
@given(data=st.data())
def test_accept_from_a_folder(artifacts, tmp_path_factory, monkeypatch, capsys, data) -> None:
    root, art = artifacts
    folder = tmp_path_factory.mktemp("art")
    shutil.copytree(art / "pending", folder / "pending")
    (folder / "pending" / "readings.json").write_bytes(data.draw(mutated(_template(art))))
    _run(root, folder, monkeypatch, capsys)


@SETTINGS
@given(data=st.data())
def test_accept_from_a_zip(artifacts, tmp_path_factory, monkeypatch, capsys, data) -> None:
    root, art = artifacts
    target = tmp_path_factory.mktemp("zip") / "art.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("nanoframes-report/pending/readings.json",
                         data.draw(mutated(_template(art))))
        for frame in sorted((art / "pending" / "frames").glob("*.png")):
            name = f"nanoframes-report/pending/frames/{frame.name}"
            if data.draw(st.integers(0, 7)) == 0:  # a frame swapped for junk
                archive.writestr(name, data.draw(st.binary(max_size=64)))
            else:
                archive.writestr(name, frame.read_bytes())
    target.write_bytes(buffer.getvalue())
    _run(root, target, monkeypatch, capsys)


@SETTINGS
@given(data=st.data())
def test_review_from(artifacts, tmp_path_factory, data) -> None:
    """What ``review --from`` loads, verifies, shows and would open: shown lines are
    computed (none of the reading's own text), the page is an ``.html`` inside the
    artifacts folder or none."""
    from nanoframes.config import load_config
    from nanoframes.determinism.ledger import read_ledger
    from nanoframes.determinism.pending import load
    from nanoframes.evidence.review import report_of, section_link, shown_lines, verify

    root, art = artifacts
    folder = tmp_path_factory.mktemp("art")
    shutil.copytree(art / "pending", folder / "pending")
    shutil.copy(art / "index.html", folder / "index.html")
    template = _template(art)
    template["report"] = data.draw(TEXT)
    (folder / "pending" / "readings.json").write_bytes(data.draw(mutated(template)))
    config = load_config(root)
    ledger = read_ledger(root / "tests" / "digests.json")
    try:
        source, pending = load(root, folder)
    except NanoframesError as exc:
        assert "\n" not in str(exc)
        event(f"refused: {exc.code}")
        return
    page = report_of(source, root)
    assert page is None or (page.suffix == ".html"
                            and page.is_relative_to(folder.resolve()))
    for item in pending.values():
        verify(item, source, root.parent / "fuzz-store", elsewhere=True)
        for line in shown_lines(item, ledger, config, root.parent / "fuzz-store"):
            assert "MATCH films/a" not in line or item.entry.digest == ledger.entries[
                item.key].digest
        if page is not None:
            assert section_link(page, item.key).startswith("file:///")
    event(f"loaded {len(pending)}")


@SETTINGS
@given(data=st.data())
def test_the_ledger_reader(artifacts, tmp_path_factory, data) -> None:
    from nanoframes.determinism.ledger import read_ledger

    root, _ = artifacts
    doc = json.loads((root / "tests" / "digests.json").read_text())
    path = tmp_path_factory.mktemp("ledger") / "digests.json"
    path.write_bytes(data.draw(mutated(doc)))
    try:
        ledger = read_ledger(path)
    except NanoframesError as exc:
        assert "\n" not in str(exc)
        event(f"refused: {exc.code}")
        return
    assert all(is_canonical(key) for key in ledger.entries)
    event("read")
