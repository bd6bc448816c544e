"""What the repository itself holds: no stray binaries (a tracked file over
1 MB outside ``fonts/`` and ``docs/images/`` fails the suite), and the commit
hooks a contributor and CI run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1_000_000  # bytes
ALLOWED = ("fonts/", "docs/images/")


def oversized(root: Path, names: list[str]) -> list[str]:
    """Tracked files over ``LIMIT`` bytes outside the folders allowed to hold them."""
    found = []
    for name in names:
        if name.startswith(ALLOWED):
            continue
        path = root / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size > LIMIT:
            found.append(f"{name} ({path.stat().st_size:,} bytes)")
    return found


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                             timeout=60, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an sdist, say): nothing is tracked")
    return [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]


def test_no_tracked_file_over_a_megabyte_outside_fonts_and_images() -> None:
    big = oversized(ROOT, tracked_files())
    assert not big, ("tracked files over 1 MB (a binary committed by accident? fonts "
                     "belong in fonts/, pictures in docs/images/): " + ", ".join(big))


def test_the_check_sees_a_large_file(tmp_path: Path) -> None:
    (tmp_path / "fonts").mkdir()
    (tmp_path / "tool.whl").write_bytes(b"\0" * (LIMIT + 1))
    (tmp_path / "fonts" / "Face.ttf").write_bytes(b"\0" * (LIMIT + 1))
    (tmp_path / "small.bin").write_bytes(b"\0" * LIMIT)
    names = ["tool.whl", "fonts/Face.ttf", "small.bin"]
    assert oversized(tmp_path, names) == [f"tool.whl ({LIMIT + 1:,} bytes)"]


def test_the_commit_hooks_run_ruff_and_the_import_contracts_and_ci_runs_them() -> None:
    import yaml

    tracked_files()  # a repository matter: an sdist carries neither file

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert hooks["ruff"]["entry"].startswith("ruff check")
    assert hooks["import-contracts"]["entry"] == "lint-imports"
    # local hooks with the installed tools: nothing to download when they run
    assert all(repo["repo"] == "local" for repo in config["repos"])
    assert all(h["language"] == "system" for h in hooks.values())
    assert "pre-commit run --all-files" in (ROOT / ".ci" / "run").read_text()
