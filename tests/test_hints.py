"""Every hint leads somewhere clean (issue 30, item 8).

Each command the tool prints as advice (``if intended:``, ``refresh with``,
``re-records them``, ``drops it``, ``record with``, ``re-record it:``, ``--force
overwrites it``, ``bring them with``) is taken from the output as printed,
followed, and the next run must have no failure caused by following it. The
hints that accept a change are also exercised in test_strict_edits.py (the
strict failure's ``if intended:`` and the summary's ``accept the changes:``).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from built_once import once
from ledger_edit import reseal
from scratch_project import nf as nf_cli
from scratch_project import write_film
from test_plugin import make_project, outcomes, record, recorded_project, run, tamper, write
from test_strict_edits import upgraded

from nanoframes.engine.library import library_path


@pytest.fixture(autouse=True)
def _no_ambient_excuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


def hint(text: str, pattern: str) -> list[str]:
    """The command after ``pattern`` on the one line that has it, as argv."""
    found = re.findall(pattern + r"`?([^`\n]+)`?", text)
    assert found, f"no {pattern!r} hint in:\n{text}"
    return shlex.split(found[0])


def follow_pytest(pytester: pytest.Pytester, argv: list[str]) -> pytest.RunResult:
    assert argv[0] == "pytest", argv
    return run(pytester, *argv[1:])


# --- the plugin's hints ----------------------------------------------------------------


def test_if_intended_after_a_regression(pytester: pytest.Pytester) -> None:
    ledger = recorded_project(pytester, names=("a", "b"))
    tamper(ledger, "examples/b.nf.svg")
    result = run(pytester, "--nf-check")
    assert outcomes(result) == {"failed": 1, "passed": 2}
    argv = hint(result.stdout.str(), "if intended: ")
    assert argv == ["pytest", "examples/b.nf.svg", "--nf-record", "--nf-force"]
    assert follow_pytest(pytester, argv).ret == 0
    result = run(pytester, "--nf-check", "--nf-strict")
    assert outcomes(result) == {"passed": 3}, result.stdout.str()


TEST_FILE = '''
from pathlib import Path

def test_film(nf):
    nf.check(Path(__file__).parent.parent.joinpath("examples", "a.nf.svg").read_text())

def test_other(nf):
    nf.check(Path(__file__).parent.parent.joinpath("examples", "b.nf.svg").read_text())
'''


def test_if_intended_of_nf_check_after_an_upgrade(pytester: pytest.Pytester) -> None:
    """The issue's case: after an upgrade, recording the one test the hint named left
    the ledger recorded with two toolchains. The hint now records the whole project."""
    ledger = make_project(pytester, names=("a", "b"))
    (pytester.path / "tests" / "test_films.py").write_text(TEST_FILE)
    record(pytester)
    upgraded(ledger, "tests/test_films.py::test_film")
    result = run(pytester, "--nf-check", "--nf-strict")
    out = result.stdout.str()
    assert result.ret == 1, out
    argv = hint(out, "if intended: ")
    assert argv == ["pytest", "--nf-record"], out
    assert follow_pytest(pytester, argv).ret == 0
    result = run(pytester, "--nf-check", "--nf-strict")
    assert outcomes(result) == {"passed": 5}, result.stdout.str()


def test_if_intended_of_nf_check_for_an_absent_entry(pytester: pytest.Pytester) -> None:
    recorded_project(pytester, names=("a", "b"))
    (pytester.path / "tests" / "test_films.py").write_text(TEST_FILE)
    result = run(pytester, "--nf-check")
    argv = hint(result.stdout.str(), "if intended: ")
    assert argv == ["pytest", "tests/test_films.py::test_film", "--nf-record"]
    assert follow_pytest(pytester, argv).ret == 0
    result = run(pytester, "--nf-check", "tests/test_films.py::test_film", "tests/digests.json")
    assert outcomes(result) == {"passed": 2}, result.stdout.str()


def test_re_records_them_after_mixed_toolchains(pytester: pytest.Pytester) -> None:
    ledger = recorded_project(pytester, names=("a", "b"))
    doc = json.loads(ledger.read_text())
    entry = doc["compositions"]["examples/b.nf.svg"]
    entry["identity"]["toolchain"] = "1" * 64
    entry["toolchain_parts"]["libthorvg"] = "1" * 64
    ledger.write_text(json.dumps(doc))
    result = run(pytester, "--nf-check")
    assert result.ret == 1
    argv = hint(result.stdout.str(), r"recording pass \(")
    assert argv[:2] == ["pytest", "--nf-record"]
    assert follow_pytest(pytester, argv[:2]).ret == 0
    result = run(pytester, "--nf-check", "--nf-strict")
    assert outcomes(result) == {"passed": 3}, result.stdout.str()


def test_drops_it_and_record_with(pytester: pytest.Pytester) -> None:
    """A composition gone (stale) and one new (absent): the ledger item's hints."""
    recorded_project(pytester, names=("a", "b"))
    (pytester.path / "examples" / "b.nf.svg").unlink()
    write(pytester, "c")
    result = run(pytester, "--nf-check")
    out = result.stdout.str()
    assert "STALE examples/b.nf.svg: the ledger has an entry but the file is gone; " \
           "--nf-record drops it" in out
    assert "ABSENT examples/c.nf.svg: absent, no ledger entry; record it with --nf-record" \
        in out
    assert "without an entry" not in out  # its own item fails: once, not twice
    assert run(pytester, "--nf-record").ret == 0
    result = run(pytester, "--nf-check", "--nf-strict")
    assert outcomes(result) == {"passed": 3}, result.stdout.str()


# --- the command line's hints ------------------------------------------------------------


def cli_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.nanoframes]\ncompositions = ["films/*.nf.svg"]\n')
    write_film(root, "a")
    write_film(root, "b", "#0000cc")
    return root


def recorded_cli_project(tmp_path: Path) -> Path:
    """``cli_project(tmp_path / "p")`` after ``nanoframes digest --record``: recorded once
    per session, copied (tests/built_once.py)."""
    root = tmp_path / "p"

    def build() -> None:
        cli_project(root)
        assert nf_cli(root, "digest", "--record").returncode == 0

    once(tmp_path, "recorded_cli_project", build, root)
    return root


def test_cli_drops_it_and_force_overwrites_it(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    (root / "films" / "b.nf.svg").unlink()
    done = nf_cli(root, "digest", "--check")
    assert "STALE films/b.nf.svg: stale, the ledger has an entry but the file is gone; " \
           "--record drops it" in done.stdout
    assert nf_cli(root, "digest", "--record").returncode == 0
    assert nf_cli(root, "digest", "--check").returncode == 0
    # A regression is refused; the hint says --force overwrites it.
    ledger = root / "tests" / "digests.json"
    doc = json.loads(ledger.read_text())
    doc["compositions"]["films/a.nf.svg"]["frame_digests"][1] = "0" * 16
    doc["compositions"]["films/a.nf.svg"]["digest"] = "0" * 64
    reseal(doc["compositions"]["films/a.nf.svg"])
    ledger.write_text(json.dumps(doc, indent=2) + "\n")
    done = nf_cli(root, "digest", "--record")
    assert "not recorded (--force overwrites it)" in done.stdout
    assert nf_cli(root, "digest", "--record", "--force").returncode == 0
    done = nf_cli(root, "digest", "--check")
    assert done.returncode == 0, done.stdout


def test_cli_re_records_them(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    ledger = root / "tests" / "digests.json"
    doc = json.loads(ledger.read_text())
    entry = doc["compositions"]["films/b.nf.svg"]
    entry["identity"]["toolchain"] = "1" * 64
    entry["toolchain_parts"]["libthorvg"] = "1" * 64
    entry["frame_digests"][1] = "1" * 16
    entry["digest"] = "1" * 64
    reseal(entry)
    ledger.write_text(json.dumps(doc, indent=2) + "\n")
    done = nf_cli(root, "digest", "--check")
    argv = hint(done.stdout, r"recording pass \(")
    assert argv == ["nanoframes", "digest", "--record", "--all"]
    assert nf_cli(root, *argv[1:]).returncode == 0
    done = nf_cli(root, "digest", "--check")
    assert done.returncode == 0 and "LEDGER" not in done.stdout, done.stdout


def test_re_record_it_after_a_ledger_merge_conflict(tmp_path: Path) -> None:
    root = cli_project(tmp_path / "p")
    ledger = root / "tests" / "digests.json"
    assert nf_cli(root, "digest", "--record").returncode == 0
    shutil.copy(ledger, root / "base.json")
    write_film(root, "a", "#00cc00")
    assert nf_cli(root, "digest", "--record").returncode == 0
    shutil.copy(ledger, root / "theirs.json")
    write_film(root, "a", "#cccc00")  # ours: the file as merged
    assert nf_cli(root, "digest", "--record").returncode == 0
    write_film(root, "a", "#00cccc")  # the film as the merge resolved it
    done = nf_cli(root, "ledger", "merge", "base.json", "tests/digests.json", "theirs.json")
    assert done.returncode == 1, done.stdout
    argv = hint(done.stdout, "re-record it: ")
    assert argv == ["nanoframes", "digest", "--record", "films/a.nf.svg"]
    assert nf_cli(root, *argv[1:]).returncode == 0
    done = nf_cli(root, "digest", "--check")
    assert done.returncode == 0, done.stdout


def test_bring_them_with_store_import(tmp_path: Path) -> None:
    recorded = cli_project(tmp_path / "recorded")
    assert nf_cli(recorded, "digest", "--record").returncode == 0
    assert nf_cli(recorded, "store", "--export", str(tmp_path / "frames.tar")).returncode == 0
    # Elsewhere (a clone without the store), after an edit:
    clone = tmp_path / "clone"
    shutil.copytree(recorded, clone, ignore=shutil.ignore_patterns(".nanoframes"))
    write_film(clone, "a", "#00cc00")
    done = nf_cli(clone, "digest", "--check")
    assert "bring them with `nanoframes store --import FILE.tar`" in done.stdout
    argv = hint(done.stdout, "bring them with ")
    argv[-1] = str(tmp_path / "frames.tar")
    assert nf_cli(clone, *argv[1:]).returncode == 0
    done = nf_cli(clone, "digest", "--check")
    assert re.search(r"^  pixels: 2 of 2 frames differ, ", done.stdout, re.M), done.stdout
    assert "not in the store" not in done.stdout


@pytest.fixture(scope="module")
def other_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another ThorVG build: the same code with other bytes (another machine's)."""
    copy = tmp_path_factory.mktemp("build") / library_path().name
    shutil.copyfile(library_path(), copy)
    with open(copy, "ab") as fh:
        fh.write(b"\0")
    return copy


def test_refresh_with_an_outdated_platform_entry(tmp_path: Path, other_build: Path) -> None:
    """Two branches: one re-records the primary after an edit, the other adds a
    macos-arm64 entry under the old source; merged, the check says to refresh it
    there. On that machine (its tag, its build) the hint's command makes it clean."""
    root = cli_project(tmp_path / "p")
    ledger = root / "tests" / "digests.json"
    mac = {"NANOFRAMES_PLATFORM": "macos-arm64", "NANOFRAMES_LIBTHORVG": str(other_build)}
    mac_cli = functools.partial(other_machine, root)
    assert nf_cli(root, "digest", "--record").returncode == 0
    shutil.copy(ledger, root / "base.json")
    done = mac_cli("digest", "--record", "--platform", **mac)
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.copy(ledger, root / "theirs.json")
    shutil.copy(root / "base.json", ledger)
    write_film(root, "a", "#00cc00")
    assert nf_cli(root, "digest", "--record").returncode == 0
    assert nf_cli(root, "ledger", "merge", "base.json", "tests/digests.json",
                  "theirs.json").returncode == 0
    done = nf_cli(root, "digest", "--check")
    argv = hint(done.stdout, "refresh with ")
    assert argv == ["nanoframes", "digest", "--record", "--platform"]
    assert "on macos-arm64" in done.stdout
    done = mac_cli(*argv[1:], **mac)
    assert done.returncode == 0, done.stdout + done.stderr
    for check in (functools.partial(nf_cli, root), mac_cli):
        done = check("digest", "--check", **mac) if check is mac_cli else check("digest", "--check")
        assert done.returncode == 0 and "outdated" not in done.stdout, done.stdout


# Another machine that draws otherwise: the wheel's library plus one byte draws the
# same pixels, so each frame's first pixel is flipped after drawing (a platform
# entry is kept only where a machine draws otherwise).
OTHER_MACHINE = """
from nanoframes.frames.film import Film
real = Film.raster
def raster(self, doc):
    frame = real(self, doc).copy()
    frame[0, 0, 0] ^= 255
    return frame
Film.raster = raster
import sys
from nanoframes.cli import main
sys.exit(main(sys.argv[1:]))
"""


def other_machine(root: Path, *args: str, **extra: str):
    from scratch_project import run as run_in

    return run_in([sys.executable, "-c", OTHER_MACHINE, *args], root, **extra)
