"""The CI workflow ``nanoframes init`` writes, and docs/ci.md shows, for a user's
own project (GitHub Actions).

One job: install, draw the base revision's recorded frames into the frame store
(pull requests only), check with ``--nf-strict=edits``, write the HTML report,
the artifacts and a Markdown job summary, upload the report ``if: always()``.
Why the base revision is drawn rather than a store restored: docs/ci.md.
"""

from __future__ import annotations

from .. import __version__

PATH = ".github/workflows/nanoframes.yml"
# The first line marks the file as init's; init never overwrites the file anyway.
MARK = "# Written by `nanoframes init`"
# The steps a test runs in a scratch repository (tests/test_ci_recipe.py): every
# `run:` step but these, which need the network or GitHub itself.
NOT_LOCAL = ("Install",)

TEMPLATE = """\
# Written by `nanoframes init` (docs/ci.md of nanoframes): edit it freely, init never
# overwrites it. Checks every composition against the ledger; on a pull request the
# report shows each changed frame (expected, actual, diff) and the job summary a
# verdict table.
name: nanoframes

on:
  pull_request:
  push:
    branches: [{branch}]

permissions:
  contents: read

jobs:
  check:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0  # the base revision is drawn for the report's pictures

      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"

      - name: Install
        # The ledger records the toolchain: install the pytest-nanoframes you record with.
        run: |
          python -m pip install --upgrade pip
          pip install "{requirement}"{project_install}

      - name: Draw the base revision's frames (the report's expected pictures)
        if: github.event_name == 'pull_request'
        env:
          BASE: ${{{{ github.event.pull_request.base.sha }}}}
        run: |
          store="$PWD/.nanoframes/store"
          git worktree add --detach "$RUNNER_TEMP/nanoframes-base" "$BASE"
          cd "$RUNNER_TEMP/nanoframes-base"
          nanoframes digest --all --record --ci --store "$store" \\
            --ledger "$RUNNER_TEMP/nanoframes-base.json" \\
            || echo "::warning::the base revision could not be drawn: the report lacks its pictures"

      - name: Check (an unrecorded edit fails; a toolchain-only move is an xfail)
        run: >
          python -m pytest --nf-check --nf-strict=edits
          --nf-html nanoframes-report/index.html
          --nf-artifacts nanoframes-report
          --nf-summary "$GITHUB_STEP_SUMMARY"

      - name: Upload the report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: nanoframes-report
          path: nanoframes-report/
          if-no-files-found: ignore
"""

DEFAULT_REQUIREMENT = (f"pytest-nanoframes @ git+https://github.com/OWNER/nanoframes"
                       f"@v{__version__}")


def render(requirement: str = DEFAULT_REQUIREMENT, branch: str = "main",
           project_install: bool = False) -> str:
    """The workflow's text. ``project_install``: the project is a package (its
    pyproject has a ``[project]`` table), installed too, so its tests import it."""
    return TEMPLATE.format(requirement=requirement, branch=branch,
                           project_install="\n          pip install -e ." if project_install
                           else "")


def installed_requirement() -> str:
    """How this pytest-nanoframes was installed, as a requirement CI can install: its
    git URL and commit (PEP 610's direct_url.json), else the default with OWNER to
    fill in."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        raw = distribution("pytest-nanoframes").read_text("direct_url.json")
    except PackageNotFoundError:
        return DEFAULT_REQUIREMENT
    try:
        direct = json.loads(raw or "{}")
    except ValueError:
        return DEFAULT_REQUIREMENT
    vcs = direct.get("vcs_info") or {}
    url = str(direct.get("url", ""))
    if vcs.get("vcs") == "git" and vcs.get("commit_id") and url.startswith("https://"):
        return f"pytest-nanoframes @ git+{url}@{vcs['commit_id']}"
    return DEFAULT_REQUIREMENT
