"""The package's imports run one way: no loop between its modules, the finder below what it
finds, and the benchmarks' interface importing nothing of the workflow (a loop is where a
change in one module breaks another at import, and where the next feature gets tangled)."""

import ast

from conftest import REPO, SCRIPTS

KNOBS = SCRIPTS / "knobs"


def module_name(path):
    parts = path.relative_to(SCRIPTS).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports():
    """{module: the package's modules it imports, anywhere in it (lazy imports too)}."""
    modules = {module_name(path): path for path in KNOBS.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
                submodules = {f"{node.module}.{alias.name}" for alias in node.names} & set(modules)
                # `from a.b import c`: c's module where c is one, else a.b's own names
                found |= submodules or {node.module}
        graph[name] = found - {name}
    return graph


def loops(graph):
    """Every cycle a depth-first walk meets, as the modules along it."""
    found, state = [], {}

    def walk(name, path):
        state[name] = "open"
        for other in sorted(graph.get(name, ())):
            if state.get(other) == "open":
                found.append(path[path.index(other):] + [name, other])
            elif other not in state:
                walk(other, path + [name])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            walk(name, [])
    return found


def test_no_module_of_the_package_imports_back_into_a_loop():
    assert loops(imports()) == []


def test_the_walk_finds_a_loop_where_there_is_one():
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_the_finder_and_the_interface_stand_below_what_they_find():
    graph = imports()
    assert graph["knobs.finder"] == set()  # what it finds it imports by file, when asked
    assert graph["knobs.benchmarks"] == set()
    users = {name for name, found in graph.items() if "knobs.finder" in found}
    assert {"knobs.experiments", "knobs.config_check", "knobs.runner"} <= users


def test_what_a_knob_is_stands_below_the_kinds_and_the_checks_of_their_effects():
    graph = imports()
    assert graph["knobs.knob"] == set()
    assert not {name for name in graph["knobs.effects"] if name.startswith("knobs.kinds")}


def test_no_study_imports_another_only_their_shared_module():
    studies = REPO / "studies"
    crossing = []
    for path in studies.glob("*/**/*.py"):
        own = path.relative_to(studies).parts[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                     [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            crossing += [f"{path.relative_to(studies)}: {name}" for name in names
                         if name.startswith("studies.")
                         and name.split(".")[1] not in (own, "shared")]
    assert crossing == []
