"""The layout keeps the data flow: packages in layers, every import pointing down, no cycle, small modules.

The layers (docs/development.md, "Map of the code") from the bottom up. A module imports from its own package or from one of a
lower layer, at module level or inside a function alike: a lazy import is still a dependency.
"""

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).parents[2] / "src" / "disklab"
LAYERS = (
    ("errors", "units"),
    ("system",),
    ("fio",),
    ("targets",),
    ("suite",),
    ("trace",),
    ("plan",),
    ("store",),
    ("env",),
    ("analysis",),
    ("run",),
    ("hosts",),
    ("imports",),
    ("database",),
    ("report",),
    ("web",),
    ("capacity",),
    ("cli",),
    ("__main__",),
)
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}
LOOSE_MODULES_ALLOWED = {"__init__", "__main__", "errors", "units"}
GENERATED = {"_version"}  # written by the build (setuptools-scm's version_file), part of the package root
MAX_MODULE_LINES = 400


def unit_of(module: str) -> str:
    """disklab.report.html.svg -> report; disklab (the package itself, for its version) -> __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] not in GENERATED else "__init__"


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every disklab module `path` imports, wherever in the file the import statement is."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            else:
                found.add(node.module)
    return {name for name in found if name == "disklab" or name.startswith("disklab.")}


def package_edges() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> the module pairs that make the edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        importer = module_name(path)
        for imported in imported_modules(path):
            pair = (unit_of(importer), unit_of(imported))
            if pair[0] != pair[1] and pair[1] != "__init__":  # the package root holds only the version
                edges.setdefault(pair, []).append(f"{importer} -> {imported}")
    return edges


def cycles(edges) -> list[list[str]]:
    """Strongly connected groups of more than one unit (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_package_and_loose_module_has_a_layer():
    units = {path.stem if path.is_file() else path.name for path in SOURCE.iterdir()
             if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists())} - GENERATED
    assert units - {"__init__"} <= set(RANK), f"not placed in LAYERS: {sorted(units - {'__init__'} - set(RANK))}"
    loose = {path.stem for path in SOURCE.glob("*.py")} - LOOSE_MODULES_ALLOWED - GENERATED
    assert not loose, f"loose modules at the top of src/disklab (give them a package): {sorted(loose)}"


def test_every_import_points_down():
    upward = [f"{a} (layer {RANK[a]}) imports {b} (layer {RANK[b]}): {', '.join(why)}"
              for (a, b), why in sorted(package_edges().items()) if RANK[b] >= RANK[a]]
    assert not upward, "imports that point up or sideways:\n" + "\n".join(upward)


def test_no_cycle_between_packages():
    assert cycles(package_edges()) == []


def test_no_module_is_too_long():
    long = {str(p.relative_to(SOURCE)): n for p in SOURCE.rglob("*.py") if (n := len(p.read_text().splitlines()))
            > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_the_reader_sees_lazy_imports_and_the_cycle_finder_finds_cycles():
    """The checks above mean something only if imports inside functions are read and a cycle would be reported."""
    edges = package_edges()
    assert any("disklab.cli.run" in why and "disklab.hosts" in why for pairs in edges.values() for why in pairs)
    assert cycles({("a", "b"): [], ("b", "c"): [], ("c", "a"): [], ("c", "d"): []}) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer", [unit for units in LAYERS for unit in units if unit != "__main__"])
def test_a_layer_exists_for_each_name(layer):
    """A layer named here but gone from the source would let the table drift from the code."""
    assert (SOURCE / layer).is_dir() or (SOURCE / f"{layer}.py").is_file()
