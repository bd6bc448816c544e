"""The CI workflow ``nanoframes init`` writes, and docs/ci.md shows, for a user's
own project (GitHub Actions).

One job: install, restore the recorded frames a push to the main branch saved
(else, on a pull request, draw the base revision's), check with
``--nf-strict=pixels`` (a film whose pixels differ from its entry fails,
whatever input moved), write the HTML report, the artifacts and a Markdown job
summary, upload the report ``if: always()``; on a push whose check passed, keep
the frames the ledger records and save them for the pull requests to come.
Why a saved store first: docs/decisions/0101-ci-frames-from-the-main-branch.md.

Every path-valued plugin option is written ``--opt=VALUE``: pytest chooses its
rootdir and ini file before the plugin's options are known, so the value of
``--opt VALUE`` would be taken for a test path (the team's settings lost).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from .. import __version__

PATH = ".github/workflows/nanoframes.yml"
# The first line marks the file as init's; init never overwrites the file anyway.
MARK = "# Written by `nanoframes init`"
# The steps a test runs in a scratch repository (tests/test_ci_recipe.py): every
# `run:` step but these, which need the network or GitHub itself.
NOT_LOCAL = ("Install",)
# The check step's name (tests find it by name).
CHECK = "Check (a film whose pixels differ from its entry fails)"
DEFAULT_BRANCH = "main"

TEMPLATE = """\
# Written by `nanoframes init` (docs/ci.md of nanoframes): edit it freely, init never
# overwrites it. Checks every composition against the ledger: a film whose pixels differ
# from its entry fails, and the report shows each such frame (expected, actual, diff),
# the job summary a verdict table.
name: nanoframes

on:
  pull_request:
  push:
    branches: [{branch}]
  workflow_dispatch:  # a fire drill from the Actions tab: docs/ci.md
    inputs:
      drill:
        description: "compositions to nudge one pixel of (NANOFRAMES_DRILL): the check must fail"
        default: ""

permissions:
  contents: read

jobs:
  check:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0  # the base revision is drawn where no saved frames are found

      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"

      - name: Install
        # The ledger records the toolchain: install the pytest-nanoframes you record with.
        run: |
          python -m pip install --upgrade pip
          pip install "{requirement}"
          {project_install}

      - name: Restore the recorded frames (the report's expected pictures)
        id: frames
        uses: actions/cache/restore@v4
        with:
          path: .nanoframes/store
          key: nanoframes-frames-${{{{ runner.os }}}}-${{{{ hashFiles('{ledger}') }}}}
          restore-keys: |
            nanoframes-frames-${{{{ runner.os }}}}-${{{{ hashFiles('{ledger}') }}}}-
            nanoframes-frames-${{{{ runner.os }}}}-

      - name: Draw the base revision's frames (where none were restored)
        if: github.event_name == 'pull_request' && steps.frames.outputs.cache-matched-key == ''
        env:
          BASE: ${{{{ github.event.pull_request.base.sha }}}}
        run: |
          store="$PWD/.nanoframes/store"
          git worktree add --detach "$RUNNER_TEMP/nanoframes-base" "$BASE"
          cd "$RUNNER_TEMP/nanoframes-base"
          nanoframes digest --all --record --ci --store="$store" \\
            --ledger="$RUNNER_TEMP/nanoframes-base.json" > /dev/null \\
            || echo "::warning::the base revision could not be drawn: the report lacks its pictures"

      - name: {check}
        env:
          NANOFRAMES_DRILL: ${{{{ inputs.drill }}}}
        run: >
          python -m pytest --nf-check --nf-strict=pixels
          --nf-html=nanoframes-report/index.html
          --nf-artifacts=nanoframes-report
          --nf-summary="$GITHUB_STEP_SUMMARY"

      - name: Upload the report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: nanoframes-report
          path: nanoframes-report/
          if-no-files-found: ignore

      - name: Keep the frames the ledger records (pushes whose check passed)
        if: success() && github.event_name == 'push'
        run: nanoframes store --prune  # the check kept every frame it drew

      - name: Save them for the pull requests to come
        if: success() && github.event_name == 'push'
        uses: actions/cache/save@v4
        with:
          path: .nanoframes/store
          key: ${{{{ steps.frames.outputs.cache-primary-key }}}}-${{{{ github.run_id }}}}
"""

DEFAULT_REQUIREMENT = (f"pytest-nanoframes @ git+https://github.com/OWNER/nanoframes"
                       f"@v{__version__}")
PROJECT_INSTALL = "pip install -e .  # the project is a package: its tests import it"
NO_PROJECT_INSTALL = ("# pip install -e .  # add this when the tests import this project's "
                      "own package (a [project] with one package to install)")


def render(requirement: str = DEFAULT_REQUIREMENT, branch: str = DEFAULT_BRANCH,
           project_install: bool = False, ledger: str = "tests/digests.json") -> str:
    """The workflow's text. ``project_install``: the project is an installable
    package, installed too, so its tests import it (else a comment says when to)."""
    return TEMPLATE.format(requirement=requirement, branch=branch, ledger=ledger,
                           check=CHECK,
                           project_install=PROJECT_INSTALL if project_install
                           else NO_PROJECT_INSTALL)


@dataclass(frozen=True)
class Requirement:
    """What the workflow installs, and the one line init says when a person must
    act on it (None: it installs exactly what is installed here)."""

    line: str
    note: str | None = None


def installed_requirement() -> str:
    """The requirement line of ``requirement_here()``."""
    return requirement_here().line


def requirement_here() -> Requirement:
    """How this pytest-nanoframes was installed, as a requirement CI can install
    (PEP 610's direct_url.json): a git URL and commit; an archive's URL; a local
    checkout's origin and commit; a local wheel, to be committed beside the
    workflow; from an index, that version. Where CI cannot reach it as it is, the
    note says what to do."""
    from importlib.metadata import distributions

    # The installed one (an installer wrote INSTALLER), not a source tree's egg-info
    # that the current directory on sys.path shows first.
    found = [d for d in distributions(name="pytest-nanoframes")
             if d.read_text("INSTALLER") is not None or d.read_text("direct_url.json")]
    if not found:
        return Requirement(DEFAULT_REQUIREMENT, _placeholder("pytest-nanoframes is not "
                                                             "installed here"))
    dist = found[0]
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        direct = {}
    if direct is None:  # from an index: the same version from it
        return Requirement(f"pytest-nanoframes=={dist.version}")
    return from_direct_url(direct if isinstance(direct, dict) else {})


def from_direct_url(direct: dict) -> Requirement:
    """``requirement_here`` for one direct_url.json (PEP 610)."""
    url = str(direct.get("url", ""))
    vcs = direct.get("vcs_info") or {}
    if vcs.get("vcs") == "git" and vcs.get("commit_id") and _reachable(url):
        return Requirement(f"pytest-nanoframes @ git+{url}@{vcs['commit_id']}")
    if "archive_info" in direct:
        if _reachable(url):
            return Requirement(f"pytest-nanoframes @ {url}")
        name = Path(unquote(urlparse(url).path)).name
        if name.endswith(".whl"):
            where = f"ci/{name}"
            return Requirement(where, f"the workflow installs the wheel you installed from "
                               f"{where}: copy {unquote(urlparse(url).path)} there and "
                               f"commit it (docs/ci.md: how a wheel reaches CI)")
    if "dir_info" in direct:
        path = Path(unquote(urlparse(url).path))
        origin = _checkout_of(path)
        if origin is not None:
            remote, commit = origin
            return Requirement(f"pytest-nanoframes @ git+{remote}@{commit}",
                               f"the workflow installs pytest-nanoframes from {remote} at "
                               f"{commit[:12]}, the commit of your checkout {path}: push it "
                               f"there, or edit the Install step (docs/ci.md)")
        return Requirement(DEFAULT_REQUIREMENT, _placeholder(
            f"pytest-nanoframes was installed from {path}, which CI cannot reach"))
    return Requirement(DEFAULT_REQUIREMENT, _placeholder(
        f"pytest-nanoframes was installed from {url or 'an unknown place'}"))


def _placeholder(why: str) -> str:
    return (f"{why}: replace OWNER/nanoframes in {PATH}'s Install step with where CI "
            f"installs it from (docs/ci.md)")


def _reachable(url: str) -> bool:
    return url.startswith(("https://", "http://", "ssh://"))


def _checkout_of(path: Path) -> tuple[str, str] | None:
    """A local checkout's origin URL (one CI can reach) and HEAD commit, if any."""
    remote = git_output(path, "remote", "get-url", "origin")
    commit = git_output(path, "rev-parse", "--verify", "HEAD")
    if remote is None or commit is None or not _reachable(remote):
        return None
    return remote, commit


def current_branch(root: Path) -> str | None:
    """The branch pushes are checked on: the checked-out branch (even one with no
    commit yet), else the branch ``origin/HEAD`` names; None where neither is."""
    branch = git_output(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch:
        return branch
    remote = git_output(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if remote and "/" in remote:
        return remote.split("/", 1)[1]
    return None


def git_output(where: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None
