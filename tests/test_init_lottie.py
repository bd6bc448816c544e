"""``nanoframes init`` finds Lottie films as well as compositions: every ``*.lottie``
and every ``*.json`` that is a Lottie animation, never a JSON data file (a glob
naming one would fail the check), never under tool directories."""

from __future__ import annotations

import shutil
from pathlib import Path

import lottie_gen as gen
import pytest
from scratch_project import git, has_git, new_repo, nf, write_film

from nanoframes.adopt.project import find_lottie_films, globs_for, is_lottie_json
from nanoframes.config import glob_compositions, load_config

ROOT = Path(__file__).resolve().parent.parent
ANIMATION = gen.dumps(gen.animation(w=32, h=16, op=4))


def test_a_json_is_a_film_only_when_it_is_a_lottie_animation(tmp_path: Path) -> None:
    cases = {"anim.json": ANIMATION, "package.json": b'{"name": "x", "layers": []}',
             "list.json": b"[1, 2]", "broken.json": b'{"w": 1', "empty.json": b"",
             "deep.json": b'{"a": ' * 100_000}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    assert [n for n in cases if is_lottie_json(tmp_path / n)] == ["anim.json"]


def test_json_named_by_a_glob_only_where_every_json_there_is_lottie(tmp_path: Path) -> None:
    for rel, data in {"motion/a.json": ANIMATION, "motion/sub/b.json": ANIMATION,
                      "ui/spin.json": ANIMATION, "ui/strings.json": b'{"hi": "hello"}',
                      "intro.json": ANIMATION, "package.json": b"{}"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    films = find_lottie_films(tmp_path)
    assert films == ["intro.json", "motion/a.json", "motion/sub/b.json", "ui/spin.json"]
    assert globs_for(films, tmp_path) == ["intro.json", "motion/**/*.json", "ui/spin.json"]


@pytest.mark.skipif(not has_git(), reason="git is not installed")
def test_init_names_the_lottie_films_and_they_record(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "proj", films={})
    write_film(root, "intro", folder="films")
    anims = root / "anims"
    anims.mkdir()
    (anims / "spin.json").write_bytes(ANIMATION)
    shutil.copy(ROOT / "examples" / "lottie" / "toggle.lottie", anims / "toggle.lottie")
    (anims / "settings.json").write_text('{"speed": 2}')  # data beside the films
    (root / "package.json").write_text('{"name": "site"}')
    vendored = root / "node_modules" / "x"
    vendored.mkdir(parents=True)
    (vendored / "anim.json").write_bytes(ANIMATION)  # not the team's
    git(root, "add", "-A")
    git(root, "commit", "-qm", "films")

    done = nf(root, "init")
    assert done.returncode == 0, done.stderr
    globs = ["anims/**/*.lottie", "anims/spin.json", "films/**/*.nf.svg"]
    assert done.stdout.splitlines()[0] == (
        f"wrote  pyproject.toml: [tool.nanoframes] compositions = {globs} "
        "(1 composition, 2 Lottie films), ledger = 'tests/digests.json'")
    config = load_config(root)
    assert list(config.compositions) == globs
    named = [p.relative_to(root).as_posix() for p in glob_compositions(config)]
    assert named == ["anims/spin.json", "anims/toggle.lottie", "films/intro.nf.svg"]
    recorded = nf(root, "digest", "--all", "--record")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    checked = nf(root, "digest", "--all", "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines() == [
        "MATCH anims/spin.json: match", "MATCH anims/toggle.lottie: match",
        "MATCH films/intro.nf.svg: match", "3 compositions: 3 match"]
