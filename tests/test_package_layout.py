"""The tree's structure, read from the source: the Python package has no
import cycles and reaches TensorFlow's private modules from one module only;
each C++ folder is a layer that includes only the layers below it."""

import ast
import pathlib
import re

from tools import import_graph

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "tf_scatter_ops"


def imports(path):
    """The tensorflow.* modules a file imports, at module level or inside
    functions alike."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def graph(package=PACKAGE):
    """(module name -> path, module -> the package modules it imports)."""
    known, arrows, _, _ = import_graph.analyse(package.parent)
    modules = {name: path for name, path in known.items() if name != "tf_scatter_ops"}
    return modules, {name: set(arrows[name]) - {"tf_scatter_ops"} for name in modules}


def find_cycle(edges):
    """One import cycle as a list of modules, or None."""
    for start in edges:
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in edges[node]:
                if nxt == start:
                    return path + [start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    return None


def test_no_module_imports_one_that_imports_it_back():
    cycle = find_cycle(graph()[1])
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_check_sees_a_cycle(tmp_path):
    """Two modules importing each other (one inside a function) are a cycle."""
    package = tmp_path / "tf_scatter_ops"
    package.mkdir()
    (package / "a.py").write_text("from tf_scatter_ops import b\n")
    (package / "b.py").write_text("def f():\n    from tf_scatter_ops import a\n")
    (package / "c.py").write_text("from tf_scatter_ops import a\n")
    assert find_cycle(graph(package)[1]) in (
        ["tf_scatter_ops.a", "tf_scatter_ops.b", "tf_scatter_ops.a"],
        ["tf_scatter_ops.b", "tf_scatter_ops.a", "tf_scatter_ops.b"])


def test_private_tensorflow_modules_only_in_tf_private():
    modules, _ = graph()
    reach = {name: sorted(m for m in imports(p) if m.startswith("tensorflow.python"))
             for name, p in modules.items()}
    assert reach["tf_scatter_ops._base.tf_private"], "the one module should hold them"
    others = {name: ms for name, ms in reach.items()
              if ms and name != "tf_scatter_ops._base.tf_private"}
    assert not others, others


# The Python layers (tf_scatter_ops/_base/README.md, _dispatch/README.md,
# docs/architecture.md): what each folder's modules may import of the package.
PY_LAYERS = {"tf_scatter_ops._base": {"tf_scatter_ops._base"},
             "tf_scatter_ops._dispatch": {"tf_scatter_ops._base", "tf_scatter_ops._dispatch"}}


def test_python_layers_import_only_the_layers_below():
    _, edges = graph()
    wrong = [f"{m} imports {t}" for m, targets in edges.items() for layer, allowed in
             PY_LAYERS.items() if m.startswith(layer + ".") for t in targets
             if import_graph.room(t) not in allowed]
    assert not wrong, wrong


def test_the_package_is_at_most_six_floors_high_with_no_reach_ins():
    """Rooms are the top-level modules and the sub-packages; no module uses
    another's private (_name) attribute."""
    _, arrows, reach_ins, lines = import_graph.analyse(PACKAGE.parent)
    between, _ = import_graph.rooms(arrows, lines)
    floor = import_graph.floors(between, [])
    assert max(floor.values()) <= 6, sorted(floor.items(), key=lambda x: -x[1])
    assert not reach_ins, reach_ins


# The C++ layers (cc/*/README.md, docs/architecture.md): the project folders
# each may include, by folder-qualified paths. TensorFlow, XLA, absl, Eigen,
# CUDA and CUB headers are the build's business (the cores' include sandbox).
CC = PACKAGE.parent / "cc"
LAYERS = {
    "kernels/common": {"common"},
    "kernels/cpu": {"common", "cpu"},
    "kernels/cuda": {"common", "cuda"},
    "ops": {"common", "ops"},
    "kernels/library": {"common", "cpu", "cuda", "ops", "library"},
    "kernels/tf": {"common", "cpu", "cuda", "ops", "tf"},
    "kernels/xla": {"common", "cpu", "ops", "tf", "xla"},
    "kernels/register": {"common", "cpu", "cuda", "ops", "tf", "xla", "library", "register"},
}


def project_includes(path):
    """The folders of the project headers a file includes: those found under
    cc/ or cc/kernels/ (XLA's own "xla/..." headers are not ours)."""
    found = set()
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.M):
        for root in (CC, CC / "kernels"):
            if (root / name).is_file():
                found.add(name.split("/")[0] if "/" in name else "(same folder)")
    return found


def test_every_cc_folder_is_a_layer():
    folders = {str(p.parent.relative_to(CC)) for p in CC.rglob("*") if p.suffix in (".h", ".cc", ".cuh")}
    assert folders == set(LAYERS)


def test_each_layer_includes_only_the_layers_below_it():
    wrong = {}
    for layer, allowed in LAYERS.items():
        for path in (CC / layer).iterdir():
            if path.suffix in (".h", ".cc", ".cuh"):
                bad = project_includes(path) - allowed
                if bad:
                    wrong[str(path.relative_to(CC))] = sorted(bad)
    assert not wrong, wrong


def test_the_architecture_page_names_every_layer():
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    missing = [layer for layer in LAYERS if f"`cc/{layer}/`" not in page]
    assert not missing, missing
