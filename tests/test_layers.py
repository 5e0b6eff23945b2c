"""Layers only point down: kernels < sssp < tuning_db < tuner < benchmarks, notebooks.

Every module of the four library packages is parsed (no import runs) and each of its imports,
at module level, inside functions and under ``TYPE_CHECKING`` alike, is resolved to the package
it names. An import of a higher layer, or a cycle between packages, fails the test with the
module and line that made it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("kernels", "sssp", "tuning_db", "tuner", "benchmarks")
"""Bottom first; ``benchmarks`` (and the notebooks, which import nothing back) sit on top."""
LIBRARIES = LAYERS[:4]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str | None = None) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in ``path`` (the module ``module``, by
    default the one the path names under the repository)."""
    name = _module_name(path) if module is None else module
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((target, node.lineno))
    return found


def _edges() -> list[tuple[str, str, str, int]]:
    """(importing package, imported package, module, line) between two project packages."""
    edges = []
    for top in LIBRARIES:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = _module_name(path)
            for target, line in _imports(path):
                other = target.split(".")[0]
                if other in LAYERS and other != top:
                    edges.append((top, other, module, line))
    return edges


def test_every_library_package_is_walked() -> None:
    walked = {module.split(".")[0] for _, _, module, _ in _edges()}
    # every package but the ground floor imports one below it: the walk reached them all
    assert walked == set(LIBRARIES) - {"kernels"}, walked
    assert len(list((ROOT / "sssp").rglob("*.py"))) > 20


def test_imports_only_point_down() -> None:
    upward = [
        f"{module}:{line} imports {target} (layer {LAYERS.index(target)} above "
        f"{top}, layer {LAYERS.index(top)})"
        for top, target, module, line in _edges()
        if LAYERS.index(target) > LAYERS.index(top)
    ]
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_import_cycle_between_packages() -> None:
    graph: dict[str, dict[str, tuple[str, int]]] = {}
    for top, target, module, line in _edges():
        graph.setdefault(top, {}).setdefault(target, (module, line))
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in graph.get(node, {}):
            if nxt in path:
                loop = path[path.index(nxt) :]
                # one report per cycle, whichever package the walk entered it by
                first = loop.index(min(loop))
                loop = loop[first:] + loop[:first] + [loop[first]]
                where = [
                    f"{a} -> {b} at {graph[a][b][0]}:{graph[a][b][1]}"
                    for a, b in zip(loop, loop[1:], strict=False)
                ]
                cycles.append("; ".join(where))
            else:
                visit(nxt, path + [nxt])

    for start in graph:
        visit(start, [start])
    assert not cycles, "import cycles between packages:\n" + "\n".join(sorted(set(cycles)))


def test_the_walk_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The checker itself: imports inside functions, under TYPE_CHECKING and relative ones are
    all found and resolved."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import tuning_db.records\n"
        "def f():\n"
        "    from tuner import space\n"
        "from ..config import X\n"
        "from . import nearfar\n"
    )
    found = _imports(probe, "sssp.cpu.probe")
    assert ("tuning_db.records", 3) in found
    assert ("tuner", 5) in found
    assert ("sssp.config", 6) in found
    assert ("sssp.cpu", 7) in found
