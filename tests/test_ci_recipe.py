"""The CI recipe (docs/ci.md, the workflow ``nanoframes init`` writes) run for real
(issues 30 and 43): its steps, in order, as a GitHub runner runs them, in fresh
clones of a scratch repository whose own pytest settings (markers, testpaths) must
survive: ``RUNNER_TEMP`` and ``GITHUB_STEP_SUMMARY`` lie outside the checkout, as
on a runner.

``run:`` steps run as written with the variables GitHub sets; ``actions/cache``
restore and save are played by one folder (the cache of the repository); the
install, checkout and upload actions are left out (they need the network). ``if:``
conditions are evaluated. A preloaded libm that rounds otherwise
(tests/switched_nudge.py) stands in for a runner that draws otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from built_once import once
from scratch_project import env, git, has_git, new_repo, nf, porcelain, pytest_run
from switched_nudge import build, compiler

from nanoframes.adopt import workflow

pytestmark = pytest.mark.skipif(not has_git(), reason="git is not installed")

DOC = Path(__file__).resolve().parents[1] / "docs" / "ci.md"
DRAW_BASE = "Draw the base revision's frames (where none were restored)"

# The team's own settings: a marker its unit test needs (the test fails where pytest
# did not read this file), testpaths, and init adds the nanoframes keys.
PYPROJECT = """\
[tool.pytest.ini_options]
testpaths = ["films", "tests"]
markers = ["slow: the team's own marker"]
"""
UNIT = '''\
import pytest


@pytest.mark.slow
def test_the_teams_settings_were_read(pytestconfig):
    assert pytestconfig.inipath is not None and pytestconfig.inipath.name == "pyproject.toml"
    assert any(m.startswith("slow:") for m in pytestconfig.getini("markers"))
'''
ARC = """<svg xmlns="http://www.w3.org/2000/svg" data-width="32" data-height="32"
     data-fps="2" data-duration="1">
  <path d="M 6 16 A 10 10 0 0 1 26 16" fill="none" stroke="#cc0000" stroke-width="3"/>
</svg>
"""


def steps(text: str) -> list[dict]:
    return yaml.safe_load(text)["jobs"]["check"]["steps"]


@dataclass
class Runner:
    """One GitHub-shaped job: a fresh clone, its own RUNNER_TEMP and step summary."""

    clone: Path
    summary: Path
    done: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)

    def page(self) -> str:
        return (self.clone / "nanoframes-report" / "index.html").read_text()


def repository(root: Path, arc: bool = False) -> Path:
    """Initialised, recorded and committed once per session, copied (tests/built_once.py);
    ``root``: a folder of the test's tmp_path."""
    once(root.parent, f"test_ci_recipe repository arc={arc}", lambda: _repository(root, arc),
         root)
    return root


def _repository(root: Path, arc: bool) -> None:
    root = new_repo(root, pyproject=PYPROJECT)
    if arc:
        (root / "films" / "arc.nf.svg").write_text(ARC)
    (root / "tests").mkdir()
    (root / "tests" / "test_unit.py").write_text(UNIT)
    assert nf(root, "init").returncode == 0
    recorded = pytest_run(root, "--nf-record")
    assert recorded.returncode == 0, recorded.stdout
    git(root, "add", "-A")
    git(root, "commit", "-qm", "nanoframes")


def run_job(origin: Path, where: Path, ref: str, event: str, cache: Path, *,
            base: str = "", drill: str = "", **extra: str) -> Runner:
    """Every step of the workflow ``origin`` has at ``ref``, as ``event`` runs them."""
    clone = where / "work" / "repo"  # the runner's layout: work/REPO/REPO
    clone.parent.mkdir(parents=True)
    git(where, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", ref)
    temp = where / "work" / "_temp"
    temp.mkdir()
    job = Runner(clone, temp / "_runner_file_commands" / "step_summary")
    job.summary.parent.mkdir()
    job.summary.write_text("")  # GitHub creates it before the job
    variables = env(clone, CI="true", GITHUB_ACTIONS="true", RUNNER_TEMP=str(temp),
                    GITHUB_STEP_SUMMARY=str(job.summary),
                    PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                    **extra)
    outputs: dict[str, dict[str, str]] = {}
    ok = True
    for step in steps((clone / workflow.PATH).read_text()):
        if "if" in step and not condition(step["if"], event, outputs, ok):
            continue
        uses = step.get("uses", "")
        if uses.startswith("actions/cache/restore@"):
            found = (cache / "store").is_dir()
            if found:
                shutil.copytree(cache / "store", clone / step["with"]["path"],
                                dirs_exist_ok=True)
            outputs[step["id"]] = {"cache-matched-key": "saved" if found else "",
                                   "cache-primary-key": "key"}
        elif uses.startswith("actions/cache/save@"):
            shutil.rmtree(cache / "store", ignore_errors=True)
            shutil.copytree(clone / step["with"]["path"], cache / "store")
        elif "run" in step and step.get("name") not in workflow.NOT_LOCAL:
            step_env = dict(variables)
            for name, value in (step.get("env") or {}).items():
                step_env[name] = {"${{ github.event.pull_request.base.sha }}": base,
                                  "${{ inputs.drill }}": drill}[value]
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=clone, env=step_env,
                                  capture_output=True, text=True, timeout=600)
            job.done[step["name"]] = done
            ok = ok and done.returncode == 0
    return job


def condition(text: str, event: str, outputs: dict, ok: bool) -> bool:
    """A GitHub ``if:`` of the kinds the workflow uses."""
    expr = re.sub(r"steps\.(\w+)\.outputs\.([\w-]+)",
                  lambda m: repr(outputs.get(m.group(1), {}).get(m.group(2), "")), text)
    expr = (expr.replace("github.event_name", repr(event)).replace("success()", str(ok))
            .replace("always()", "True").replace("&&", " and ").replace("||", " or "))
    return bool(eval(expr, {"__builtins__": {}}))  # noqa: S307 - the workflow's own text


def test_the_docs_show_the_workflow_init_writes() -> None:
    doc = DOC.read_text()
    shown = re.search(r"```yaml\n(.*?)```", doc, re.S)
    assert shown is not None
    assert shown.group(1) == workflow.render()


def test_every_path_option_of_the_recipe_and_the_docs_is_one_word() -> None:
    """Issue 43, item 1: `--opt VALUE` would have pytest take VALUE for a test path."""
    from pytest_nanoframes.argv import PATH_OPTIONS

    root = DOC.parents[1]
    texts = {"workflow": workflow.render(), "README.md": (root / "README.md").read_text()}
    texts.update({p.name: p.read_text() for p in (root / ".github" / "workflows").glob("*.yml")})
    texts.update({p.name: p.read_text() for p in (root / "docs").glob("*.md")})
    for name, text in texts.items():
        for option in PATH_OPTIONS:
            assert not re.search(rf"{re.escape(option)} +[\"'$\w./]", text), (name, option)


def test_the_recipe_keeps_the_teams_settings_and_shows_an_edit(tmp_path: Path) -> None:
    origin = repository(tmp_path / "origin")
    base = git(origin, "rev-parse", "HEAD").strip()
    # The pull request: an edit of films/a.nf.svg that nobody re-recorded.
    git(origin, "checkout", "-qb", "edit")
    film = origin / "films" / "a.nf.svg"
    film.write_text(film.read_text().replace('width="4"', 'width="6"'))
    git(origin, "commit", "-qam", "wider box")

    job = run_job(origin, tmp_path / "pr", "edit", "pull_request", tmp_path / "cache",
                  base=base)
    drawn = job.done[DRAW_BASE]  # no saved frames: the base revision is drawn
    assert drawn.returncode == 0 and "::warning::" not in drawn.stdout, drawn.stdout
    check = job.done[workflow.CHECK]
    assert check.returncode == 1, check.stdout
    # The team's configuration held: its ini file, its marker, its testpaths.
    assert "configfile: pyproject.toml" in check.stdout, check.stdout
    assert "nanoframes: pytest took the value" not in check.stdout + check.stderr
    assert "1 failed, 3 passed" in check.stdout, check.stdout
    assert "fails under --nf-strict=pixels: its pixels differ from its entry" in check.stdout
    # Neither the push-only steps ran, and nothing the job wrote is for git (issue 43,
    # item 8: the report and the store are ignored as init wrote).
    assert "Keep the frames the ledger records (pushes whose check passed)" not in job.done
    assert porcelain(job.clone) == []

    # The report: the changed composition's frames with expected / actual / diff.
    page = job.page()
    sources = re.findall(r'<img[^>]* src="([^"]+)"', page)
    changed = [s for s in sources if "films/a.nf.svg" in s]
    for role in ("expected", "actual", "diff"):
        assert any(s.endswith(f"-{role}.png") for s in changed), (role, sources)
    for source in sources:
        assert (job.clone / "nanoframes-report" / source).is_file(), source

    # The job summary: the verdict table and the pixel line.
    markdown = job.summary.read_text()
    assert "**2 compositions: 1 match, 1 changed**" in markdown
    assert re.search(r"^\| `films/a\.nf\.svg` \| 🟡 changed \| source changed \(", markdown,
                     re.M), markdown
    assert re.search(r"^- `films/a\.nf\.svg`: pixels: 2 of 2 frames differ", markdown, re.M), \
        markdown
    assert "accept the changes: `pytest --nf-record`" in markdown


def test_a_path_option_in_two_words_loses_the_settings_and_says_so(tmp_path: Path) -> None:
    """What the recipe avoids: `--nf-summary PATH` outside the checkout moves pytest's
    rootdir, so the team's settings are not read; the plugin says so in one line."""
    root = repository(tmp_path / "origin")
    summary = tmp_path / "elsewhere" / "step_summary"
    summary.parent.mkdir()
    summary.write_text("")
    done = pytest_run(root, "--nf-check", "--nf-summary", str(summary))
    assert "configfile: pyproject.toml" not in done.stdout
    warned = [line for line in done.stdout.splitlines() if "nanoframes: pytest took" in line]
    assert len(warned) == 1, done.stdout
    assert f"`--nf-summary {summary}` for a test path" in warned[0]
    assert f"write `--nf-summary={summary}`" in warned[0]
    fine = pytest_run(root, "--nf-check", f"--nf-summary={summary}")
    assert fine.returncode == 0 and "configfile: pyproject.toml" in fine.stdout, fine.stdout
    assert "nanoframes: pytest took" not in fine.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux") or compiler() is None,
                    reason="a preloaded library (LD_PRELOAD, a C compiler) plays the runner")
def test_a_regression_on_the_runner_shows_the_frames_the_main_branch_saved(
        tmp_path: Path) -> None:
    """Issue 43, item 5: the runner draws the arc otherwise. Its reading, accepted
    as the runner's platform entry, exists nowhere but on runners: the main branch's
    passing check saves those frames, and a later regression on the runner (a fire
    drill, dispatched) shows them as expected beside the actual ones."""
    nudge = {"LD_PRELOAD": str(build(tmp_path)), "NF_NUDGE_WHEN": "always",
             "ImageOS": "ubuntu24"}
    origin = repository(tmp_path / "origin", arc=True)
    cache = tmp_path / "cache"

    first = run_job(origin, tmp_path / "push-1", "main", "push", cache, **nudge)
    check = first.done[workflow.CHECK]
    assert check.returncode == 1 and "CHANGED films/arc.nf.svg" in check.stdout, check.stdout
    # No runner ever drew the recording machine's frames: the hint says where they would
    # come from and how to see them, never a step this job already ran.
    assert "recorded frames are not in the store: in CI they come from the frames the main " \
           "branch's passing check saved" in check.stdout, check.stdout
    assert not (cache / "store").exists()  # a failed check saves nothing
    accepted = nf(origin, "accept", "--from", str(first.clone / "nanoframes-report"),
                  "films/arc.nf.svg")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "(platform entry ubuntu24-" in accepted.stdout
    git(origin, "commit", "-qam", "the runner's platform entry")

    second = run_job(origin, tmp_path / "push-2", "main", "push", cache, **nudge)
    assert second.done[workflow.CHECK].returncode == 0, second.done[workflow.CHECK].stdout
    assert (cache / "store").is_dir()

    drill = run_job(origin, tmp_path / "drill", "main", "workflow_dispatch", cache,
                    drill="films/arc.nf.svg", **nudge)
    assert DRAW_BASE not in drill.done  # not a pull request: the saved frames serve
    check = drill.done[workflow.CHECK]
    assert check.returncode == 1, check.stdout
    assert "REGRESSION films/arc.nf.svg: regression against the platform entry ubuntu24-" \
        in check.stdout, check.stdout
    page = drill.page()
    for role in ("expected", "actual", "diff"):
        assert 'src="films/arc.nf.svg/0-' + role + '.png"' in page, role
    assert page.index("films/arc.nf.svg") < page.index("films/a.nf.svg")
    markdown = drill.summary.read_text()
    assert "> **DRILL: NANOFRAMES_DRILL=films/arc.nf.svg" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| `")]
    assert rows and rows[0].startswith("| `films/arc.nf.svg` | ❌ regression"), markdown
