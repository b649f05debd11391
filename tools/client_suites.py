"""Client libraries' own tests as suites for the patch: every selected test
that passes on stock TensorFlow must pass under
tf_scatter_ops.patch_tensorflow() too.

    python tools/client_suites.py record [SUITE ...]  # run the files whole, write the selections
    python tools/client_suites.py check [SUITE ...]   # run the selections stock and patched

SUITES (below) says, for each library, the venv it runs in, the test files
(from the library's wheel) and the packages whose versions a selection is
valid for. Keras runs in .venv; TF-GNN and TensorFlow Recommenders run with
tf-keras (TF_USE_LEGACY_KERAS=1) in build/clients-venv, a venv over .venv's
packages that adds the libraries of tests/client_suites/requirements.txt
(tools/client_venv.sh makes it, and keeps it while that file is unchanged).

`record` runs a suite's files on stock TensorFlow with the pytest plugin
tests/client_suites/tso_suite.py, which wraps every name patch_tensorflow()
replaces with a recorder, and writes tests/client_suites/<suite>.txt: the tests
that called one of them (directly or through the library), and those left
out with a reason (a module that is not installed, such as JAX; skipped
here).

`check` (`make ci-client-suites`, part of `make test`) runs each suite's
selected tests patched, as two processes at once (the files split in two
halves of about as many tests), then runs the tests that did not pass
patched again, stock and patched at once on that smaller selection (so both
see the same tests run before them: some of the libraries' tests pass or
fail with what ran before them in the process). A test that passes patched
needs no stock run to say it is no regression, and this halves the suites'
time. It prints the counts, those of the tests whose names hold "jit" (XLA)
apart, and the tests that pass stock and fail patched, with the first line
of each error; it fails when there is one. A selection recorded for other
versions than the installed ones is recorded again (under --out) first, and
the check says so. Logs and results go to --out/SUITE.
"""

import argparse
import collections
import glob
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE_DIR = os.path.join(ROOT, "tests", "client_suites")
MAIN_PY = os.path.join(ROOT, ".venv", "bin", "python")
CLIENTS_PY = os.path.join(ROOT, "build", "clients-venv", "bin", "python")
PASS_TIMEOUT = 1500  # seconds, each pytest run

sys.path.insert(0, SUITE_DIR)
import tso_suite  # noqa: E402  (the selection file's reader; imports no TensorFlow)

# files: the test files, relative to site-packages (a function of that
# folder); checks: the files are ours (tests/client_suites/*_checks.py, for
# a library whose wheel ships no tests), each test comparing stock and
# patched in its own process; they run once and must all pass.
Suite = collections.namedtuple("Suite", "python packages files env jax_stub checks",
                               defaults=(False,))
LEGACY_KERAS = {"TF_USE_LEGACY_KERAS": "1"}


def _wheel_tests(package):
    """Every test file the package's wheel ships, relative to site-packages."""
    def files(site):
        found = glob.glob(os.path.join(site, package, "**", "*_test.py"), recursive=True)
        return sorted(os.path.relpath(f, site) for f in found)
    return files


SUITES = {
    # Keras's ops tests (core, numpy, math and nn), with the TensorFlow backend
    "keras": Suite(MAIN_PY, ("keras", "tensorflow"),
                   lambda site: ["keras/src/ops/core_test.py", "keras/src/ops/math_test.py",
                                 "keras/src/ops/nn_test.py", "keras/src/ops/numpy_test.py"],
                   {"KERAS_BACKEND": "tensorflow"}, True),
    "tf-gnn": Suite(CLIENTS_PY, ("tensorflow-gnn", "tf-keras", "tensorflow"),
                    _wheel_tests("tensorflow_gnn"), LEGACY_KERAS, False),
    "tfrs": Suite(CLIENTS_PY, ("tensorflow-recommenders", "tf-keras", "tensorflow"),
                  _wheel_tests("tensorflow_recommenders"), LEGACY_KERAS, False),
    "spektral": Suite(CLIENTS_PY, ("spektral", "tf-keras", "tensorflow"),
                      lambda site: [os.path.join(SUITE_DIR, "spektral_checks.py")],
                      LEGACY_KERAS, False, True),
    "tf-keras": Suite(CLIENTS_PY, ("tf-keras", "tensorflow"),
                      lambda site: [os.path.join(SUITE_DIR, "tf_keras_checks.py")],
                      LEGACY_KERAS, False, True),
}


def site_packages(suite):
    """The suite's venv's site-packages folder."""
    return subprocess.run([suite.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()


def installed_versions(suite):
    out = subprocess.run(
        [suite.python, "-c", "import json, sys; from importlib import metadata; "
         "print(json.dumps({p: metadata.version(p) for p in sys.argv[1:]}))", *suite.packages],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def selection_path(name):
    return os.path.join(SUITE_DIR, f"{name}.txt")


def pytest_command(name, suite, mode, selection, results, site, files):
    # record: tests that fail for want of a module, with tracebacks into
    # long files (Keras's numpy_test.py: 12k lines), take pytest a fifth of a
    # second each to print
    return [suite.python, "-m", "pytest", "-c", os.path.join(SUITE_DIR, "pytest.ini"),
            f"--rootdir={site}", "-p", "tso_suite", f"--tso-mode={mode}", f"--tso-suite={name}",
            f"--tso-packages={','.join(suite.packages)}", f"--tso-selection={selection}",
            f"--tso-results={results}", "-q", "-rN",
            "--tb=no" if mode == "record" else "--tb=short", "--continue-on-collection-errors"] + (
            ["--tso-jax-stub"] if suite.jax_stub else []) + [os.path.join(site, f) for f in files]


def start(name, suite, mode, selection, out, site, files, run=None):
    """A pytest run of `files` in its own process group, in a scratch folder
    of its own; `run` (default: mode) names its folder, log and results."""
    run = run or mode
    cwd = os.path.join(out, run)
    os.makedirs(cwd, exist_ok=True)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **suite.env,
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, SUITE_DIR, os.environ.get("PYTHONPATH")])))
    log = open(os.path.join(out, f"{run}.log"), "w")
    results = os.path.join(out, f"{run}.json")
    if os.path.exists(results):
        os.remove(results)
    process = subprocess.Popen(pytest_command(name, suite, mode, selection, results, site, files),
                               cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
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


def record(name, selection, out):
    suite = SUITES[name]
    os.makedirs(out, exist_ok=True)
    site = site_packages(suite)
    runs = {"record": start(name, suite, "record", selection, out, site, suite.files(site))}
    code = finish(runs)["record"]
    why = broken("record", code, out)
    if why:
        sys.exit(f"{name}: {why}")
    with open(os.path.join(out, "record.json")) as f:
        errors = json.load(f)["collection_errors"]
    if not os.path.exists(selection):
        sys.exit(f"{name} record: no selection written ({shown(out)}/record.log)")
    header = tso_suite.read_selection(selection)
    print(f"{name}: recorded {shown(selection)}: {header['header']['recorded']}")
    for path, why in sorted(errors.items()):  # excluded in the selection, with the reason
        print(f"  {path} does not import on stock TensorFlow here: {why}")


def shown(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def counts(tests):
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for entry in tests.values():
        c[entry["outcome"]] += 1
    return c


def fmt(c):
    return f"passed {c['passed']}, failed {c['failed']}, skipped {c['skipped']}"


def run_checks(name, out):
    """Runs a suite of our checks once; returns its problems."""
    suite = SUITES[name]
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    files = suite.files(None)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **suite.env,
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    with open(os.path.join(out, "checks.log"), "w") as log:
        try:
            code = subprocess.run(
                [suite.python, "-m", "pytest", "-c", os.path.join(SUITE_DIR, "pytest.ini"),
                 f"--rootdir={SUITE_DIR}", "-q", "-rfs", "--tb=short", *files],
                cwd=out, env=env, stdout=log, stderr=subprocess.STDOUT,
                timeout=PASS_TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            code = None
    with open(os.path.join(out, "checks.log")) as f:
        text = f.read()
    summary = [line for line in text.splitlines() if line.startswith(("FAILED", "SKIPPED"))]
    last = (text.strip().splitlines() or ["(no output)"])[-1].strip("= ")
    versions = installed_versions(suite)
    print(f"{name} checks ({', '.join(f'{k} {versions[k]}' for k in suite.packages)}; "
          f"{', '.join(shown(f) for f in files)}): {last}")
    for line in summary:
        print(f"  {line}")
    print(f"  log: {shown(os.path.join(out, 'checks.log'))}; {time.monotonic() - started:.0f} s",
          flush=True)
    if code != 0:
        return [f"{name}: the checks failed (exit {code}); see {shown(os.path.join(out, 'checks.log'))}"]
    return []


def split_files(wanted, parts=2):
    """The selected tests' files in `parts` groups of about as many tests
    (the largest file first into the group with the fewest)."""
    per_file = collections.Counter(n.split("::")[0] for n in wanted)
    groups = [[] for _ in range(parts)]
    sizes = [0] * parts
    for path, size in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0])):
        i = sizes.index(min(sizes))
        groups[i].append(path)
        sizes[i] += size
    return [g for g in groups if g]


def write_selection(selection, path, select):
    """A copy of `selection`'s header with only the `select` lines given."""
    with open(selection) as f:
        header = [line for line in f if not line.startswith(("select\t", "exclude\t"))]
    with open(path, "w") as f:
        f.writelines(header)
        for nodeid, names in sorted(select.items()):
            f.write(f"select\t{nodeid}\t{','.join(names)}\n")


def collect(runs, codes, out, wanted):
    """The runs' results merged, {nodeid: entry}, a selected test that did
    not run counting as failed; or the list of why a run gave none."""
    problems = [why for run, code in codes.items() if (why := broken(run, code, out))]
    if problems:
        return problems
    tests = {}
    for run in runs:
        with open(os.path.join(out, f"{run}.json")) as f:
            tests.update(json.load(f)["tests"])
    return {n: tests.get(n, {"outcome": "failed", "error": "did not run", "reached": []})
            for n in wanted}


def check(name, selection, out):
    """Runs one suite's selection patched, then the tests that did not pass
    patched again, stock and patched; returns its problems (a list of lines,
    empty when every test that passes stock passes patched)."""
    suite = SUITES[name]
    if suite.checks:
        return run_checks(name, out)
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    site = site_packages(suite)
    header = tso_suite.read_selection(selection)["header"]
    versions = installed_versions(suite)
    stale = [f"{k} {header.get(k)} (installed: {versions[k]})" for k in suite.packages
             if header.get(k) != versions[k]]
    if header.get("format") != tso_suite.SELECTION_FORMAT:
        stale.append(f"format {header.get('format')} (this runner reads {tso_suite.SELECTION_FORMAT})")
    files = sorted(suite.files(site))
    if header.get("files", "").split() != files:
        stale.append(f"other files ({len(files)} now)")
    if stale:
        fresh = os.path.join(out, "selection.txt")
        print(f"{name}: {shown(selection)} was recorded for {', '.join(stale)}; "
              f"recording again into {shown(fresh)} (commit a new one with "
              f"`tools/client_suites.py record {name}`)")
        record(name, fresh, out)
        selection = fresh
    wanted = tso_suite.read_selection(selection)["select"]

    # Patched: the selected files in two halves, run at once.
    halves = split_files(wanted)
    runs = {}
    for i, half in enumerate(halves):
        part = os.path.join(out, f"patched-{i}.txt")
        write_selection(selection, part, {n: wanted[n] for n in wanted if n.split("::")[0] in half})
        runs[f"patched-{i}"] = start(name, suite, "patched", part, out, site, sorted(half),
                                     run=f"patched-{i}")
    patched = collect(runs, finish(runs), out, wanted)
    if isinstance(patched, list):
        return [f"{name}: {why}" for why in patched]

    # The tests that did not pass: again, stock and patched at once on the
    # same selection, so that both see the same tests before them (some of
    # the libraries' tests pass or fail with what ran before them in the
    # process).
    again = {n: wanted[n] for n in wanted if patched[n]["outcome"] != "passed"}
    stock, retried = {}, {}
    if again:
        part = os.path.join(out, "again.txt")
        write_selection(selection, part, again)
        again_files = sorted({n.split("::")[0] for n in again})
        runs = {mode: start(name, suite, mode, part, out, site, again_files, run=f"{mode}-again")
                for mode in ("stock", "patched")}
        codes = finish(runs)
        results = {}
        for mode in runs:
            results[mode] = collect({f"{mode}-again": runs[mode]}, {f"{mode}-again": codes[mode]},
                                    out, again)
            if isinstance(results[mode], list):
                return [f"{name}: {why}" for why in results[mode]]
        stock, retried = results["stock"], results["patched"]
    jit = {n for n in wanted if "jit" in n.lower()}

    print(f"{name} suite: {len(wanted)} tests of {len(files)} files "
          f"({', '.join(f'{k} {versions[k]}' for k in suite.packages)}) that call a patched "
          f"name ({shown(selection)})")
    for mode, tests, of in (("patched", patched, "the selected, in two halves"),
                            ("stock", stock, "those not passing patched, again"),
                            ("patched", retried, "the same, again")):
        if not tests:
            print(f"  {mode:8} again: not run, every selected test passed patched")
            break
        plain = {n: e for n, e in tests.items() if n not in jit}
        xla = {n: e for n, e in tests.items() if n in jit}
        print(f"  {mode:8} {fmt(counts(tests))}   (without jit: {fmt(counts(plain))}; "
              f"jit: {fmt(counts(xla))}; {len(tests)} tests: {of})")
    reached = sum(1 for n in wanted if patched[n]["reached"])
    print(f"  patched: {reached} of {len(wanted)} tests called the plugin's functions")
    regressions = sorted(n for n in stock
                         if stock[n]["outcome"] == "passed" and retried[n]["outcome"] != "passed")
    print(f"  pass stock and fail patched: {len(regressions)}")
    for n in regressions:
        entry = retried[n]
        cause = f" ... {entry['cause']}" if entry.get("cause") else ""
        print(f"    {n}\n      {entry['outcome']}: {entry['error']}{cause}")
    print(f"  logs and results: {shown(out)}; {time.monotonic() - started:.0f} s", flush=True)
    if reached == 0 and wanted:
        return [f"{name}: no selected test called the plugin: the patch did not apply"]
    if regressions:
        return [f"{name}: {len(regressions)} tests pass stock and fail patched"]
    return []


def _terminate(signum, frame):
    sys.exit(128 + signum)  # so that finish() kills the pytest runs


def main():
    signal.signal(signal.SIGTERM, _terminate)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("record", "check"))
    parser.add_argument("suites", nargs="*", metavar="SUITE",
                        help=f"of {', '.join(SUITES)} (default: all)")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "client_suites"),
                        help="logs, results and fresh selections, under OUT/SUITE "
                             "(default: %(default)s)")
    args = parser.parse_args()
    unknown = [n for n in args.suites if n not in SUITES]
    if unknown:
        parser.error(f"unknown suites {unknown}: the suites are {', '.join(SUITES)}")
    names = args.suites or list(SUITES)
    if any(SUITES[n].python == CLIENTS_PY for n in names):
        subprocess.run([os.path.join(ROOT, "tools", "client_venv.sh")], check=True)
    problems = []
    for name in names:
        out = os.path.join(os.path.abspath(args.out), name)
        if args.command == "record":
            if not SUITES[name].checks:  # ours select themselves
                record(name, selection_path(name), out)
        else:
            problems += check(name, selection_path(name), out)
    if problems:
        sys.exit("client suites: " + "\n".join(problems))


if __name__ == "__main__":
    main()
