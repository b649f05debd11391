"""Keras's own ops tests (shipped in its wheel) as a client's suite for the
patch: every selected test that passes on stock TensorFlow must pass under
tf_scatter_ops.patch_tensorflow() too.

    python tools/keras_suite.py record   # run the files whole, write the selection
    python tools/keras_suite.py check    # run the selection stock and patched, compare

`record` runs FILES (below) on stock TensorFlow with the pytest plugin
tests/keras_suite/tso_keras.py, which wraps every name patch_tensorflow()
replaces with a recorder, and writes tests/keras_suite/selection.txt: the
tests that called one of them (directly or through Keras), and those left out
with a reason (a module that is not installed, such as JAX; skipped here).

`check` (`make ci-keras-suite`, part of `make test`) runs the selected tests
twice, stock and patched, as two processes at once, and prints both counts,
those of the tests whose names hold "jit" (XLA) apart, and the tests that pass
stock and fail patched, with the first line of each error; it fails when there
is one. A selection recorded for another Keras or TensorFlow than the
installed ones is recorded again (under --out) first, and the check says so.
Logs and results go to --out.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(ROOT, "tests", "keras_suite")
SELECTION = os.path.join(SUITE, "selection.txt")
FILES = ["keras/src/ops/core_test.py", "keras/src/ops/numpy_test.py",
         "keras/src/ops/math_test.py", "keras/src/ops/nn_test.py"]
PASS_TIMEOUT = 1200  # seconds, each pytest run

sys.path.insert(0, SUITE)
import tso_keras  # noqa: E402  (the selection file's reader; imports no TensorFlow)


def site_packages():
    """The folder that holds the keras package, without importing it."""
    import importlib.util
    spec = importlib.util.find_spec("keras")
    return os.path.dirname(os.path.dirname(spec.origin))


def installed_versions():
    out = subprocess.run(
        [sys.executable, "-c", "import json, keras, tensorflow as tf; "
         "print(json.dumps({'keras': keras.__version__, 'tensorflow': tf.__version__}))"],
        env=dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3"),
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def pytest_command(mode, selection, results):
    sp = site_packages()
    # record: thousands of tests fail for want of JAX, and tracebacks into
    # numpy_test.py (12k lines) take pytest a fifth of a second each
    return [sys.executable, "-m", "pytest", "-c", os.path.join(SUITE, "pytest.ini"),
            f"--rootdir={sp}", "-p", "tso_keras", f"--tso-mode={mode}",
            f"--tso-selection={selection}", f"--tso-results={results}", "-q", "-rN",
            "--tb=no" if mode == "record" else "--tb=short", "--continue-on-collection-errors"] + [
        os.path.join(sp, f) for f in FILES]


def start(mode, selection, out):
    """A pytest run in its own process group, in a scratch folder of its own."""
    cwd = os.path.join(out, mode)
    os.makedirs(cwd, exist_ok=True)
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, SUITE, os.environ.get("PYTHONPATH")])))
    log = open(os.path.join(out, f"{mode}.log"), "w")
    results = os.path.join(out, f"{mode}.json")
    if os.path.exists(results):
        os.remove(results)
    process = subprocess.Popen(pytest_command(mode, selection, results), cwd=cwd, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return process, log, results


def finish(runs, timeout=PASS_TIMEOUT):
    """Waits for the runs ({mode: (process, log, results)}); kills a run's
    process group once it is done or past the time limit. {mode: exit code}."""
    deadline = time.monotonic() + timeout
    codes = {}
    try:
        for mode, (process, log, _) in runs.items():
            try:
                codes[mode] = process.wait(max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                codes[mode] = None
    finally:
        for process, log, _ in runs.values():
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
            log.close()
    return codes


def broken(mode, code, out):
    """Why a pytest run gave no usable results, or None."""
    if code is None:
        return f"{mode}: still running after {PASS_TIMEOUT} s (killed)"
    if code not in (0, 1) or not os.path.exists(os.path.join(out, f"{mode}.json")):
        with open(os.path.join(out, f"{mode}.log")) as f:
            tail = f.read()[-3000:]
        return f"{mode}: pytest exited with {code}; the end of {out}/{mode}.log:\n{tail}"
    return None


def record(selection, out):
    os.makedirs(out, exist_ok=True)
    runs = {"record": start("record", selection, out)}
    code = finish(runs)["record"]
    why = broken("record", code, out)
    if why:
        sys.exit(why)
    with open(os.path.join(out, "record.json")) as f:
        errors = json.load(f)["collection_errors"]
    if errors or not os.path.exists(selection):
        sys.exit(f"record: files did not import: {errors}")
    header = tso_keras.read_selection(selection)
    print(f"recorded {selection}: {header['header']['recorded']}")


def shown(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def counts(tests):
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for entry in tests.values():
        c[entry["outcome"]] += 1
    return c


def fmt(c):
    return f"passed {c['passed']}, failed {c['failed']}, skipped {c['skipped']}"


def check(selection, out):
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    header = tso_keras.read_selection(selection)["header"]
    recorded = {k: header.get(k) for k in tso_keras.VERSIONED}
    versions = installed_versions()
    stale = [f"{k} {recorded[k]} (installed: {versions[k]})" for k in tso_keras.VERSIONED
             if recorded[k] != versions[k]]
    if header.get("format") != tso_keras.SELECTION_FORMAT:
        stale.append(f"format {header.get('format')} (this runner reads {tso_keras.SELECTION_FORMAT})")
    if header.get("files", "").split() != sorted(FILES):
        stale.append(f"files {header.get('files')} (this runner runs {' '.join(sorted(FILES))})")
    if stale:
        fresh = os.path.join(out, "selection.txt")
        print(f"keras suite: {shown(selection)} was recorded for {', '.join(stale)}; "
              f"recording again into {fresh} (commit a new one with `tools/keras_suite.py record`)")
        record(fresh, out)
        selection = fresh
    wanted = tso_keras.read_selection(selection)["select"]

    runs = {mode: start(mode, selection, out) for mode in ("stock", "patched")}
    codes = finish(runs)
    problems = [why for mode, code in codes.items() if (why := broken(mode, code, out))]
    if problems:
        sys.exit("keras suite: " + "\n".join(problems))
    results = {}
    for mode in runs:
        with open(os.path.join(out, f"{mode}.json")) as f:
            results[mode] = json.load(f)
        for nodeid in wanted:  # a selected test that did not run has failed
            results[mode]["tests"].setdefault(nodeid, {"outcome": "failed", "error": "did not run",
                                                       "reached": []})
    stock, patched = results["stock"]["tests"], results["patched"]["tests"]
    jit = {n for n in wanted if "jit" in n.lower()}

    print(f"keras suite: {len(wanted)} tests of Keras {versions['keras']}'s "
          f"{', '.join(os.path.basename(f) for f in FILES)} that call a patched name "
          f"({shown(selection)})")
    for mode, tests in (("stock", stock), ("patched", patched)):
        plain = {n: e for n, e in tests.items() if n in wanted and n not in jit}
        xla = {n: e for n, e in tests.items() if n in jit}
        print(f"  {mode:8} {fmt(counts({n: tests[n] for n in wanted}))}"
              f"   (without jit: {fmt(counts(plain))}; jit: {fmt(counts(xla))})")
    reached = sum(1 for n in wanted if patched[n]["reached"])
    print(f"  patched: {reached} of {len(wanted)} tests called the plugin's functions")
    regressions = sorted(n for n in wanted
                         if stock[n]["outcome"] == "passed" and patched[n]["outcome"] != "passed")
    fixed = sorted(n for n in wanted
                   if stock[n]["outcome"] == "failed" and patched[n]["outcome"] == "passed")
    for n in fixed:
        print(f"  fails stock, passes patched: {n}")
    print(f"  pass stock and fail patched: {len(regressions)}")
    for n in regressions:
        entry = patched[n]
        cause = f" ... {entry['cause']}" if entry.get("cause") else ""
        print(f"    {n}\n      {entry['outcome']}: {entry['error']}{cause}")
    print(f"  logs and results: {shown(out)}; "
          f"{time.monotonic() - started:.0f} s")
    if reached == 0 and wanted:
        sys.exit("keras suite: no selected test called the plugin: the patch did not apply")
    if regressions:
        sys.exit(f"keras suite: {len(regressions)} tests pass stock and fail patched")


def _terminate(signum, frame):
    sys.exit(128 + signum)  # so that finish() kills the pytest runs


def main():
    signal.signal(signal.SIGTERM, _terminate)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("record", "check"))
    parser.add_argument("--selection", default=SELECTION, help="the selection file (default: %(default)s)")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "keras_suite"),
                        help="logs, results and a fresh selection (default: %(default)s)")
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    if args.command == "record":
        record(os.path.abspath(args.selection), out)
    else:
        check(os.path.abspath(args.selection), out)


if __name__ == "__main__":
    main()
