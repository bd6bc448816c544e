"""Other machines, on one machine: platform entries, bounded excuses, the workflow.

The second toolchain is real: ``NANOFRAMES_LIBTHORVG`` names a copy of the
wheel's libthorvg with a byte appended (same code, same pixels, other bytes),
so its ``libthorvg`` identity part differs. A regression on that toolchain is
made the way tests/test_verdicts_e2e.py makes one: frames really rendered by
ThorVG, then one pixel flipped before digesting. Drift against a bounded
excuse is a reference store whose frames differ from the fresh ones by known
amounts, as another machine's recording would leave it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_plugin import make_project, outcomes, record, recorded_project, run

from nanoframes.cli import main
from nanoframes.config import load_config
from nanoframes.determinism.ledger import Entry, Ledger, read_ledger, write_ledger
from nanoframes.determinism.platforms import platform_tag
from nanoframes.determinism.threeway import merge_files
from nanoframes.engine.library import library_path
from nanoframes.frames.digest import SHORT, film_digest, frame_digest
from nanoframes.frames.film import Film
from nanoframes.frames.store import Store

ROOT = Path(__file__).resolve().parent.parent
KEY = "examples/a.nf.svg"
SVG = """<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="10" data-duration="0.4">
  <rect id="box" x="1" y="1" width="8" height="8" fill="{fill}"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box",
      "keyframes": [{{"t": 0, "x": 1}}, {{"t": 0.4, "x": 30}}]}}]}}
  </script>
</svg>
"""
# Run as `python -c`: frames really drawn, then one pixel flipped in the frames
# whose document draws the box at x=1 (frame 0), before they are digested.
PERTURBED = """
import os
import sys
from nanoframes.frames.film import Film
real = Film.raster
def raster(self, doc):
    frame = real(self, doc)
    if b'x="1"' in doc:
        frame = frame.copy()
        frame[0, 0, 0] ^= int(os.environ.get("NF_FLIP", "255"))
    return frame
Film.raster = raster
from nanoframes.cli import main
sys.exit(main(sys.argv[1:]))
"""


def write(root: Path, fill: str = "#c03030") -> Path:
    path = root / KEY
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SVG.format(fill=fill))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    return path


def configure(root: Path, excused: str = "") -> None:
    (root / "pyproject.toml").write_text(
        "[tool.nanoframes]\n" + (f"[tool.nanoframes.excused]\n{excused}\n" if excused else ""))
    load_config.cache_clear()  # the same project root, a new table


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("EXCUSED_COMPOSITIONS", "NANOFRAMES_PLATFORM", "NANOFRAMES_LIBTHORVG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    configure(tmp_path)
    write(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def other_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("build") / library_path().name
    shutil.copyfile(library_path(), copy)
    with open(copy, "ab") as fh:
        fh.write(b"\0")  # other bytes, same code
    return copy


def cli(root: Path, *args: str, build: Path | None = None, perturbed: bool | int = False
        ) -> tuple[int, list[str]]:
    """``perturbed``: frame 0 drawn with one pixel flipped (an int: by that mask)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NANOFRAMES_LIBTHORVG", "NANOFRAMES_PLATFORM")}
    env["NANOFRAMES_RECORD_IN_CI"] = "1"
    env["NF_FLIP"] = str(255 if perturbed is True else int(perturbed))
    if build is not None:
        env["NANOFRAMES_LIBTHORVG"] = str(build)
    head = ["-c", PERTURBED] if perturbed else ["-m", "nanoframes"]
    run = subprocess.run([sys.executable, *head, "digest", "-j", "1", *args], cwd=root, env=env,
                         capture_output=True, text=True, timeout=120)
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode, run.stdout.splitlines()


def elsewhere(entry: Entry, hexdigit: str) -> Entry:
    """``entry`` as another machine's libthorvg (named by its digest) would record it."""
    return replace(entry, toolchain_parts={**entry.toolchain_parts, "libthorvg": hexdigit * 64},
                   identity={**entry.identity, "toolchain": hexdigit * 64})


def digest(capsys, *args: str) -> tuple[int, list[str]]:
    status = main(["digest", "-j", "1", *args])
    return status, capsys.readouterr().out.splitlines()


def doc(root: Path) -> dict:
    return json.loads((root / "tests" / "digests.json").read_text())


# --- a second toolchain: match, a platform entry, a regression against it --------------

# Slow: nine commands in fresh processes, each drawing, under two ThorVG builds.
def test_a_platform_entry_judges_its_own_toolchain(proj: Path, other_build: Path) -> None:
    tag = platform_tag()
    assert cli(proj, "--record")[0] == 0
    primary = doc(proj)["compositions"][KEY]
    assert doc(proj)["version"] == 1  # no platform entry: the format older readers know

    assert cli(proj, "--check", build=other_build) == (0, [
        f"MATCH {KEY}: match (recorded inputs moved: toolchain changed (libthorvg))",
        "1 composition: 1 match",
        "next: nanoframes review (each reading: accept, reject or skip); or all the changes "
        "at once: nanoframes accept --all-changed"])
    # Same pixels, other bytes: nothing to record beside the primary, and it says so.
    status, out = cli(proj, "--record", "--platform", build=other_build)
    assert status == 0 and out[:2] == [
        f"unchanged  {KEY}",
        f"NOTE {KEY}: draws exactly the primary: no platform entry {tag} recorded (the primary "
        "is this machine's entry)"]
    assert doc(proj)["version"] == 1 and "platforms" not in doc(proj)["compositions"][KEY]

    # Other pixels on that build (frame 0): recorded as its platform entry.
    status, out = cli(proj, "--record", "--platform", build=other_build, perturbed=True)
    out = [line for line in out if line.startswith("updated")]  # after "accepting ..."
    assert status == 0 and out[0] == (f"updated    {KEY} (platform entry {tag}): changed, "
                                      "toolchain changed (libthorvg) (1 of 4 frames differ: 0)")
    data = doc(proj)
    assert data["version"] == 2
    entry = data["compositions"][KEY]
    platform = entry.pop("platforms")[tag]
    assert entry == primary  # the primary never touched
    assert platform["toolchain_parts"]["libthorvg"] != primary["toolchain_parts"]["libthorvg"]
    assert platform["digest"] != primary["digest"]

    assert cli(proj, "--check", build=other_build, perturbed=True)[1][0] == \
        f"MATCH {KEY}: match (platform entry {tag})"
    assert cli(proj, "--check")[1][0] == f"MATCH {KEY}: match"  # the primary's own toolchain
    # A film that equals the primary is a match on every platform, this one included.
    assert cli(proj, "--check", build=other_build)[1][0] == \
        f"MATCH {KEY}: match (recorded inputs moved: toolchain changed (libthorvg))"

    # The same inputs drew yet other pixels on that toolchain: a regression, not "changed".
    status, out = cli(proj, "--check", build=other_build, perturbed=15)
    assert status == 1
    assert out[0] == (f"REGRESSION {KEY}: regression against the platform entry {tag}, "
                      "1 of 4 frames differ: 0")
    before = (proj / "tests" / "digests.json").read_bytes()
    status, out = cli(proj, "--record", "--platform", build=other_build, perturbed=15)
    assert status == 1 and out[0].startswith(f"REFUSED {KEY}: regression against the platform")
    assert (proj / "tests" / "digests.json").read_bytes() == before

    # A plain --record on that toolchain keeps the primary: the platform entry matches.
    assert cli(proj, "--record", build=other_build, perturbed=True)[1][0] == f"unchanged  {KEY}"
    # On a toolchain with no entry of its own it replaces the primary, says so, names --platform.
    third = proj / "third" / other_build.name
    third.parent.mkdir()
    third.write_bytes(other_build.read_bytes() + b"\0")
    status, out = cli(proj, "--record", build=third)
    assert status == 0
    assert f"NOTE {KEY}: recorded under another toolchain than the primary's: this replaces " \
           "the primary entry; `nanoframes digest --record --platform` records this " \
           "machine's reading beside it instead" in out
    assert sorted(doc(proj)["compositions"][KEY]["platforms"]) == [tag]  # still true of it
    assert cli(proj, "--check", build=other_build, perturbed=True)[1][0] == \
        f"MATCH {KEY}: match (platform entry {tag})"

    # That machine draws the primary again: its entry goes on its next platform recording.
    status, out = cli(proj, "--record", "--platform", build=other_build)
    assert status == 0
    assert f"NOTE {KEY}: dropped platform entry {tag} (this machine now draws the primary)" in out
    assert "platforms" not in doc(proj)["compositions"][KEY]


def test_platform_entries_that_draw_the_primary_are_dropped(proj: Path, capsys) -> None:
    """A ledger recorded before the rule (an entry per film, equal ones included)
    loses the equal ones on its next recording, primary or platform."""
    ledger = proj / "tests" / "digests.json"
    for args in (("--record",), ("--record", "--platform", "other-arm64")):
        digest(capsys, "--record")
        entry = read_ledger(ledger).entries[KEY]
        same = elsewhere(entry, "0")
        write_ledger(Ledger(ledger, {KEY: replace(entry, platforms={"linux-arm64": same})}))
        assert digest(capsys, "--check")[1][0] == f"MATCH {KEY}: match"
        status, out = digest(capsys, *args)
        assert status == 0
        assert f"NOTE {KEY}: dropped platform entry linux-arm64 (draws exactly the primary)" \
            in out, out
        assert "platforms" not in doc(proj)["compositions"][KEY]


def test_a_code_change_keeps_the_platform_entries_matching(proj: Path,
                                                           other_build: Path) -> None:
    """An edit of nanoframes moves ``modules`` on every machine: a platform entry whose
    pixels did not move still matches, before and after the primary is re-recorded."""
    tag = platform_tag()
    cli(proj, "--record")
    cli(proj, "--record", "--platform", build=other_build, perturbed=True)
    data = doc(proj)
    entry = data["compositions"][KEY]
    for recorded in (entry, entry["platforms"][tag]):  # as the previous code recorded them
        recorded["toolchain_parts"]["modules"] = "0" * 64
        recorded["identity"]["toolchain"] = recorded["identity"]["toolchain"][::-1]
    (proj / "tests" / "digests.json").write_text(json.dumps(data))
    assert cli(proj, "--check", build=other_build, perturbed=True)[1][0] == (
        f"MATCH {KEY}: match (platform entry {tag}; recorded inputs moved: toolchain changed "
        "(modules))")
    status, out = cli(proj, "--record")  # the lead re-records the primary
    assert status == 0 and list(doc(proj)["compositions"][KEY]["platforms"]) == [tag]
    assert cli(proj, "--check", build=other_build, perturbed=True)[0] == 0
    status, out = cli(proj, "--record", "--platform", build=other_build, perturbed=True)
    assert status == 0 and out[0].startswith(f"updated    {KEY} (platform entry {tag})")
    assert cli(proj, "--check", build=other_build, perturbed=True)[1][0] == \
        f"MATCH {KEY}: match (platform entry {tag})"


def test_a_platform_entry_needs_a_primary_and_the_tag_is_checked(proj: Path, capsys) -> None:
    status, out = digest(capsys, "--record", "--platform", "macos-arm64")
    assert status == 1
    assert out[0] == (f"REFUSED {KEY}: absent, no ledger entry; record it with --record; a "
                      "platform entry sits beside a primary entry: record that first with "
                      "--record; not recorded")
    assert main(["digest", "--record", "--platform", "Not A Tag"]) == 2
    assert "error[platform-invalid]" in capsys.readouterr().err
    assert main(["digest", "--check", "--platform"]) == 2


def test_an_outdated_platform_entry_is_reported_then_dropped(proj: Path, capsys) -> None:
    """Two branches: one re-records the primary after an edit, the other adds a platform
    entry under the old source; `ledger merge` joins them, and the check says so."""
    ledger = proj / "tests" / "digests.json"
    digest(capsys, "--record")
    base = ledger.read_bytes()
    old = read_ledger(ledger)
    theirs = proj / "theirs.json"
    entry = old.entries[KEY]
    other = elsewhere(entry, "0")
    write_ledger(Ledger(theirs, {KEY: replace(entry, platforms={"macos-arm64": other})}))
    write(proj, fill="#000000")
    digest(capsys, "--record")
    (proj / "base.json").write_bytes(base)
    result = merge_files(proj / "base.json", ledger, theirs)
    assert result.conflicts == [] and result.from_theirs == [f"{KEY} [platform macos-arm64]"]

    status, out = digest(capsys, "--check")
    assert status == 0
    assert out[0] == (f"MATCH {KEY}: match; platform entry macos-arm64 is outdated (taken "
                      "under an older source): refresh with `nanoframes digest --record "
                      "--platform` on macos-arm64")
    status, out = digest(capsys, "--record")
    assert f"NOTE {KEY}: dropped outdated platform entry macos-arm64 (taken under an older " \
           "source)" in out
    assert "platforms" not in doc(proj)["compositions"][KEY]
    assert digest(capsys, "--check")[1][0] == f"MATCH {KEY}: match"


def test_two_machines_platform_entries_merge_by_tag(proj: Path, capsys) -> None:
    ledger = proj / "tests" / "digests.json"
    digest(capsys, "--record")
    entry = read_ledger(ledger).entries[KEY]
    sides = {}
    for tag, lib in (("linux-arm64", "a"), ("windows-x86_64", "b")):
        sides[tag] = proj / f"{tag}.json"
        write_ledger(Ledger(sides[tag], {KEY: replace(entry, platforms={
            tag: elsewhere(entry, lib)})}))
    shutil.copyfile(ledger, proj / "base.json")
    result = merge_files(proj / "base.json", sides["linux-arm64"], sides["windows-x86_64"])
    assert result.conflicts == []
    assert sorted(read_ledger(sides["linux-arm64"]).entries[KEY].platforms) == [
        "linux-arm64", "windows-x86_64"]


# --- tolerance-bounded excuses --------------------------------------------------------

def drift(root: Path, changes: dict[int, tuple[int, int]]) -> None:
    """Make the ledger and the store say another machine drew frame ``i`` with ``n``
    pixels off by ``d`` (``changes[i] = (n, d)``), under its own libthorvg."""
    ledger = read_ledger(root / "tests" / "digests.json")
    entry = ledger.entries[KEY]
    store = Store(root / ".nanoframes" / "store")
    film = Film.open(root / KEY, root)
    digests = []
    for index, frame in film.frames(range(entry.frames)):
        frame = frame.copy()
        pixels, delta = changes.get(index, (0, 0))
        for n in range(pixels):
            y, x = divmod(n, frame.shape[1])
            alpha = int(frame[y, x, 3])
            frame[y, x, 3] = alpha + delta if alpha + delta <= 255 else alpha - delta
        digests.append(frame_digest(frame))
        store.put(frame)
    other = replace(elsewhere(entry, "0"), frame_digests=tuple(d[:SHORT] for d in digests),
                    digest=film_digest(digests))
    write_ledger(Ledger(ledger.path, {KEY: other}))


BOUNDED = ('"{name}" = {{ reason = "edge rounding differs per build", max-delta = 3, '
           'max-pixels = 10, max-frames = 2{extra} }}')


@pytest.mark.parametrize("changes, line", [
    ({1: (9, 3), 2: (10, 1)}, "within its bounds: 2 frames ≤ max-frames 2, 10 px ≤ max-pixels "
                              "10, ±3/255 ≤ max-delta 3"),
    ({1: (14, 2)}, "not excused (edge rounding differs per build): frame 1: 14 px > max-pixels "
                   "10"),
    ({2: (4, 9)}, "not excused (edge rounding differs per build): frame 2: ±9/255 > max-delta 3"),
    ({0: (1, 1), 1: (1, 1), 3: (1, 1)}, "not excused (edge rounding differs per build): 3 "
                                        "frames differ > max-frames 2"),
])
def test_drift_within_and_beyond_each_bound(proj: Path, capsys, changes, line) -> None:
    configure(proj, BOUNDED.format(name=KEY, extra=""))
    digest(capsys, "--record")
    drift(proj, changes)
    status, out = digest(capsys, "--check")
    head = (f"changed, toolchain changed (libthorvg) ({len(changes)} of 4 frames differ: "
            f"{', '.join(map(str, sorted(changes)))})")
    if line.startswith("within"):
        assert status == 0
        assert out[0] == (f"EXCUSED {KEY}: {head} (excused: edge rounding differs per build; "
                          f"{line})")
    else:
        assert status == 1
        assert out[0] == f"CHANGED {KEY}: {head}; {line}"
    status, out = digest(capsys, "--check", "--json")
    bounds = json.loads("\n".join(out))["verdicts"][0]["bounds"]
    assert bounds["within"] is line.startswith("within")
    assert (bounds["frames"], bounds["max-pixels"], bounds["max-delta"]) == (len(changes), 10, 3)
    assert bounds["pixels"] == max(n for n, _ in changes.values())
    assert bounds["delta"] == max(d for _, d in changes.values())


def test_no_reference_frames_is_not_excused(proj: Path, capsys) -> None:
    configure(proj, BOUNDED.format(name="a", extra=""))
    digest(capsys, "--record")
    drift(proj, {1: (2, 1)})
    shutil.rmtree(proj / ".nanoframes" / "store")
    status, out = digest(capsys, "--check")
    assert status == 1
    assert out[0].endswith("; not excused (edge rounding differs per build): frame 1: no "
                           "reference frame in the store")


def test_an_excuse_for_other_platforms_excuses_nothing_here(proj: Path, capsys,
                                                             monkeypatch) -> None:
    configure(proj, BOUNDED.format(name=KEY, extra=', platforms = ["elsewhere-arm64"]'))
    digest(capsys, "--record")
    drift(proj, {1: (2, 1)})
    status, out = digest(capsys, "--check")
    assert status == 1 and out[0] == (
        f"CHANGED {KEY}: changed, toolchain changed (libthorvg) (1 of 4 frames differ: 1); "
        f"excused on elsewhere-arm64 only (edge rounding differs per build): does not apply on "
        f"{platform_tag()}")
    monkeypatch.setenv("NANOFRAMES_PLATFORM", "elsewhere-arm64")
    status, out = digest(capsys, "--check")
    assert status == 0 and out[0].startswith(f"EXCUSED {KEY}: changed")
    assert "within its bounds: 1 frame ≤ max-frames 2, 2 px ≤ max-pixels 10" in out[0]


def test_a_bounded_excuse_whose_composition_matches_again_is_reported(proj: Path,
                                                                       capsys) -> None:
    configure(proj, BOUNDED.format(name=KEY, extra=""))
    digest(capsys, "--record")
    status, out = digest(capsys, "--check")
    assert status == 0
    assert out[0] == (f"EXCUSED {KEY}: match (excused: edge rounding differs per build; it "
                      "matches: remove the exemption)")


def test_an_excuse_is_listed_where_it_does_not_apply(proj: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("NANOFRAMES_PLATFORM", "here-x86_64")
    configure(proj, f'"{KEY}" = {{ reason = "hinting", platforms = ["macos-arm64"] }}')
    digest(capsys, "--record")
    status, out = digest(capsys, "--check")
    assert status == 0 and out[0] == (f"MATCH {KEY}: match; excused on macos-arm64 only "
                                      "(hinting): does not apply on here-x86_64")


def with_platform_entry(root: Path, tag: str, *, other_inputs: bool = False) -> None:
    """Give the ledger's entry a platform entry for ``tag`` that draws otherwise."""
    ledger = read_ledger(root / "tests" / "digests.json")
    entry = ledger.entries[KEY]
    other = replace(elsewhere(entry, "0"), digest="f" * 64,
                    frame_digests=("f" * SHORT,) + entry.frame_digests[1:])
    if other_inputs:
        other = replace(other, identity={**other.identity, "source": "e" * 64})
    write_ledger(Ledger(ledger.path, {KEY: replace(entry, platforms={tag: other})}))


@pytest.mark.parametrize("excuse, platform_entry, advice", [
    ('platforms = ["here-x86_64", "elsewhere-arm64"]', None,
     "it matches here; keep it for elsewhere-arm64 (no reading of it in the ledger)"),
    ('platforms = ["here-x86_64", "elsewhere-arm64"]', "elsewhere-arm64",
     "it matches: remove the exemption"),
    ('platforms = ["elsewhere-arm64", "here-x86_64"]', "other-arm64",
     "it matches here; keep it for elsewhere-arm64 (no reading of it in the ledger)"),
    ("max-delta = 3", None, "it matches: remove the exemption"),
    ("max-delta = 3", "linux-arm64", "it matches: remove the exemption"),
    ("max-delta = 3", "linux-arm64-old",
     "it matches here; keep it for linux-arm64-old (its platform entry was taken under other "
     "inputs)"),
])
def test_remove_the_exemption_only_where_no_platform_needs_it(
        proj: Path, capsys, monkeypatch, excuse: str, platform_entry: str | None,
        advice: str) -> None:
    """An excused film that matches here: the advice weighs the platforms the excuse
    names (or, without ``platforms``, those the ledger's platform entries show)."""
    monkeypatch.setenv("NANOFRAMES_PLATFORM", "here-x86_64")
    configure(proj, f'"{KEY}" = {{ reason = "edges", {excuse} }}')
    digest(capsys, "--record")
    if platform_entry:
        with_platform_entry(proj, platform_entry, other_inputs=platform_entry.endswith("-old"))
    status, out = digest(capsys, "--check")
    assert status == 0
    assert out[0].startswith(f"EXCUSED {KEY}: match") and out[0].endswith(
        f"(excused: edges; {advice})"), out[0]


def test_a_bad_bound_is_a_configuration_error(proj: Path, capsys) -> None:
    configure(proj, f'"{KEY}" = {{ reason = "x", max-delta = 300 }}')
    assert main(["digest", "--check"]) == 2
    assert "'max-delta' must be an integer from 0 to 255" in capsys.readouterr().err


# --- the pytest plugin: --nf-platform, and the excused outcome with its numbers -------

# Slow: pytest runs of the plugin in fresh processes, recording and checking
# under two ThorVG builds.
def test_the_plugin_records_and_judges_platform_entries(pytester: pytest.Pytester,
                                                        monkeypatch, other_build: Path) -> None:
    recorded_project(pytester, names=("a",))
    monkeypatch.setenv("NANOFRAMES_LIBTHORVG", str(other_build))
    monkeypatch.setenv("NANOFRAMES_PLATFORM", "ci-box")
    result = record(pytester, "--nf-platform")  # the same pixels: nothing to record
    result.stdout.fnmatch_lines(["  note: examples/a.nf.svg: draws exactly the primary: no "
                                 "platform entry ci-box recorded (the primary is this "
                                 "machine's entry)"])
    ledger = pytester.path / "tests" / "digests.json"
    primary = read_ledger(ledger).entries[KEY]
    # As if the primary's machine drew frame 0 otherwise: this one has its own entry.
    write_ledger(Ledger(ledger, {KEY: replace(
        primary, digest="f" * 64, frame_digests=("f" * SHORT,) + primary.frame_digests[1:])}))
    result = record(pytester, "--nf-platform")
    result.stdout.fnmatch_lines(["  updated examples/a.nf.svg (platform entry ci-box)"])
    entry = json.loads((pytester.path / "tests" / "digests.json").read_text())[
        "compositions"][KEY]
    assert list(entry["platforms"]) == ["ci-box"]
    result = run(pytester, "--nf-check", "--nf-report", "report.json")
    assert result.ret == 0, result.stdout.str()
    verdicts = json.loads((pytester.path / "report.json").read_text())["verdicts"]
    assert [(v["key"], v["platform"], v["line"]) for v in verdicts] == [
        (KEY, "ci-box", f"MATCH {KEY}: match (platform entry ci-box)")]
    assert "--nf-platform only applies to --nf-record" in run(
        pytester, "--nf-check", "--nf-platform").stderr.str()


def test_the_plugin_says_excused_with_the_numbers(pytester: pytest.Pytester,
                                                  monkeypatch) -> None:
    make_project(pytester, names=("a",), extra="[tool.nanoframes.excused]\n"
                 + BOUNDED.format(name="a", extra=""))
    record(pytester)
    monkeypatch.chdir(pytester.path)
    drift(pytester.path, {2: (5, 2)})
    result = run(pytester, "--nf-check")
    assert result.ret == 0, result.stdout.str()
    assert outcomes(result) == {"excused": 1, "passed": 1}
    result.stdout.fnmatch_lines([
        f"EXCUSED {KEY}: changed, toolchain changed (libthorvg) (1 of 4 frames differ: 2) "
        "(excused: edge rounding differs per build; within its bounds: 1 frame ≤ max-frames 2, "
        "5 px ≤ max-pixels 10, ±2/255 ≤ max-delta 3)"])


# --- the cross-machine workflow -------------------------------------------------------

def test_the_workflow_shares_the_store_and_keeps_its_evidence() -> None:
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "determinism.yml").read_text())
    on = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "record-platforms" in on["workflow_dispatch"]["inputs"]
    jobs = flow["jobs"]
    reference = "\n".join(s.get("run", "") for s in jobs["reference"]["steps"])
    assert "nanoframes store --export" in reference
    check = jobs["check"]
    assert check["needs"] == "reference"
    oses = check["strategy"]["matrix"]["os"]
    assert {o.split("-")[0] for o in oses} == {"ubuntu", "macos", "windows"}
    runs = "\n".join(s.get("run", "") for s in check["steps"])
    assert "nanoframes store --import" in runs
    assert "--artifacts" in runs and "--html" in runs
    assert "--record --platform" in runs and "inputs.record-platforms" in json.dumps(check)
    uploads = [s for s in check["steps"] if str(s.get("uses", "")).startswith(
        "actions/upload-artifact")]
    assert uploads and all("always()" in s.get("if", "") for s in uploads)  # whatever the outcome
    assert "ledger" in uploads[-1]["with"]["name"] and "tests/digests.json" in uploads[-1]["with"][
        "path"]


def test_arm64_is_gated_natively_and_under_emulation() -> None:
    """The workflow's native arm64 job and .ci/run's emulated step run the same gate."""
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "determinism.yml").read_text())
    job = flow["jobs"]["arm64"]
    assert job["runs-on"] == "ubuntu-24.04-arm"
    runs = "\n".join(s.get("run", "") for s in job["steps"])
    assert "pip install -e ." in runs and "tools/arm64/gate --native" in runs
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash tools/arm64/gate" in ci.split("pytest -n auto", 1)[1]
    gate = (ROOT / "tools" / "arm64" / "gate").read_text()
    assert "digest --all --check --json" in gate and "all_match.py" in gate


def test_the_arm64_gate_requires_a_match_of_every_example(tmp_path: Path) -> None:
    """tools/arm64/all_match.py: an excused or changed example fails the gate."""
    def gate(*verdicts: tuple[str, str | None]) -> tuple[int, str]:
        out = tmp_path / "check.json"
        out.write_text(json.dumps({"verdicts": [
            {"key": f"examples/{n}.nf.svg", "verdict": kind, "excused": excused,
             "line": f"{kind.upper()} examples/{n}.nf.svg"}
            for n, (kind, excused) in enumerate(verdicts)], "ledger_problems": []}))
        run = subprocess.run([sys.executable, str(ROOT / "tools" / "arm64" / "all_match.py"),
                              str(out), "0"], capture_output=True, text=True, timeout=60)
        return run.returncode, run.stdout.splitlines()[-1]

    assert gate(("match", None), ("match", None)) == (
        0, "arm64 gate: 2 compositions, every one a match")
    assert gate(("match", None), ("changed", "edges"))[0] == 1
    assert gate(("regression", None))[1] == (
        "arm64 gate: FAILED: 1 of 1 compositions do not match (examples/0.nf.svg)")
    assert gate()[0] == 1  # no verdicts: nothing was shown to match


def test_the_arm64_gate_is_skipped_where_arm64_cannot_be_had(tmp_path: Path) -> None:
    """No qemu, and apt-get cannot install it: one line says why, and CI goes on."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "apt-get").write_text("#!/bin/sh\necho 'E: no network' >&2\nexit 100\n")
    (fake / "apt-get").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}",
           "NANOFRAMES_ARM64_QEMU": str(tmp_path / "no-qemu"),
           "NANOFRAMES_ARM64_DIR": str(tmp_path / "arm64")}
    run = subprocess.run(["bash", str(ROOT / "tools" / "arm64" / "gate")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr == ""
    assert run.stdout == (f"arm64 gate skipped: apt-get install qemu-user-static failed (see "
                          f"{tmp_path / 'arm64' / 'qemu-install.log'})\n")
    status = subprocess.run(["bash", str(ROOT / "tools" / "arm64" / "run"), "nanoframes"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert status.returncode == 3 and "cannot be had here" in status.stderr


def test_where_no_frames_are_compared_a_bounded_excuse_does_not_excuse(proj: Path,
                                                                        capsys) -> None:
    import nanoframes.api as nf

    configure(proj, BOUNDED.format(name=KEY, extra=""))
    digest(capsys, "--record")
    drift(proj, {1: (2, 1)})
    verdict = nf.judge(nf.load(proj / KEY))
    assert verdict.excused is None
    assert verdict.line().endswith("; not excused (edge rounding differs per build): no "
                                   "reference frames to measure the drift against")


def test_a_bad_platform_entry_is_named(proj: Path, capsys) -> None:
    digest(capsys, "--record")
    data = doc(proj)
    entry = data["compositions"][KEY]
    platform = json.loads(json.dumps(entry))
    del platform["frame_digests"]
    entry["platforms"] = {"macos-arm64": platform}
    data["version"] = 2
    (proj / "tests" / "digests.json").write_text(json.dumps(data))
    assert main(["digest", "--check"]) == 2
    assert (f"error[ledger-invalid]: entry '{KEY}' platform 'macos-arm64': missing field "
            "'frame_digests'") in capsys.readouterr().err
    entry["platforms"] = {"Mac OS": entry["platforms"]["macos-arm64"]}
    (proj / "tests" / "digests.json").write_text(json.dumps(data))
    assert main(["digest", "--check"]) == 2
    assert "platform tag 'Mac OS' must be lowercase" in capsys.readouterr().err


def test_a_reading_taken_on_a_runner_is_tagged_with_that_runner() -> None:
    """Issue 43, item 4: a platform entry accepted from CI names the runner, never
    a workstation's tag (two runners of one OS keep entries of their own)."""
    from nanoframes.determinism.platforms import platform_tag, reader_tag

    here = platform_tag({})
    arch = here.split("-", 1)[1]
    assert reader_tag({}) == here
    assert reader_tag({"GITHUB_ACTIONS": "true", "ImageOS": "ubuntu24"}) == f"ubuntu24-{arch}"
    assert reader_tag({"GITHUB_ACTIONS": "true", "ImageOS": "Win 25!"}) == f"win-25--{arch}"
    assert reader_tag({"GITHUB_ACTIONS": "true"}) == f"github-{here}"
    assert reader_tag({"CI": "true"}) == f"ci-{here}"
    assert reader_tag({"CI": "false"}) == here
    assert reader_tag({"CI": "true", "NANOFRAMES_PLATFORM": "gpu-box"}) == "gpu-box"
