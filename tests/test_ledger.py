"""tests/digests.json: strict reading, byte-stable writing, merging, atomicity."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from nanoframes import files as files_module
from nanoframes.determinism.ledger import (
    LEDGER_VERSION,
    Entry,
    Ledger,
    dumps,
    merge,
    read_ledger,
    write_ledger,
)
from nanoframes.errors import NanoframesError
from nanoframes.frames.digest import SHORT, film_digest


def hexof(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_entry(frames: int = 3, seed: str = "x", samples: tuple[int, ...] | None = None) -> Entry:
    indices = samples if samples is not None else tuple(range(frames))
    full = [hexof(f"{seed}{i}") for i in indices]
    return Entry(
        digest=film_digest(full),
        frames=frames,
        sampled=samples is not None,
        samples=samples,
        identity={"source": hexof("s" + seed), "media": "none", "fonts": hexof("f"),
                  "toolchain": hexof("t")},
        toolchain_parts={"thorvg-python": "1.1.3", "libthorvg": hexof("lib"),
                         "nanoframes": "0.1.0", "modules": hexof("mod")},
        frame_digests=tuple(d[:SHORT] for d in full),
    )


def sample_ledger(path: Path) -> Ledger:
    return Ledger(path, {
        "examples/zeta.nf.svg": make_entry(seed="z"),
        "examples/alpha.nf.svg": make_entry(frames=10, seed="a", samples=(0, 5, 9)),
        "examples/ünïcode.nf.svg": make_entry(seed="u"),
    })


def write_raw(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def valid_doc() -> dict:
    return {"version": LEDGER_VERSION,
            "compositions": {"examples/a.nf.svg": make_entry().to_json()}}


# --- round trip and format ---------------------------------------------------------


def test_a_missing_ledger_reads_as_empty(tmp_path: Path) -> None:
    ledger = read_ledger(tmp_path / "digests.json")
    assert ledger.entries == {}


def test_round_trip_is_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "tests" / "digests.json"
    write_ledger(sample_ledger(path))
    first = path.read_bytes()
    again = read_ledger(path)
    assert again.entries == sample_ledger(path).entries
    write_ledger(again)
    assert path.read_bytes() == first
    assert dumps(again).encode("utf-8") == first


def test_keys_are_sorted_indented_and_newline_terminated(tmp_path: Path) -> None:
    path = tmp_path / "digests.json"
    write_ledger(sample_ledger(path))
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n  "compositions": {\n    "examples/alpha.nf.svg": {\n')
    keys = list(json.loads(text)["compositions"])
    assert keys == sorted(keys)
    assert "ünïcode" in text  # not \\u-escaped
    entry = json.loads(text)["compositions"]["examples/alpha.nf.svg"]
    assert list(entry) == sorted(entry)


def test_a_full_entry_has_no_samples_field_and_a_sampled_one_does(tmp_path: Path) -> None:
    doc = json.loads(dumps(sample_ledger(tmp_path / "d.json")))["compositions"]
    assert "samples" not in doc["examples/zeta.nf.svg"]
    assert doc["examples/alpha.nf.svg"]["samples"] == [0, 5, 9]
    assert doc["examples/alpha.nf.svg"]["sampled"] is True


# --- corrupt and invalid -------------------------------------------------------


def test_corrupt_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "digests.json"
    path.write_text('{\n  "version": 1,\n  "compositions": {,}\n}\n', encoding="utf-8")
    with pytest.raises(NanoframesError) as info:
        read_ledger(path)
    err = info.value
    assert err.code == "ledger-corrupt"
    assert (err.line, err.column) == (3, 20)
    assert err.file == str(path)
    assert str(err).startswith(f"{path}:3:20: error[ledger-corrupt]")


def test_a_merge_conflict_is_named_as_one(tmp_path: Path) -> None:
    path = tmp_path / "digests.json"
    path.write_text('{\n<<<<<<< HEAD\n  "version": 1\n', encoding="utf-8")
    with pytest.raises(NanoframesError) as info:
        read_ledger(path)
    assert info.value.code == "ledger-conflict" and info.value.line == 2
    assert str(info.value) == (f"{path}:2: error[ledger-conflict]: unresolved merge conflict "
                               "at line 2: run `nanoframes ledger merge` or resolve it "
                               f"(mid-merge, base, ours and theirs are `git show :1:{path}`, "
                               "`:2:`, `:3:`; `--record --force` merges the two sides)")


def test_not_utf8_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "digests.json"
    path.write_bytes(b'{"version": 1, "compositions": {"\xff": 1}}')
    with pytest.raises(NanoframesError, match="ledger-corrupt"):
        read_ledger(path)


@pytest.mark.parametrize(
    "doc, needle",
    [
        ([], "must be a JSON object"),
        ({"compositions": {}}, "version"),
        ({"version": 3, "compositions": {}}, "version 3 is not supported"),
        ({"version": True, "compositions": {}}, "non-integer 'version'"),
        ({"version": 1, "compositions": []}, "'compositions' must be an object"),
        ({"version": 1, "compositions": {}, "extra": 1}, "unknown top-level field 'extra'"),
    ],
)
def test_invalid_top_level_shape(tmp_path: Path, doc: object, needle: str) -> None:
    path = write_raw(tmp_path / "digests.json", doc)
    with pytest.raises(NanoframesError) as info:
        read_ledger(path)
    assert info.value.code == "ledger-invalid"
    assert needle in info.value.message


def _break(field: str, value: object):
    def edit(entry: dict) -> None:
        if value is _DELETE:
            del entry[field]
        else:
            entry[field] = value
    return edit


_DELETE = object()


@pytest.mark.parametrize(
    "edit, field",
    [
        (_break("digest", "ABC"), "'digest'"),
        (_break("digest", _DELETE), "missing field 'digest'"),
        (_break("frames", 0), "'frames'"),
        (_break("frames", True), "'frames'"),
        (_break("frames", 4), "'frame_digests' has 3 digests, expected 4"),
        (_break("sampled", "no"), "'sampled'"),
        (_break("samples", [0, 1]), "'samples' is only allowed"),
        (_break("identity", {"source": "x"}), "'identity'"),
        (lambda e: e["identity"].update(source="none"), "'identity.source'"),
        (lambda e: e["identity"].update(fonts="x"), "'identity.fonts'"),
        (lambda e: e["toolchain_parts"].pop("modules"), "'toolchain_parts'"),
        (lambda e: e["toolchain_parts"].update(libthorvg=3), "'toolchain_parts.libthorvg'"),
        (lambda e: e["frame_digests"].__setitem__(1, "zz"), "'frame_digests'"),
        (_break("colour", "red"), "unknown field 'colour'"),
    ],
)
def test_invalid_entry_names_the_key_and_the_field(tmp_path: Path, edit, field: str) -> None:
    doc = valid_doc()
    edit(doc["compositions"]["examples/a.nf.svg"])
    path = write_raw(tmp_path / "digests.json", doc)
    with pytest.raises(NanoframesError) as info:
        read_ledger(path)
    err = info.value
    assert err.code == "ledger-invalid"
    assert "'examples/a.nf.svg'" in err.message
    assert field in err.message
    assert err.line == 4  # the line of the entry's key (after "{", version, compositions)


@pytest.mark.parametrize(
    "samples, needle",
    [(None, "must list the sampled"), ([0, 10, 2], "indices in 0..9"),
     ([0, 5, 5], "strictly increasing"), ([], "must list the sampled")],
)
def test_invalid_samples(tmp_path: Path, samples: object, needle: str) -> None:
    data = make_entry(frames=10, samples=(0, 5, 9)).to_json()
    data["samples"] = samples
    with pytest.raises(NanoframesError, match=needle):
        Entry.from_json("k", data, tmp_path / "d.json")


def test_a_sampled_entry_needs_one_digest_per_sample(tmp_path: Path) -> None:
    data = make_entry(frames=10, samples=(0, 5, 9)).to_json()
    data["frame_digests"] = data["frame_digests"][:2]
    with pytest.raises(NanoframesError, match=r"expected 3 \(one per sample\)"):
        Entry.from_json("k", data)


def test_duplicate_keys_are_invalid(tmp_path: Path) -> None:
    path = tmp_path / "digests.json"
    entry = json.dumps(make_entry().to_json())
    path.write_text(f'{{"version": 1, "compositions": {{"a": {entry}, "a": {entry}}}}}')
    with pytest.raises(NanoframesError) as info:
        read_ledger(path)
    assert info.value.code == "ledger-invalid" and "duplicate key 'a'" in info.value.message


# --- merge -----------------------------------------------------------------------


def test_merge_summarises_and_leaves_the_old_ledger_alone(tmp_path: Path) -> None:
    old = Ledger(tmp_path / "d.json", {
        "a.nf.svg": make_entry(seed="a"),
        "b.nf.svg": make_entry(seed="b"),
        "c.nf.svg": make_entry(seed="c"),
    })
    before = dict(old.entries)
    new, summary = merge(old, {
        "d.nf.svg": make_entry(seed="d"),
        "b.nf.svg": make_entry(seed="b2"),
        "a.nf.svg": make_entry(seed="a"),  # equal content, a new object
    }, remove=["c.nf.svg", "gone.nf.svg"])
    assert summary.added == ["d.nf.svg"]
    assert summary.updated == ["b.nf.svg"]
    assert summary.unchanged == ["a.nf.svg"]
    assert summary.removed == ["c.nf.svg"]
    assert summary.changed
    assert list(new.entries) == ["a.nf.svg", "b.nf.svg", "d.nf.svg"]
    assert new.entries["b.nf.svg"] == make_entry(seed="b2")
    assert old.entries == before


def test_merge_of_nothing_new_changes_nothing(tmp_path: Path) -> None:
    old = Ledger(tmp_path / "d.json", {"a.nf.svg": make_entry(seed="a")})
    new, summary = merge(old, {"a.nf.svg": make_entry(seed="a")})
    assert not summary.changed and new.entries == old.entries


def test_merge_refuses_to_update_and_remove_one_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        merge(Ledger(tmp_path / "d.json"), {"a": make_entry()}, remove=["a"])


# --- atomic write ------------------------------------------------------------------


def test_a_failed_rename_leaves_the_old_ledger_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "digests.json"
    write_ledger(Ledger(path, {"a.nf.svg": make_entry(seed="a")}))
    old_bytes = path.read_bytes()

    def crash(src: object, dst: object) -> None:
        raise OSError("simulated crash during rename")

    monkeypatch.setattr(files_module.os, "replace", crash)
    with pytest.raises(NanoframesError, match="simulated") as err:
        write_ledger(sample_ledger(path))
    assert err.value.code == "ledger-write" and err.value.file == str(path)
    assert path.read_bytes() == old_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["digests.json"]
    assert read_ledger(path).entries == {"a.nf.svg": make_entry(seed="a")}


def test_a_failed_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "digests.json"

    def crash(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(files_module.os, "fsync", crash)
    with pytest.raises(NanoframesError, match="disk full"):
        write_ledger(sample_ledger(path))
    assert list(tmp_path.iterdir()) == []


def test_write_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "digests.json"
    write_ledger(Ledger(path, {}))
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    os.chmod(path, 0o664)
    write_ledger(sample_ledger(path))
    assert path.stat().st_mode & 0o777 == 0o664


def test_write_sweeps_temp_files_of_killed_writers(tmp_path: Path) -> None:
    """A writer killed mid-write leaves `.digests.json.<pid>.*.tmp`; the next write
    removes those whose process is gone, and leaves a live writer's alone."""
    path = tmp_path / "digests.json"
    dead = tmp_path / ".digests.json.999999999.x1.tmp"  # no such pid
    live = tmp_path / f".digests.json.{os.getppid()}.x2.tmp"
    dead.write_text("{")
    live.write_text("{")
    write_ledger(Ledger(path, {"a.nf.svg": make_entry()}))
    assert not dead.exists() and live.exists()
    assert read_ledger(path).entries.keys() == {"a.nf.svg"}


def test_duplicate_key_inside_an_entry_is_located(tmp_path: Path) -> None:
    path = tmp_path / "digests.json"
    write_ledger(Ledger(path, {"a.nf.svg": make_entry(), "b.nf.svg": make_entry(seed="y")}))
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"frames"' in line and i > 20)
    lines.insert(at, lines[at])  # "frames" twice in the second entry
    path.write_text("".join(lines))
    with pytest.raises(NanoframesError) as err:
        read_ledger(path)
    assert err.value.code == "ledger-invalid"
    assert (err.value.line, err.value.column) == (at + 2, lines[at].index('"') + 1)
