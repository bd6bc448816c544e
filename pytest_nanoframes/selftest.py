"""``pytest --nf-selftest``: each collected composition becomes a self-test item.

The item runs the library's self-test (``nanoframes.determinism.selftest.run_one``, the
function behind ``nanoframes digest --selftest``): the composition rendered in
fresh processes under variations that must not change a frame (process layout,
frame order, worker pool, ThorVG threads, locale, TZ, hash seed,
de-duplication). It passes when every variation reproduces the baseline and
fails naming each variation that differs. ``--nf-samples N`` limits every
variation to N evenly spaced frames. Independent of ``--nf-check``: both may
be given, and each composition then has a check item and a self-test item.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nanoframes.model.svg import is_composition_name

ITEM_NAME = "selftest"


def addoption(group: Any) -> None:
    group.addoption("--nf-selftest", action="store_true", dest="nf_selftest",
                    help="collect *.nf.svg files as self-test items: render each under "
                         "variations that must not matter and fail naming any that "
                         "changes a frame")


def configure(config: pytest.Config) -> None:
    if config.getoption("nf_selftest", False):
        config.pluginmanager.register(SelftestPlugin(), "nanoframes-selftest")


class SelftestFailure(Exception):
    """``str()`` is the self-test's report."""


class SelftestPlugin:
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector
                            ) -> pytest.Collector | None:
        if is_composition_name(file_path.name):
            return SelftestFile.from_parent(parent, path=file_path)
        if file_path.suffix.lower() in (".json", ".lottie"):
            films = self._films(parent.config).get(file_path.resolve())
            if films:  # a Lottie file the project's globs name
                node = SelftestFile.from_parent(parent, path=file_path)
                node.films = films
                return node
        return None

    _configured: dict[Path, list[Path]] | None = None

    def _films(self, config: pytest.Config) -> dict[Path, list[Path]]:
        if self._configured is None:
            from nanoframes.config import find_project_root, load_config
            from nanoframes.determinism.sweep import configured_films

            try:
                self._configured = configured_films(load_config(find_project_root(
                    config.invocation_params.dir)))
            except Exception:  # a bad configuration: the checking items report it
                self._configured = {}
        return self._configured


class SelftestFile(pytest.File):
    films: list[Path] | None = None

    def collect(self) -> Iterator[SelftestItem]:
        for film in self.films or [None]:
            item = SelftestItem.from_parent(
                self, name=ITEM_NAME if film is None else f"{ITEM_NAME}[{film.name}]")
            item.film = film or self.path
            yield item


class SelftestItem(pytest.Item):
    film: Path

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.film.name} (self-test)"

    def runtest(self) -> None:
        from nanoframes.config import find_project_root, load_config
        from nanoframes.determinism.selftest import run_one

        samples = self.config.getoption("nf_samples", None)
        config = load_config(find_project_root(self.path.parent))
        result = run_one(self.film, config, samples=samples)
        self.user_properties.append(("nf_selftest", "ok" if result.ok else "differs"))
        if not result.ok:
            raise SelftestFailure("\n".join(result.lines()))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None):  # type: ignore[override]
        if isinstance(excinfo.value, SelftestFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)
