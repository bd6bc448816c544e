"""The package's layer contract ([tool.importlinter] in pyproject.toml) holds."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_layer_contract_is_kept() -> None:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "broken" in proc.stdout and "0 broken" in proc.stdout


def import_cycles(package: str) -> list[list[str]]:
    """Every set of modules of ``package`` that import each other round in a circle
    (strongly connected components of the import graph: each module on its own,
    a package's ``__init__`` included, function-level imports included)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph(package, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iteratively
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(
                        graph.find_modules_directly_imported_by(target)))))
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


@pytest.mark.parametrize("package", ["nanoframes", "pytest_nanoframes"])
def test_no_module_imports_itself_round_a_circle(package: str) -> None:
    assert import_cycles(package) == []


def test_the_cycle_check_finds_a_cycle(tmp_path, monkeypatch) -> None:
    # A package whose __init__ and a module import each other (at function level).
    pkg = tmp_path / "circular_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def f():\n    from . import child\n")
    (pkg / "child.py").write_text("from . import f\n")
    (pkg / "alone.py").write_text("import json\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("circular_pkg") == [["circular_pkg", "circular_pkg.child"]]
