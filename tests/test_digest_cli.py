"""``nanoframes digest``: modes, the ledger it writes, keys, sweeps, exit statuses, --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nanoframes.cli import main
from nanoframes.determinism.identity import is_linked_part
from nanoframes.determinism.ledger import read_ledger
from nanoframes.determinism.reading import read_film

SVG = """<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="10" data-duration="{duration}">
  <rect id="box" x="1" y="1" width="8" height="8" fill="{fill}"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box",
                     "keyframes": [{{"t": 0, "x": 1}}, {{"t": 0.5, "x": 30}}]}}]}}
  </script>
</svg>
"""


def make_project(root: Path, names=("a", "b"), extra_config: str = "") -> Path:
    (root / "pyproject.toml").write_text(f"[tool.nanoframes]\n{extra_config}")
    (root / "examples").mkdir()
    for name in names:
        comp(root, f"examples/{name}.nf.svg")
    return root


def comp(root: Path, rel: str, fill: str = "#c03030", duration: str = "1") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SVG.format(fill=fill, duration=duration))
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["digest", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path)


def test_plain_digest_prints_film_digests_and_reads_no_ledger(proj: Path, capsys) -> None:
    (proj / "tests").mkdir()
    (proj / "tests" / "digests.json").write_text("{ not json")  # never read in this mode
    status, out, _ = run(capsys)
    assert status == 0
    expected = read_film(proj / "examples" / "a.nf.svg").digest
    assert out.splitlines()[0] == f"{expected}  examples/a.nf.svg  (10 frames)"
    assert "examples/b.nf.svg" in out.splitlines()[1]


def test_record_then_check_is_green(proj: Path, capsys) -> None:
    status, out, _ = run(capsys, "--record")
    assert status == 0
    assert "added      examples/a.nf.svg" in out and "added      examples/b.nf.svg" in out
    status, out, _ = run(capsys, "--check")
    assert status == 0
    assert out.splitlines() == ["MATCH examples/a.nf.svg: match",
                                "MATCH examples/b.nf.svg: match",
                                "2 compositions: 2 match"]


def test_the_ledger_format(proj: Path, capsys) -> None:
    run(capsys, "--record")
    path = proj / "tests" / "digests.json"
    text = path.read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "compositions": {\n')
    doc = json.loads(text)
    assert doc["version"] == 1
    assert list(doc["compositions"]) == ["examples/a.nf.svg", "examples/b.nf.svg"]
    entry = doc["compositions"]["examples/a.nf.svg"]
    reading = read_film(proj / "examples" / "a.nf.svg")
    assert entry["digest"] == reading.digest and entry["frames"] == 10
    assert entry["sampled"] is False and "samples" not in entry
    assert entry["frame_digests"] == [d[:16] for d in reading.frame_digests]
    assert entry["identity"] == dict(reading.identity)
    assert sorted(n for n in entry["toolchain_parts"] if not is_linked_part(n)) == sorted(
        ["thorvg-python", "libthorvg", "nanoframes", "modules"])  # then shared libraries
    assert text == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    # nothing but the ledger beside it; the lock lives in .nanoframes/ (ignored there:
    # it stays, deleting a lock is racy)
    assert sorted(p.name for p in path.parent.iterdir()) == ["digests.json"]
    state = proj / ".nanoframes"
    assert (state / "locks" / "tests" / "digests.json.lock").is_file()
    assert (state / ".gitignore").read_text().splitlines()[-1] == "*"


def test_keys_are_relative_to_the_project_root_whatever_the_cwd(proj: Path, capsys,
                                                                 monkeypatch) -> None:
    monkeypatch.chdir(proj / "examples")
    assert run(capsys, "--record", "a.nf.svg")[0] == 0
    monkeypatch.chdir("/")
    assert run(capsys, "--record", str(proj / "examples" / "b.nf.svg"))[0] == 0
    assert sorted(read_ledger(proj / "tests" / "digests.json").entries) == \
        ["examples/a.nf.svg", "examples/b.nf.svg"]
    # A fresh process from elsewhere sees the same thing.
    out = subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--check", str(proj)],
                         capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "MATCH examples/a.nf.svg: match" in out.stdout


def test_all_sweeps_the_configured_globs(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    make_project(tmp_path, names=("a",), extra_config='compositions = ["scenes/*.nf.svg"]\n'
                 'ledger = "ledger/nf.json"\n')
    comp(tmp_path, "scenes/s.nf.svg")
    status, out, _ = run(capsys, "--record", "--all")
    assert status == 0 and "examples/a.nf.svg" not in out and "scenes/s.nf.svg" in out
    assert sorted(read_ledger(tmp_path / "ledger" / "nf.json").entries) == ["scenes/s.nf.svg"]


def test_a_directory_argument_sweeps_its_compositions(proj: Path, capsys) -> None:
    comp(proj, "other/deep/c.nf.svg")
    status, out, _ = run(capsys, "other")
    assert status == 0 and "other/deep/c.nf.svg" in out and "examples/" not in out


def test_ledger_option_overrides_the_configured_path(proj: Path, capsys) -> None:
    assert run(capsys, "--record", "--ledger", "elsewhere.json")[0] == 0
    assert (proj / "elsewhere.json").is_file() and not (proj / "tests").exists()
    assert run(capsys, "--check", "--ledger", "elsewhere.json")[0] == 0
    assert run(capsys, "--check")[0] == 1  # the default ledger does not exist: absent


def test_one_bad_composition_does_not_abort_a_sweep(proj: Path, capsys) -> None:
    run(capsys, "--record")
    (proj / "examples" / "0bad.nf.svg").write_text("<svg data-width='1'>")
    status, out, _ = run(capsys, "--check")
    assert status == 2
    lines = out.splitlines()
    assert lines[0].startswith("ERROR examples/0bad.nf.svg: error, ")
    assert "error[xml-malformed]" in lines[0]
    assert lines[1:3] == ["MATCH examples/a.nf.svg: match", "MATCH examples/b.nf.svg: match"]
    status, out, _ = run(capsys, "--record")
    assert status == 2 and "unchanged  examples/a.nf.svg" in out


@pytest.mark.parametrize("mode", [["--check"], ["--record"], []])
def test_with_workers_a_bad_composition_is_its_own_error(proj: Path, capsys, mode) -> None:
    # Frames are queued once a file parses; a missing image is found later, while
    # the identity is worked out here: that film's error, the others unharmed.
    (proj / "examples" / "0img.nf.svg").write_text(SVG.format(fill="#102030", duration="1")
                                                   .replace("</svg>", '<image href="gone.png" '
                                                            'width="4" height="4"/></svg>'))
    (proj / "examples" / "1bad.nf.svg").write_text("<svg data-width='1'>")
    status, out, _ = run(capsys, *mode, "-j", "2")
    assert status == 2
    errors = [line for line in out.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 2
    assert errors[0].startswith("ERROR examples/0img.nf.svg: ") and "gone.png" in errors[0]
    assert errors[1].startswith("ERROR examples/1bad.nf.svg: ") and "xml-malformed" in errors[1]
    if mode == ["--record"]:
        assert "added      examples/a.nf.svg" in out and "added      examples/b.nf.svg" in out
    else:  # word for word what one process prints
        assert run(capsys, *mode, "-j", "1") == (status, out, "")


def test_a_command_that_fails_early_leaves_no_workers_behind(proj: Path, capsys) -> None:
    import multiprocessing

    from nanoframes.frames import workers

    ledger = proj / "tests" / "digests.json"
    ledger.parent.mkdir()
    ledger.write_text("{")  # corrupt: the command fails before it uses its pool
    # this process's own (the suite's drawing worker, when its plugin checks films)
    before = {p.pid for p in multiprocessing.active_children()}
    assert run(capsys, "--check", "-j", "2")[0] == 2
    assert not workers._prestarted
    assert not [p for p in multiprocessing.active_children()
                if p.is_alive() and p.pid not in before]


def test_a_missing_file_is_an_error_not_a_crash(proj: Path, capsys) -> None:
    status, out, _ = run(capsys, "--check", "examples/nope.nf.svg", "examples/a.nf.svg")
    assert status == 2
    assert "ERROR examples/nope.nf.svg" in out and "error[file-missing]" in out
    assert "ABSENT examples/a.nf.svg" in out


def test_a_corrupt_ledger_is_one_line_exit_2_and_never_overwritten(proj: Path, capsys) -> None:
    ledger = proj / "tests" / "digests.json"
    ledger.parent.mkdir()
    ledger.write_text('{\n  "version": 1,\n  "compositions": {,}\n}\n')
    before = ledger.read_bytes()
    for args in (("--check",), ("--record",), ("--check", "--json")):
        status, out, err = run(capsys, *args)
        assert status == 2 and out == ""
        assert err.strip().splitlines() == [
            f"nanoframes: {ledger}:3:20: error[ledger-corrupt]: not valid JSON: "
            "Expecting property name enclosed in double quotes"]
        assert ledger.read_bytes() == before
    status, out, _ = run(capsys, "--record", "--force")
    assert status == 0 and "added      examples/a.nf.svg" in out
    assert sorted(read_ledger(ledger).entries) == ["examples/a.nf.svg", "examples/b.nf.svg"]


def test_json_has_the_verdicts_and_the_same_exit_status(proj: Path, capsys) -> None:
    run(capsys, "--record", "examples/a.nf.svg")
    plain = run(capsys, "--check")
    status, out, _ = run(capsys, "--check", "--json")
    assert status == plain[0] == 1
    data = json.loads(out)
    assert data["exit_status"] == 1
    by_key = {v["key"]: v for v in data["verdicts"]}
    assert by_key["examples/a.nf.svg"]["verdict"] == "match"
    absent = by_key["examples/b.nf.svg"]
    assert absent["verdict"] == "absent" and absent["excused"] is None
    assert set(absent) >= {"key", "verdict", "reasons", "excused", "digest",
                           "differing_frames", "error", "note"}


def test_json_of_record_and_of_plain_digests(proj: Path, capsys) -> None:
    status, out, _ = run(capsys, "--record", "--json")
    data = json.loads(out)
    assert status == data["exit_status"] == 0
    assert data["added"] == ["examples/a.nf.svg", "examples/b.nf.svg"]
    status, out, _ = run(capsys, "--json", "--samples", "3", "examples/a.nf.svg")
    row = json.loads(out)["compositions"][0]
    assert row["sampled"] is True and row["indices"] == [0, 5, 9]
    assert len(row["frame_digests"]) == 3


def test_record_prints_added_updated_unchanged_and_removed(proj: Path, capsys) -> None:
    run(capsys, "--record")
    comp(proj, "examples/a.nf.svg", fill="#30c030")
    comp(proj, "examples/c.nf.svg")
    (proj / "examples" / "b.nf.svg").unlink()
    status, out, _ = run(capsys, "--record")
    assert status == 0
    lines = out.splitlines()
    # first, before the ledger is written, what is accepted (test_evidence_words.py)
    assert lines[0].startswith("accepting examples/a.nf.svg: changed, source changed")
    assert lines[1].startswith("  pixels: 10 of 10 frames differ")
    assert lines[2].startswith("  moved: source ")
    assert lines[lines.index("added      examples/c.nf.svg"):] == [
        "added      examples/c.nf.svg",
        "updated    examples/a.nf.svg: changed, source changed (10 of 10 frames differ: "
        "0, 1, 2, 3, 4, 5, 6, 7, 8, 9)",
        "removed    examples/b.nf.svg (stale: the file is gone)",
        "1 added, 1 updated, 0 unchanged, 1 removed, 0 refused, 0 failed",
    ]
    status, out, _ = run(capsys, "--record")
    assert out.splitlines()[-1] == ("0 added, 0 updated, 2 unchanged, 0 removed, 0 refused, "
                                    "0 failed; ledger not rewritten")


def test_recording_one_path_never_removes_other_entries(proj: Path, capsys) -> None:
    run(capsys, "--record")
    (proj / "examples" / "b.nf.svg").unlink()
    assert run(capsys, "--record", "examples/a.nf.svg")[0] == 0
    assert "examples/b.nf.svg" in read_ledger(proj / "tests" / "digests.json").entries
    status, out, _ = run(capsys, "--check", "examples/a.nf.svg")
    assert status == 0 and "STALE" not in out  # stale only on a full sweep


def test_jobs_and_dedup_do_not_change_the_digests(proj: Path, capsys) -> None:
    comp(proj, "examples/long.nf.svg", duration="4")
    status, serial, _ = run(capsys)
    assert status == 0
    assert run(capsys, "-j", "2")[1] == serial
    assert run(capsys, "--no-dedup")[1] == serial
    assert run(capsys, "--record", "-j", "2")[0] == 0
    assert run(capsys, "--check", "-j", "3", "--no-dedup")[0] == 0


def test_help_documents_the_exit_statuses(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["digest", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for needle in ("exit status", "0  every composition matches or is excused",
                   "1  a non-excused changed", "2  a composition that cannot be read"):
        assert needle in out


@pytest.mark.parametrize("args", [["--check", "--record"], ["--samples", "0"],
                                  ["--samples", "x"], ["--force", "--check"]])
def test_bad_usage_exits_2(proj: Path, capsys, args: list[str]) -> None:
    try:
        status = main(["digest", *args])
    except SystemExit as exc:  # argparse's own usage errors
        status = exc.code
    capsys.readouterr()
    assert status == 2


def test_progress_is_not_printed_when_stderr_is_not_a_terminal(proj: Path, capsys) -> None:
    _, _, err = run(capsys, "--record")
    assert err == ""


def test_the_console_script_runs(proj: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--record"],
                         capture_output=True, text=True, cwd=proj,
                         env=dict(os.environ, EXCUSED_COMPOSITIONS=""))
    assert out.returncode == 0, out.stderr
    assert "2 added" in out.stdout


def test_a_worker_that_dies_is_an_error_verdict_not_a_traceback() -> None:
    """A worker killed mid-film (out of memory, a signal) is that composition's error."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from nanoframes.determinism.identity import Identity
    from nanoframes.determinism.reading import PendingReading
    from nanoframes.determinism.sweep import _result
    from nanoframes.determinism.verdict import Kind

    died: Future = Future()
    died.set_exception(BrokenProcessPool("a process terminated abruptly"))
    pending = PendingReading(key="examples/a.nf.svg", identity=Identity("a", "b", "c", "d"),
                             frames=3, indices=(0, 1, 2), composition_id="a",
                             _futures=[died])
    verdict = _result(Path("examples/a.nf.svg"), pending)
    assert verdict.kind is Kind.ERROR
    assert "error[worker-died]" in verdict.line()
