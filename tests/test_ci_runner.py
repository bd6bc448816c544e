"""A runner that draws otherwise (issue 43, items 3 and 4), played by a preloaded
libm that rounds ``sinf``/``cosf`` one ulp otherwise (tests/switched_nudge.py): what a
runner with another glibc is. The arc of ``films/arc.nf.svg`` moves under it; the
box of ``films/box.nf.svg`` does not.

- Under the CI recipe's ``--nf-strict=pixels`` the moved film fails, its text
  offering the two ways out; locally (``nf_strict = "edits"``) it stays an xfail.
- ``nanoframes accept --from`` the runner's artifacts adds a platform entry named
  after the runner (the primary untouched): the recording machine and the runner
  both match afterwards, and the ledger item passes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from scratch_project import git, has_git, new_repo, nf, pytest_run, write_film
from switched_nudge import build, compiler

pytestmark = [
    pytest.mark.skipif(not has_git(), reason="git is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD: Linux"),
    pytest.mark.skipif(compiler() is None, reason="no C compiler for the preloaded library"),
]

# An arc: ThorVG's path parser turns it into curves with sinf/cosf, so a libm that
# rounds otherwise draws its edge otherwise.
ARC = """<svg xmlns="http://www.w3.org/2000/svg" data-width="32" data-height="32"
     data-fps="2" data-duration="1">
  <path id="arc" d="M 6 16 A 10 10 0 0 1 26 16" fill="none" stroke="#cc0000" stroke-width="3"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#arc", "keyframes": [{"t": 0, "rotate": [10, 16, 16]},
                                                      {"t": 1, "rotate": [100, 16, 16]}]}]}
  </script>
</svg>
"""

# The team's own pytest settings: markers, and the local strictness init writes.
PYPROJECT = """\
[tool.nanoframes]
compositions = ["films/**/*.nf.svg"]

[tool.pytest.ini_options]
testpaths = ["films", "tests"]
markers = ["slow: the team's own marker"]
nf_check = true
nf_strict = "edits"
"""


def films_repo(root: Path) -> Path:
    """A repository with a moving arc and a box (the nudge leaves the box alone)."""
    root = new_repo(root, films={}, pyproject=PYPROJECT)
    write_film(root, "box")
    (root / "films" / "arc.nf.svg").write_text(ARC)
    (root / "tests").mkdir()
    (root / "tests" / "test_unit.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_unit():\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "films")
    return root


def runner(library: Path, **extra: str) -> dict[str, str]:
    """The environment of a GitHub runner whose libm rounds otherwise."""
    return {"LD_PRELOAD": str(library), "NF_NUDGE_WHEN": "always", "CI": "true",
            "GITHUB_ACTIONS": "true", "ImageOS": "ubuntu24", **extra}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("nudge"))


def test_a_runner_that_draws_otherwise_fails_until_its_reading_is_accepted(
        tmp_path: Path, library: Path) -> None:
    root = films_repo(tmp_path / "films")
    recorded = pytest_run(root, "--nf-record")
    assert recorded.returncode == 0, recorded.stdout
    ledger = root / "tests" / "digests.json"
    primary = json.loads(ledger.read_text())

    # Locally the default outcomes stay: the moved toolchain is an xfail (edits).
    local = pytest_run(root, **runner(library))
    assert local.returncode == 0, local.stdout
    assert "1 xfailed" in local.stdout

    # The CI recipe's strictness: the film whose pixels moved fails, whatever moved;
    # the box, whose pixels did not, passes though its toolchain moved too.
    ci = pytest_run(root, "--nf-strict=pixels", "--nf-artifacts=report", **runner(library))
    assert ci.returncode == 1, ci.stdout
    assert "1 failed" in ci.stdout and "3 passed" in ci.stdout, ci.stdout
    out = ci.stdout
    assert "CHANGED films/arc.nf.svg: changed, toolchain changed (preload:libswitchednudge.so)" \
        in out
    assert "fails under --nf-strict=pixels: its pixels differ from its entry" in out
    assert ("this machine draws it otherwise: accept its reading as this runner's platform "
            "entry (`nanoframes accept --from REPORT films/arc.nf.svg`") in out
    assert "or bound an excuse (max-delta, max-pixels, platforms: docs/digest.md)" in out

    # Accepted on the recording machine from the runner's artifacts: a platform entry
    # named after the runner, beside the primary.
    accepted = nf(root, "accept", "--from", "report", "films/arc.nf.svg")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "accepted films/arc.nf.svg (platform entry ubuntu24-x86_64" in accepted.stdout \
        or "accepted films/arc.nf.svg (platform entry ubuntu24-arm64" in accepted.stdout, \
        accepted.stdout
    after = json.loads(ledger.read_text())
    arc = after["compositions"]["films/arc.nf.svg"]
    assert {k: v for k, v in arc.items() if k != "platforms"} == {
        k: v for k, v in primary["compositions"]["films/arc.nf.svg"].items() if k != "platforms"}
    (tag, platform), = arc["platforms"].items()
    assert tag.startswith("ubuntu24-")
    assert "preload:libswitchednudge.so" in platform["toolchain_parts"]

    # Both machines match now, the ledger item included (a platform entry carries its
    # own toolchain: the ledger is still one recording pass).
    for environ in ({}, runner(library)):
        again = pytest_run(root, "--nf-strict=pixels", "-rA", **environ)
        assert again.returncode == 0, again.stdout
        assert "4 passed" in again.stdout, again.stdout
        assert "recorded with 2 toolchains" not in again.stdout
        assert nf(root, "digest", "--all", "--check", **environ).returncode == 0
