"""The fire drill (issue 43, item 6): ``NANOFRAMES_DRILL=KEY`` nudges one pixel of
frame 0 of that film after ThorVG draws it, through the CLI and pytest alike, so the
check reads ``regression`` with its pixels, pictures and second opinion; the run says
DRILL first and last; nothing drawn under it is recorded, accepted, cached or stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from built_once import once
from scratch_project import has_git, new_repo, nf, pytest_run

from nanoframes.frames import drill

pytestmark = pytest.mark.skipif(not has_git(), reason="git is not installed")

KEY = "films/a.nf.svg"


def files_under(path: Path) -> dict[str, bytes]:
    """The files under ``path``, but the key that signs pending readings (origin.py):
    the check makes it once, in the same cache folder, whatever it drew."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and p.name != "pending.key"} if path.is_dir() else {}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Initialised and recorded once per session, copied for each test."""
    root = tmp_path / "films"
    once(tmp_path, "test_drill project", lambda: _build(root), root)
    return root


def _build(root: Path) -> None:
    new_repo(root)
    assert nf(root, "init").returncode == 0
    done = pytest_run(root, "--nf-record")
    assert done.returncode == 0, done.stdout


def test_the_drill_names_films_by_key_name_or_stem() -> None:
    environ = {drill.ENV: " films/a.nf.svg , intro ,b.nf.svg"}
    assert drill.keys(environ) == ("films/a.nf.svg", "intro", "b.nf.svg")
    assert drill.names(Path("/p/films/a.nf.svg"), environ)
    assert drill.names(Path("/p/x/intro.nf.svg"), environ)
    assert drill.names(Path("/p/y/b.nf.svg"), environ)
    assert not drill.names(Path("/p/other/films/c.nf.svg"), environ)
    assert not drill.names(Path("/p/a.nf.svg"), environ)  # the key names its folder too
    assert not drill.names(Path("/p/films/a.nf.svg"), {})
    assert drill.banner({}) is None


def test_a_drill_makes_a_regression_the_cli_cannot_record(project: Path) -> None:
    ledger = (project / "tests" / "digests.json").read_bytes()
    store = files_under(project / ".nanoframes" / "store")
    cache = project.parent / f"{project.name}-cache"
    clean = nf(project, "render", KEY, "--frame", "0", "-o", "clean.png")
    assert clean.returncode == 0, clean.stderr
    cached = files_under(cache)

    done = nf(project, "digest", "--all", "--check", NANOFRAMES_DRILL=KEY)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == lines[-1] == drill.banner({drill.ENV: KEY})
    assert lines[1] == ("REGRESSION films/a.nf.svg: regression, 1 of 2 frames differ: 0; a fire "
                        "drill (NANOFRAMES_DRILL) nudged one pixel of frame 0 after drawing")
    assert "  pixels: 1 of 2 frames differ, 1 px each, max ±1/255, within (8,8)–(8,8)" in lines
    assert any(line.startswith("  opinion: reproducible") for line in lines), lines
    assert "MATCH films/b.nf.svg: match" in lines

    # Nothing drawn under it lasts: no recording, no frame in the store or the cache.
    recorded = nf(project, "digest", "--all", "--record", NANOFRAMES_DRILL=KEY)
    assert recorded.returncode == 2
    assert recorded.stderr.strip() == ("nanoframes: error[drill-active]: refusing to record "
                                       "under a fire drill (NANOFRAMES_DRILL=films/a.nf.svg): "
                                       "unset it first")
    drilled = nf(project, "render", KEY, "--frame", "0", "-o", "drilled.png",
                 NANOFRAMES_DRILL=KEY)
    assert drilled.returncode == 0, drilled.stderr
    assert (project / "drilled.png").read_bytes() != (project / "clean.png").read_bytes()
    assert files_under(cache) == cached
    assert nf(project, "render", KEY, "--frame", "0", "-o", "again.png").returncode == 0
    assert (project / "again.png").read_bytes() == (project / "clean.png").read_bytes()
    assert (project / "tests" / "digests.json").read_bytes() == ledger
    assert files_under(project / ".nanoframes" / "store") == store
    assert nf(project, "digest", "--all", "--check").returncode == 0


def test_a_drill_under_pytest_shows_its_pictures_and_is_never_accepted(project: Path) -> None:
    ledger = (project / "tests" / "digests.json").read_bytes()
    store = files_under(project / ".nanoframes" / "store")
    done = pytest_run(project, "--nf-html=report/index.html", "--nf-artifacts=report",
                      "--nf-summary=summary.md", NANOFRAMES_DRILL=KEY)
    assert done.returncode == 1, done.stdout
    banner = drill.banner({drill.ENV: KEY})
    out = done.stdout.splitlines()
    assert banner in out[:8] and banner in out[-4:], done.stdout  # header and summary
    assert "REGRESSION films/a.nf.svg: regression, 1 of 2 frames differ: 0; a fire drill " \
           "(NANOFRAMES_DRILL) nudged one pixel of frame 0 after drawing" in done.stdout
    assert "  opinion: reproducible" in done.stdout
    page = (project / "report" / "index.html").read_text()
    for role in ("expected", "actual", "diff"):
        assert f'src="films/a.nf.svg/0-{role}.png"' in page
        assert (project / "report" / "films" / "a.nf.svg" / f"0-{role}.png").is_file()
    assert "DRILL: NANOFRAMES_DRILL=films/a.nf.svg" in page
    assert (project / "summary.md").read_text().splitlines()[2] == f"> **{banner}**"

    recorded = pytest_run(project, "--nf-record", NANOFRAMES_DRILL=KEY)
    assert recorded.returncode != 0
    assert "error[drill-active]: refusing to record under a fire drill" in recorded.stderr
    accepted = nf(project, "accept", "--from", "report", "--force", KEY)
    assert accepted.returncode == 1
    assert f"refused {KEY}: drawn under a fire drill (NANOFRAMES_DRILL): never accepted" \
        in accepted.stdout, accepted.stdout
    assert (project / "tests" / "digests.json").read_bytes() == ledger
    assert files_under(project / ".nanoframes" / "store") == store
    assert pytest_run(project).returncode == 0


def test_regressions_come_first_on_the_page_and_in_the_summary(project: Path) -> None:
    """Issue 43, item 5: a drilled b (a regression) before an edited a (a failing
    change), though a sorts first by name."""
    film = project / "films" / "a.nf.svg"
    film.write_text(film.read_text().replace('width="4"', 'width="6"'))
    done = pytest_run(project, "--nf-strict=pixels", "--nf-html=report/index.html",
                      "--nf-artifacts=report", "--nf-summary=summary.md",
                      NANOFRAMES_DRILL="films/b.nf.svg")
    assert done.returncode == 1, done.stdout
    page = (project / "report" / "index.html").read_text()
    assert page.index('data-key="films/b.nf.svg"') < page.index('data-key="films/a.nf.svg"')
    rows = [line for line in (project / "summary.md").read_text().splitlines()
            if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == ["films/b.nf.svg", "films/a.nf.svg"], rows
    assert "❌ regression" in rows[0] and "🟡 changed" in rows[1]
