"""pytest plugin for a client library's own tests (the ones its wheel
ships), run against tf_scatter_ops by tools/client_suites.py, which loads it
with `-p tso_suite`:

--tso-mode=record   TensorFlow's functions, each name that patch_tensorflow()
                    replaces (patch._modules()) wrapped by a recorder; writes
                    --tso-selection: the tests that called one of them,
                    directly or through Keras, and the tests left out with a
                    reason
--tso-mode=stock    TensorFlow's functions
--tso-mode=patched  tf_scatter_ops.patch_tensorflow() before the test modules
                    are imported (some build their parameters with
                    tf.gather_nd at import)

In stock and patched mode only the `select` lines of --tso-selection run (the
rest is deselected), once the file is known to be recorded for the installed
versions of --tso-packages (distribution names) and to name only tests that
exist. --tso-results writes
JSON: each test's outcome, the first line of its error, and the patched names
it called in this run (the recorder wraps whatever the names are bound to, so
in patched mode it sees the plugin's functions being called).

Keras's conftest is not in its wheel; all it adds for the TensorFlow backend
is the `requires_trainable_backend` mark (nothing to skip: TensorFlow trains),
registered here. JAX is not installed: Keras's math_test.py imports
`jax.numpy` at module level, so with --tso-jax-stub a stub `jax` is
importable while the files are collected, and only then; a test that
touches the stub, or imports a module that is not installed when it runs
(jax, torch), is left out with that reason.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types

os.environ.setdefault("KERAS_BACKEND", "tensorflow")  # before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402

SELECTION_FORMAT = "2"

_current = [None]  # what runs now: a test's node id, or "<import of FILE>"
_reached = {}  # node id (or "<import of FILE>") -> patched names it called
_stub_touched = set()  # node ids that touched the jax stub
_results = {}  # node id -> {"outcome", "error", "cause", "missing"?}
_methods = {}  # node id -> FILE::CLASS::METHOD it was generated from
_collection_errors = {}  # file -> first line of its error


def pytest_addoption(parser):
    group = parser.getgroup("tso_suite", "a client library's tests against tf_scatter_ops")
    group.addoption("--tso-mode", choices=("stock", "patched", "record"), required=True)
    group.addoption("--tso-suite", required=True, help="the suite's name (tools/client_suites.py)")
    group.addoption("--tso-selection", required=True,
                    help="the selection file: read (stock, patched) or written (record)")
    group.addoption("--tso-packages", required=True,
                    help="comma-separated distributions whose versions a selection is valid for")
    group.addoption("--tso-jax-stub", action="store_true",
                    help="a stub jax module while the files are collected")
    group.addoption("--tso-results", help="write the outcomes as JSON to this file")


# --- the jax stub -----------------------------------------------------------

class JaxStubError(ModuleNotFoundError):
    """What any attribute of the stub raises."""


class _JaxStub(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        _stub_touched.add(_current[0])
        raise JaxStubError(f"JAX is not installed ({self.__name__}.{attr} is a stub)", name="jax")


class _JaxStubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "jax" or fullname.startswith("jax."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _JaxStub(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def _missing_module(nodeid, excinfo):
    """The top-level module a failed test needed and could not import, or None."""
    if nodeid in _stub_touched:
        return "jax"
    e, seen = excinfo.value, set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, ModuleNotFoundError) and e.name:
            return e.name.split(".")[0]
        e = e.__cause__ or e.__context__
    return None


# --- recording calls of the patched names -----------------------------------

def _record_calls():
    """Wraps whatever each patched name is bound to now (TensorFlow's function,
    or ours once patched) so that a call notes what is running."""
    import functools

    from tf_scatter_ops import patch

    for owner, table, prefix in patch._modules():
        for name in table:
            function = getattr(owner, name)
            if isinstance(owner, type):  # the plain function, not a bound method
                function = next(c.__dict__[name] for c in owner.__mro__ if name in c.__dict__)

            def recorder(*args, _function=function, _name=prefix + name, **kwargs):
                _reached.setdefault(_current[0], set()).add(_name)
                return _function(*args, **kwargs)
            setattr(owner, name, functools.wraps(function)(recorder))


# --- the selection file -----------------------------------------------------

def installed_versions(packages):
    """{distribution: installed version} (without importing anything)."""
    from importlib import metadata
    return {p: metadata.version(p) for p in packages}


def _packages(config):
    return [p for p in config.getoption("--tso-packages").split(",") if p]


def read_selection(path):
    """{"header": {key: value}, "select": {id: [names]}, "exclude": {id or
    FILE::CLASS::METHOD: reason}}; select and exclude lines are
    tab-separated (node ids may hold spaces)."""
    header, select, exclude = {}, {}, {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith(("select\t", "exclude\t")):
                kind, nodeid, rest = line.split("\t", 2)
                (select if kind == "select" else exclude)[nodeid] = (
                    rest.split(",") if kind == "select" else rest)
            else:
                key, _, value = line.partition(":")
                header[key.strip()] = value.strip()
    return {"header": header, "select": select, "exclude": exclude}


def _at_import():
    return {k: v for k, v in _reached.items() if isinstance(k, str) and k.startswith("<import of ")}


def _exclusions():
    """{node id: reason} of the tests left out, then grouped: a method all of
    whose variants are left out for one reason is one entry."""
    reasons = {}
    for nodeid, entry in _results.items():
        if entry.get("missing"):
            reasons[nodeid] = f"needs {'JAX' if entry['missing'] == 'jax' else entry['missing']} (not installed)"
        elif entry["outcome"] == "skipped":
            reasons[nodeid] = f"skipped here: {entry['error'].removeprefix('Skipped: ')}"
    by_method = {}
    for nodeid in _results:
        by_method.setdefault(_methods.get(nodeid, nodeid), []).append(nodeid)
    grouped = {}
    for method, nodeids in by_method.items():
        found = {reasons.get(n) for n in nodeids}
        if len(nodeids) > 1 and len(found) == 1 and None not in found:
            grouped[method] = f"{found.pop()} (all {len(nodeids)} variants)"
        else:
            grouped.update((n, reasons[n]) for n in nodeids if n in reasons)
    return reasons, grouped


def _write_selection(path, files, suite, packages):
    versions = installed_versions(packages)
    reasons, excluded = _exclusions()
    selected = sorted(n for n in _results if _reached.get(n) and n not in reasons)
    counts = {}
    for entry in _results.values():
        counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
    with open(path, "w") as f:
        f.write(
            f"# The {suite} suite: the tests that call a name tf_scatter_ops.patch_tensorflow()\n"
            "# replaces, directly or through the library, found by\n"
            f"# `tools/client_suites.py record {suite}`: it runs the files below whole on stock\n"
            "# TensorFlow with each of those names wrapped by a recorder. `make\n"
            "# ci-client-suites` runs the `select` lines, stock and patched; `exclude` lines\n"
            "# are tests left out, with the reason (one line for a method when all its\n"
            "# variants are). Node ids are relative to site-packages; fields are separated\n"
            "# by tabs. The runner re-records when the versions below are not the installed\n"
            "# ones.\n")
        f.write(f"format: {SELECTION_FORMAT}\n")
        f.write(f"suite: {suite}\n")
        for key in packages:
            f.write(f"{key}: {versions[key]}\n")
        f.write(f"files: {' '.join(files)}\n")
        f.write("recorded: " + ", ".join(f"{counts[k]} {k}" for k in sorted(counts)) +
                f"; {len(selected)} selected, {len(reasons)} excluded\n")
        for where in sorted(_at_import()):
            f.write(f"# called at import: {where[11:-1]}: {','.join(sorted(_reached[where]))}\n")
        for nodeid in selected:
            f.write(f"select\t{nodeid}\t{','.join(sorted(_reached[nodeid]))}\n")
        for nodeid in sorted(excluded):
            f.write(f"exclude\t{nodeid}\t{excluded[nodeid]}\n")
        for path in sorted(_collection_errors):  # stock TensorFlow cannot import it here
            f.write(f"exclude\t{path}\tdoes not import: {_collection_errors[path]}\n")


# --- hooks ------------------------------------------------------------------

def _absl_flags_parsed():
    """absltest's test cases (TF-GNN's, TFRS's, tf.test.TestCase) read absl
    flags (--test_tmpdir) that absltest.main() parses; under pytest nothing
    does, and parsing sys.argv would meet pytest's options. The flags keep
    their defaults."""
    try:
        from absl import flags
    except ImportError:
        return
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "requires_trainable_backend: Keras's mark; the TensorFlow backend trains, "
        "so nothing is skipped")
    config._tso_mode = config.getoption("--tso-mode")
    config._tso_jax_stub = config.getoption("--tso-jax-stub")
    _absl_flags_parsed()
    import tf_scatter_ops
    if config._tso_mode == "patched":
        tf_scatter_ops.patch_tensorflow()
    _record_calls()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    finder = (None if not session.config._tso_jax_stub or importlib.util.find_spec("jax")
              else _JaxStubFinder())
    if finder:
        sys.meta_path.insert(0, finder)
    try:
        return (yield)
    finally:
        if finder:  # a test that imports jax when it runs gets ModuleNotFoundError
            sys.meta_path.remove(finder)
            for name in [n for n in sys.modules if n == "jax" or n.startswith("jax.")]:
                del sys.modules[name]


def pytest_collectstart(collector):
    if isinstance(collector, pytest.Module):
        _current[0] = f"<import of {collector.nodeid}>"


def pytest_collectreport(report):
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(report.longrepr)
        lines = text.strip().splitlines() or [""]
        errors = [line[1:].strip() for line in lines if line.startswith("E ")]
        _collection_errors[report.nodeid] = errors[-1] if errors else lines[0]
    _current[0] = None


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        method = getattr(getattr(item, "obj", None), "__wrapped__", None)
        if method is not None and item.cls is not None:
            _methods[item.nodeid] = f"{item.nodeid.split('::')[0]}::{item.cls.__name__}::{method.__name__}"
    if config._tso_mode == "record":
        return
    path = config.getoption("--tso-selection")
    selection = read_selection(path)
    packages = _packages(config)
    recorded = {k: selection["header"].get(k) for k in packages}
    installed = installed_versions(packages)
    if selection["header"].get("format") != SELECTION_FORMAT or recorded != installed:
        raise pytest.UsageError(
            f"{path} was recorded for {recorded}, this is {installed}: "
            "re-record it with tools/client_suites.py record")
    wanted = selection["select"]
    collected = {item.nodeid for item in items}
    missing = sorted(n for n in set(wanted) - collected if n.split("::")[0] not in _collection_errors)
    if missing:
        raise pytest.UsageError(
            f"{len(missing)} tests of {path} were not collected (e.g. {missing[0]}): "
            "re-record it with tools/client_suites.py record")
    for nodeid in set(wanted) - collected:  # their file did not import
        _results[nodeid] = {"outcome": "failed",
                            "error": f"[collection] {_collection_errors[nodeid.split('::')[0]]}"}
    deselected = [item for item in items if item.nodeid not in wanted]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = [item for item in items if item.nodeid in wanted]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current[0] = item.nodeid
    try:
        return (yield)
    finally:
        _current[0] = None


def pytest_runtest_makereport(item, call):
    entry = _results.setdefault(item.nodeid, {"outcome": "passed", "error": ""})
    if call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception):
        missing = _missing_module(item.nodeid, call.excinfo)
        if missing:
            entry["missing"] = missing


def _summary(message):
    """(the error's first line, the line that names the cause when the first
    is only a heading): TensorFlow's "Graph execution error:" lists where the
    failing node was defined, then says what went wrong."""
    lines = [line.strip() for line in message.strip().splitlines()]
    first = lines[0] if lines else ""
    if not first.endswith(":"):
        return first, ""
    rest = lines[1:]
    files = [i for i, line in enumerate(rest) if line.startswith('File "')]
    after = rest[files[-1] + 1:] if files else rest
    cause = next((line for line in after if line and not line.startswith("[[")), "")
    return first, cause


def pytest_runtest_logreport(report):
    entry = _results.setdefault(report.nodeid, {"outcome": "passed", "error": ""})
    if report.failed and entry["outcome"] != "failed":
        entry["outcome"] = "failed"
        crash = getattr(report.longrepr, "reprcrash", None)
        entry["error"], entry["cause"] = _summary(crash.message if crash is not None else str(report.longrepr))
        if report.when != "call":
            entry["error"] = f"[{report.when}] {entry['error']}"
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"
        if isinstance(report.longrepr, tuple):
            entry["error"] = report.longrepr[2]


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    for nodeid, entry in _results.items():
        entry["reached"] = sorted(_reached.get(nodeid, ()))
    if config._tso_mode == "record" and exitstatus in (0, 1):
        files = sorted(os.path.relpath(os.path.abspath(a), str(config.rootpath))
                       for a in config.args)
        _write_selection(config.getoption("--tso-selection"), files,
                         config.getoption("--tso-suite"), _packages(config))
    results = config.getoption("--tso-results")
    if results:
        with open(results, "w") as f:
            json.dump({"mode": config._tso_mode,
                       "versions": installed_versions(_packages(config)),
                       "collection_errors": _collection_errors,
                       "at_import": {k: sorted(v) for k, v in _at_import().items()},
                       "tests": _results}, f, indent=1, sort_keys=True)
