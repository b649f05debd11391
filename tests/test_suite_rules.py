"""Rules for the test suite itself, read from its source so they cannot
drift: a test that cannot run says why it is skipped (a skip without a
reason, or a test that returns early and so passes, hides what is missing);
tests/ holds the test files, their helpers (references, workers, checks run
by make and CI) are in tests/helpers/ (on pytest's pythonpath)."""

import ast
import pathlib
import textwrap

TESTS = pathlib.Path(__file__).resolve().parent

# pytest's and unittest's skips, by the name they are called as, and where
# each takes its reason: the first positional argument, or a keyword.
NEEDS_REASON = {
    "pytest.skip": (0, "reason"),
    "pytest.xfail": (0, "reason"),
    "pytest.mark.skip": (0, "reason"),
    "pytest.mark.skipif": (None, "reason"),  # the positional ones are conditions
    "pytest.mark.xfail": (None, "reason"),
    "pytest.importorskip": (2, "reason"),   # (modname, minversion, reason)
    "unittest.skip": (0, "reason"),
    "unittest.skipIf": (1, "reason"),
    "unittest.skipUnless": (1, "reason"),
    "self.skipTest": (0, "reason"),
}
# What an `if <probe>: return` at the top of a test asks: whether something
# is available. Such a test passes where it should be skipped.
PROBES = {"built_with_xla", "xla_uses_our_kernels", "built_with_gpu", "list_physical_devices",
          "is_built_with_cuda", "is_gpu_available", "which", "find_spec", "__version__",
          "hasattr", "cpu_isa", "getenv", "environ", "platform", "TF_VERSION"}


def _dotted(node):
    """`a.b.c` for a Name / Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id] + parts[::-1])


def _aliases(tree):
    """Names bound by `from pytest import skip` and the like -> their full name."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("pytest", "unittest", "pytest.mark"):
            for a in node.names:
                found[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name in ("pytest", "unittest"):
                    found[a.asname] = a.name
    return found


def _full_name(node, aliases):
    name = _dotted(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    head = aliases.get(head, head)
    return f"{head}.{rest}" if rest else head


def _reason_problem(call, where):
    """What is wrong with the reason of a skip call (None: nothing)."""
    position, keyword = where
    given = [k.value for k in call.keywords if k.arg == keyword]
    if position is not None and len(call.args) > position:
        given.append(call.args[position])
    if not given:
        return "no reason"
    value = given[0]
    if isinstance(value, ast.Constant) and not (isinstance(value.value, str) and value.value.strip()):
        return f"reason {value.value!r} is not a text"
    return None


def _body(fn):
    """A function's statements after its docstring."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _is_bare_return_if(stmt):
    return (isinstance(stmt, ast.If) and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Return)
            and (stmt.body[0].value is None
                 or (isinstance(stmt.body[0].value, ast.Constant) and stmt.body[0].value.value is None)))


def _probes(expr):
    names = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names & PROBES


def problems_in(source, filename="<source>"):
    """Every skip without a reason and every test that returns early where it
    should skip, as 'file:line: what'."""
    tree = ast.parse(source, filename)
    aliases = _aliases(tree)
    problems = []
    for node in ast.walk(tree):
        # bare decorators: @pytest.mark.skip, @unittest.skip ...
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                name = _full_name(d, aliases)
                if name in NEEDS_REASON:
                    problems.append(f"{filename}:{d.lineno}: {name} without a reason")
        if isinstance(node, ast.Assign):  # pytestmark = pytest.mark.skip
            name = _full_name(node.value, aliases)
            if name in NEEDS_REASON:
                problems.append(f"{filename}:{node.lineno}: {name} without a reason")
        if isinstance(node, ast.Call):
            name = _full_name(node.func, aliases)
            if name in NEEDS_REASON:
                wrong = _reason_problem(node, NEEDS_REASON[name])
                if wrong:
                    problems.append(f"{filename}:{node.lineno}: {name}: {wrong}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            body = _body(node)
            if body and _is_bare_return_if(body[0]):
                problems.append(f"{filename}:{body[0].lineno}: {node.name} returns (passes) "
                                "before it tests anything: pytest.skip(reason) instead")
                continue
            for stmt in ast.walk(node):
                if _is_bare_return_if(stmt) and _probes(stmt.test):
                    problems.append(
                        f"{filename}:{stmt.lineno}: {node.name} returns (passes) when "
                        f"{sorted(_probes(stmt.test))} says something is missing: "
                        "pytest.skip(reason) instead")
    return problems


def test_tests_holds_test_files_and_helpers_are_apart():
    top = sorted(p.name for p in TESTS.glob("*.py")
                 if not p.name.startswith("test_") and p.name != "conftest.py")
    assert not top, f"helpers belong in tests/helpers/: {top}"
    collected = sorted(p.name for p in (TESTS / "helpers").glob("*.py")
                       if p.name.startswith("test_") or p.name.endswith("_test.py"))
    assert not collected, f"pytest would collect these as tests: {collected}"


def test_every_skip_says_why_and_no_test_passes_for_want_of_something():
    problems = []
    for path in sorted(TESTS.rglob("*.py")):
        problems += problems_in(path.read_text(), str(path.relative_to(TESTS.parent)))
    assert not problems, "\n".join(problems)


def test_the_rules_see_what_they_are_for():
    source = textwrap.dedent('''
        import pytest
        import unittest
        from pytest import skip as sk

        pytestmark = pytest.mark.skipif(True)

        @pytest.mark.skip
        def test_a():
            pytest.skip()

        @pytest.mark.skipif(False, reason="")
        def test_b():
            """doc"""
            if not tso.built_with_xla():
                return
            sk()

        def test_c():
            x = pytest.importorskip("keras")
            for k in range(3):
                if tf.config.list_physical_devices("GPU"):
                    return

        class T(unittest.TestCase):
            @unittest.skipIf(True)
            def test_d(self):
                self.skipTest()

        # all fine:
        @pytest.mark.skipif(True, reason="no GPU")
        def test_e():
            pytest.skip(f"no {k}")
            pytest.importorskip("keras", reason="keras is not installed")
            if x == "ok":
                assert x
                return
            for y in x:
                if not y:
                    return
        ''')
    lines = sorted(int(p.split(":")[1]) for p in problems_in(source))
    assert lines == [6, 8, 10, 12, 15, 17, 20, 22, 26, 28], problems_in(source)
