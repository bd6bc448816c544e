"""[tool.nanoframes] reads a fixed set of keys: any other is one line, never ignored.

The keys are spelled two ways (``allow-fallback``, ``second_opinion``); a key
written the other way would be read as nothing at all, so the error names the
one meant.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scratch_project import nf

from nanoframes.config import KEYS, load_config
from nanoframes.errors import NanoframesError


def _project(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.nanoframes]\n{body}\n")
    return tmp_path


@pytest.mark.parametrize(("written", "meant"), [
    ("allow_fallback = true", "allow-fallback"),
    ("font_dirs = ['fonts']", "font-dirs"),
    ("second-opinion = 2", "second_opinion"),
    ("second-opinion-budget = 5", "second_opinion_budget"),
])
def test_a_key_spelled_the_other_way_names_the_one_meant(tmp_path: Path, written: str,
                                                          meant: str) -> None:
    with pytest.raises(NanoframesError) as caught:
        load_config(_project(tmp_path, written))
    assert caught.value.code == "config-invalid"
    assert f"(did you mean {meant}?)" in str(caught.value)


def test_an_unknown_key_lists_the_keys_read(tmp_path: Path) -> None:
    with pytest.raises(NanoframesError) as caught:
        load_config(_project(tmp_path, "samples = 3"))
    assert "no key 'samples'; it reads " + ", ".join(KEYS) in str(caught.value)


def test_a_pytest_setting_says_where_it_goes(tmp_path: Path) -> None:
    with pytest.raises(NanoframesError) as caught:
        load_config(_project(tmp_path, "nf_check = true"))
    assert "no key 'nf_check' (a pytest setting: it goes in [tool.pytest.ini_options])" \
        in str(caught.value)


def test_every_key_read_is_accepted(tmp_path: Path) -> None:
    config = load_config(_project(tmp_path, "\n".join([
        "allow-fallback = true", "compositions = ['*.nf.svg']", "font-dirs = ['fonts']",
        "ledger = 'digests.json'", "second_opinion = 1", "second_opinion_budget = 5",
        "store = '.cache/frames'", "[tool.nanoframes.excused]", "'a.nf.svg' = 'why'"])))
    assert config.allow_fallback and config.second_opinion == 1 and config.store


def test_the_command_says_it_in_one_line(tmp_path: Path) -> None:
    done = nf(_project(tmp_path, "allow_fallback = true"), "digest", "--check")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "error[config-invalid]" in lines[0], done.stderr
    assert "allow_fallback" in lines[0] and "Traceback" not in done.stderr
