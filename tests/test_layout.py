"""The package's layers, read from its source: every import between rttlab's modules (at module
level or inside a function alike) points down the layers, and none closes a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "rttlab"

#: Lower imports nothing higher. The package root (``__version__``, the errors, ``_core``),
#: ``jsonable`` and ``_proc`` serve everyone; ``rttlab.estimators`` is the public name of ``trace.estimators``.
LAYERS = {
    "rttlab": 0,
    "rttlab._core": 0,
    "rttlab.jsonable": 0,
    "rttlab._proc": 0,
    # Colours every figure takes, whichever layer draws it.
    "rttlab.palette": 0,
    # Durations and numbers with units, read and written one way for everyone.
    "rttlab.units": 0,
    "rttlab.trace": 1,
    "rttlab.estimators": 1,
    "rttlab.sim": 1,
    "rttlab.experiments": 2,
    # Beside the simulator, and a sweep engine (testbed/engine.py declares its Simulator).
    "rttlab.testbed": 2,
    "rttlab.peers": 3,
    # The kernel's live RTT events (BPF); runs a testbed scenario inside its cgroup.
    "rttlab.live": 3,
    "rttlab.papers": 4,
    "rttlab.cli": 5,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def layer(module: str) -> int:
    best = max((k for k in LAYERS if module == k or module.startswith(k + ".")), key=len)
    return LAYERS[best]


def type_checking_only(tree: ast.Module) -> set[int]:
    """Line numbers of the imports inside ``if TYPE_CHECKING:`` (never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            for inner in node.body:
                for sub in ast.walk(inner):
                    lines.add(getattr(sub, "lineno", -1))
    return lines


def imports_of(module: str) -> set[str]:
    """The rttlab modules ``module`` imports anywhere in its body (``from a import b`` counts as
    ``a.b`` where that is a module, else ``a``)."""
    tree = ast.parse(MODULES[module].read_text())
    skip = type_checking_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "rttlab")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "rttlab"
        ):
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if sub in MODULES else node.module)
    return {m for m in found if m in MODULES or m == "rttlab._core"} - {module}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_the_package_has_the_layout_by_job():
    for package in ("trace", "sim", "experiments", "peers", "peers.ns3", "papers", "cli"):
        assert f"rttlab.{package}" in MODULES, package
    assert {m.split(".")[2] for m in MODULES if m.startswith("rttlab.papers.")} >= {
        "nunes_experts",
        "psaras_ca_rto",
        "bai_spectcp",
        "vieira_smoothtcp",
    }


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_import_points_down_the_layers(module):
    upward = sorted(m for m in GRAPH[module] if layer(m) > layer(module))
    assert not upward, f"{module} (layer {layer(module)}) imports {upward}"


def test_only_the_command_line_imports_the_command_line():
    offenders = sorted(
        m
        for m, deps in GRAPH.items()
        if not m.startswith("rttlab.cli") and any(d.startswith("rttlab.cli") for d in deps)
    )
    assert not offenders


def test_no_import_closes_a_circle_even_inside_a_function():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(GRAPH.get(m, ())):
            if state.get(d) == 1:
                cycle = path[path.index(d) :] + [d]
                pytest.fail("import cycle: " + " → ".join(cycle))
            if d not in state:
                visit(d)
        path.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_the_sweep_layer_names_no_simulator():
    """Engines register themselves (rttlab.experiments.simulators): the sweep's code compares
    against no engine's name (its docstring may mention them)."""
    tree = ast.parse((PACKAGE / "experiments" / "sweep.py").read_text())
    docstrings = {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }
    strings = {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    }
    assert not strings & {"ns3", "ns3-manet", "manet"}


def test_the_simulator_package_still_answers_to_the_names_it_had_as_a_module():
    import rttlab.sim as sim
    from rttlab.sim import run, scenario, versions

    for name in sim.__all__:
        assert getattr(sim, name) is getattr(
            {"Scenario": scenario, "SCHEMA": versions}.get(name, run), name
        ), name


def test_no_two_packages_import_each_other():
    """Module imports may be acyclic while their packages are not (``sim.run`` → ``trace.x`` and
    ``trace.y`` → ``sim.run``): a package is a unit a reader takes in whole, so that counts too."""

    def package(m: str) -> str:
        parts = m.split(".")
        return ".".join(parts[:2]) if len(parts) > 2 or m in PACKAGES else "rttlab"

    edges = {
        (package(m), package(d))
        for m, deps in GRAPH.items()
        for d in deps
        if package(m) != package(d) and package(d) != "rttlab"
    }
    both_ways = sorted(f"{a} ⇄ {b}" for a, b in edges if (b, a) in edges and a < b)
    assert not both_ways


PACKAGES = {m for m, p in MODULES.items() if p.name == "__init__.py"}
