"""The public functions as help() and an IDE show them: every function in
tf_scatter_ops.__all__ is an explicit `def` in the module that exports it
(no factory-made function renamed after the fact), with named parameters
and a Google-style docstring whose Args name every parameter, a Returns
section and an Example that runs (doctest) and prints what it says."""

import doctest
import inspect
import io
import re
import sys
import types

import pytest
import tensorflow as tf

import tf_scatter_ops as tso

FUNCTIONS = sorted(n for n in tso.__all__ if isinstance(getattr(tso, n), types.FunctionType))
# TensorFlow 1.x names exported as the same function object as the 2.x one.
ALIASES = {n: getattr(tso, n).__name__ for n in FUNCTIONS if getattr(tso, n).__name__ != n}
OWN = [n for n in FUNCTIONS if n not in ALIASES]
# The modules of the wrappers AutoGraph must call as they are (convert.public).
WRAPPER_MODULES = ("ops", "segments", "variables", "groupwise", "argminmax", "csr")


def sections(doc):
    """{section title: its text} of a Google-style docstring."""
    doc = inspect.cleandoc(doc)
    found, title = {}, None
    for line in doc.splitlines():
        m = re.fullmatch(r"(Args|Returns|Raises|Example|Examples):", line)
        if m:
            title = m.group(1)
            found[title] = []
        elif title is not None:
            if line and not line.startswith(" "):  # back to prose
                title = None
            else:
                found[title].append(line)
    return {t: "\n".join(lines) for t, lines in found.items()}


def documented_args(args_text):
    """The parameter names the Args section describes (`name:` at its first level)."""
    return re.findall(r"^    (\w+)(?: \([^)]*\))?:", args_text, flags=re.M)


def test_the_list_is_what_the_package_exports():
    assert len(OWN) >= 50, OWN
    assert ALIASES == {"tensor_scatter_update": "tensor_scatter_nd_update",
                       "tensor_scatter_add": "tensor_scatter_nd_add",
                       "tensor_scatter_sub": "tensor_scatter_nd_sub"}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_a_tf1_alias_is_the_function_it_names(name):
    assert getattr(tso, name) is getattr(tso, ALIASES[name])


@pytest.mark.parametrize("name", OWN)
def test_defined_by_a_def_of_its_own_name_in_its_module(name):
    f = getattr(tso, name)
    assert f.__qualname__ == f.__name__ == name
    module = sys.modules[f.__module__]
    assert getattr(module, name) is f, f"{f.__module__}.{name} is not this function"
    code = inspect.unwrap(f).__code__  # (a context manager's generator function)
    assert code.co_name == name, f"{name} is made by {code.co_name!r}, not a def of its own"
    assert code.co_filename == module.__file__


@pytest.mark.parametrize("name", OWN)
def test_signature_has_named_parameters(name):
    kinds = {p.name: p.kind for p in inspect.signature(getattr(tso, name)).parameters.values()}
    assert not {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD} & set(
        kinds.values()), kinds


@pytest.mark.parametrize("name", OWN)
def test_docstring_has_args_returns_and_example(name):
    f = getattr(tso, name)
    doc = f.__doc__ or ""
    lines = inspect.cleandoc(doc).splitlines() + ["", ""]
    assert lines[0].endswith(".") and not lines[1], f"{name}: no one-line summary: {lines[:2]}"
    found = sections(doc)
    params = list(inspect.signature(f).parameters)
    if params:
        assert "Args" in found, f"{name}: no Args section"
        assert documented_args(found["Args"]) == params, (
            f"{name}: Args describe {documented_args(found['Args'])}, the signature is {params}")
    else:
        assert not documented_args(found.get("Args", "")), name
    assert found.get("Returns", "").strip(), f"{name}: no Returns section"
    assert ">>>" in found.get("Example", ""), f"{name}: no Example with a doctest"


@pytest.mark.parametrize("module", WRAPPER_MODULES)
def test_wrappers_keep_their_autograph_mark(module):
    """convert.public: AutoGraph calls them as they are."""
    names = [n for n in OWN if getattr(tso, n).__module__ == f"tf_scatter_ops.{module}"]
    assert names
    for n in names:
        assert hasattr(getattr(tso, n), "autograph_info__"), n


@pytest.mark.parametrize("name", OWN)
def test_example_prints_what_it_says(name):
    test = doctest.DocTestParser().get_doctest(
        getattr(tso, name).__doc__, {"tf": tf, "tso": tso}, f"tso.{name}", None, 0)
    out = io.StringIO()
    was_patched = tso.is_patched()
    try:
        result = doctest.DocTestRunner(verbose=False).run(test, out=out.write)
    finally:
        if not was_patched:
            tso.unpatch()
    assert result.attempted, name
    assert result.failed == 0, out.getvalue()


def test_the_public_names_are_exactly_the_api():
    """What `dir(tso)` shows without a leading underscore is `__all__`: no
    defining module, helper or test hook besides."""
    extra = sorted(n for n in dir(tso) if not n.startswith("_") and n not in tso.__all__)
    assert extra == [], extra
