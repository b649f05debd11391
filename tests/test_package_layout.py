"""The tree's structure, read from the source: the Python package has no
import cycles and reaches TensorFlow's private modules from one module only;
each C++ folder is a layer that includes only the layers below it."""

import ast
import pathlib
import re

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "tf_scatter_ops"


def imports(path):
    """The tf_scatter_ops modules and the tensorflow.* modules a file imports,
    at module level or inside functions alike."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "tf_scatter_ops":
                found |= {"tf_scatter_ops." + a.name for a in node.names}
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def graph(package=PACKAGE):
    modules = {"tf_scatter_ops." + p.stem: p for p in package.glob("*.py") if p.stem != "__init__"}
    return modules, {name: {m for m in imports(p) if m in modules} for name, p in modules.items()}


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
    (tmp_path / "a.py").write_text("from tf_scatter_ops import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from tf_scatter_ops import a\n")
    (tmp_path / "c.py").write_text("from tf_scatter_ops import a\n")
    assert find_cycle(graph(tmp_path)[1]) in (
        ["tf_scatter_ops.a", "tf_scatter_ops.b", "tf_scatter_ops.a"],
        ["tf_scatter_ops.b", "tf_scatter_ops.a", "tf_scatter_ops.b"])


def test_private_tensorflow_modules_only_in_tf_private():
    modules, _ = graph()
    reach = {name: sorted(m for m in imports(p) if m.startswith("tensorflow.python"))
             for name, p in modules.items()}
    assert reach["tf_scatter_ops._tf_private"], "the one module should hold them"
    others = {name: ms for name, ms in reach.items() if ms and name != "tf_scatter_ops._tf_private"}
    assert not others, others


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
