"""The Python package's structure: no import cycles, and TensorFlow's private
modules reached from one module only. Read from the source (ast)."""

import ast
import pathlib

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
