"""TensorFlow's own kernel tests for the segment family and the embedding
lookups, run on stock TensorFlow and against the plugin, and compared:

    python tools/tf_kernel_tests.py PATH/segment_reduction_ops_test.py PATH/embedding_ops_test.py
    python tools/tf_kernel_tests.py --test SegmentReductionOpTest::testValues FILE  # one test
    python tools/tf_kernel_tests.py --stock-only FILE

(`make tf-kernel-tests TF_TESTS="PATH ..."`, mk/tf_kernel_tests.mk). The test
files are TensorFlow's (tensorflow/python/kernel_tests/...), fetched by
whoever runs this: they are reference material and never part of this
repository, so CI does not run this.

Each file runs twice, under pytest (which collects tf.test.TestCase
classes; a test decorated to run in graph and eager mode runs both inside
one test), each run in processes of its own:

stock    TensorFlow as installed.
patched  before pytest imports the test file: tf_scatter_ops.patch_tensorflow()
         (the tf.* names), and TensorFlow's internal modules, which the
         kernel tests call: every math_ops.<name> of the plugin's segment
         functions (segment_*, unsorted_segment_*, v1's sparse_segment_*,
         and sparse_segment_*_with_num_segments on the plugin's
         sparse_segment_*), and embedding_ops.embedding_lookup /
         embedding_lookup_sparse (v1's signatures: nn.embedding_lookup_v1,
         embedding_lookup_sparse_v1), each in TensorFlow's positional
         order, with inputs the plugin does not take (RaggedTensor,
         SparseTensor) going to TensorFlow's function, as the patch does
         (patch._with_fallback). TensorFlow's functions that call these
         module globals at call time follow: math_ops.sparse_segment_*_v2,
         embedding_ops.embedding_lookup_v2 / _sparse_v2 and
         safe_embedding_lookup_sparse(_v2), TensorFlow's own composition,
         which is left as it is. The *_grad ops stay TensorFlow's. tso.nn
         hands a lookup it does not read (a PartitionedVariable) to
         TensorFlow's functions through its module reference, which here is
         given TensorFlow's originals (else that hand-over would come back
         to the plugin).

A process that dies (SIGABRT from a CHECK, SIGSEGV) or a test that runs past
--timeout: that test is recorded as `crash` (or `timeout`), with the signal,
TensorFlow's fatal log line and the Python stack faulthandler printed (the
test file's line, and the plugin's, that made the call), and the run goes
on with the tests not yet run, in a new process (so does a process that
hangs between tests). Every process's output is kept under --out. A
library rebuilt while the patched run ran is reported: its results may
mix two builds.

The report: one row per test, stock and patched outcome (pass, fail, error,
skip, crash, timeout, missing), the number of calls the test made to the
patched functions, then the totals and each test that passes stock and not
patched, with the first lines of its failure. The exit status is 1 when
there is such a test that ALLOW below does not list; each ALLOW entry's
reason starts with the first cell of a row of the "Where it differs from
TensorFlow" tables of docs/api.md, which the runner checks.
"""

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIFFERENCES = os.path.join(ROOT, "docs", "api.md")
DIFFERENCES_SECTION = "## Where it differs from TensorFlow"

# Tests that may pass stock and fail patched: "FILE::CLASS::TEST" (FILE the
# test file's base name) -> "<first cell of a row of docs/api.md's 'Where it
# differs from TensorFlow' tables>: why this test meets that difference".
ALLOW = {
    "segment_reduction_ops_test.py::UnsortedSegmentTest::testBadNumSegments":
        "a segment output whose size overflows int64 (`num_segments=2**62`): the overflow is "
        "known when the graph is built, and raised there, not when it runs",
}

OUTCOMES = ("pass", "fail", "error", "skip", "crash", "timeout", "missing")
IMPORT_FAILED = 86  # the child's exit status when tf_scatter_ops does not import
IMPORT_RETRIES = 5  # waits of a minute each (the library being relinked)
START = "=== tf_kernel_tests: START "
LIBRARY = os.path.join("tf_scatter_ops", "_tf_scatter_ops.so")


# --------------------------------------------------------------------- patch
# (in the child process)

_calls = collections.Counter()  # "math_ops.segment_sum" -> calls, this test
_total_calls = collections.Counter()


def _counted(f, label):
    import functools

    @functools.wraps(f)
    def counted(*args, **kwargs):
        _calls[label] += 1
        _total_calls[label] += 1
        return f(*args, **kwargs)
    return counted


def apply_patch():
    """tso.patch_tensorflow(), and the plugin's functions in math_ops and
    embedding_ops (see the module's docstring). The names replaced."""
    import types

    import tensorflow as tf  # noqa: F401  (v2 behaviour, as the stock run)
    from tensorflow.python.ops import embedding_ops, math_ops

    import tf_scatter_ops as tso
    from tf_scatter_ops import nn, patch

    tso.patch_tensorflow()
    replaced = []

    def swap(module, label, name, ours):
        original = getattr(module, name)
        # TensorFlow's positional order, and its function for inputs ours do
        # not take (the plugin's own adapter, as for the tf.* names)
        adapted = patch._with_fallback(ours, _counted(original, f"{label}.{name} (TensorFlow's)"))
        setattr(module, name, _counted(adapted, f"{label}.{name}"))
        replaced.append(f"{label}.{name}")

    segment_names = sorted(n for n in tso.__all__ if "segment" in n and hasattr(math_ops, n))
    for name in segment_names:
        swap(math_ops, "math_ops", name, getattr(tso, name))
        if name.startswith("sparse_segment_") and hasattr(math_ops, name + "_with_num_segments"):
            swap(math_ops, "math_ops", name + "_with_num_segments", getattr(tso, name))

    stock_lookups = {name: getattr(embedding_ops, name)
                     for name in ("embedding_lookup", "embedding_lookup_sparse")}
    swap(embedding_ops, "embedding_ops", "embedding_lookup", nn.embedding_lookup_v1)
    swap(embedding_ops, "embedding_ops", "embedding_lookup_sparse", nn.embedding_lookup_sparse_v1)

    # tso.nn hands what it does not read to TensorFlow's lookups through its
    # module reference to embedding_ops: give it the originals
    class StockEmbeddingOps(types.ModuleType):
        def __getattr__(self, attr):
            return getattr(embedding_ops, attr)

    stock = StockEmbeddingOps("embedding_ops (TensorFlow's lookups)")
    for name, f in stock_lookups.items():
        setattr(stock, name, _counted(f, f"embedding_ops.{name} (TensorFlow's)"))
    if getattr(nn, "_embedding_ops", None) is not embedding_ops:
        raise RuntimeError("tf_scatter_ops.nn no longer reaches TensorFlow's lookups through "
                           "_embedding_ops: teach tools/tf_kernel_tests.py the new name")
    nn._embedding_ops = stock
    return replaced


class Recorder:
    """pytest plugin (the child's): each test's outcome as a JSON line, written
    as the test finishes, and its node id (in `current`, and a marker in the
    log) as it starts, for the parent to find the test a crash was in."""

    def __init__(self, state):
        self.state = state
        self.reports = {}
        self.results = open(os.path.join(state, "results.jsonl"), "a")

    def pytest_runtest_logstart(self, nodeid, location):
        _calls.clear()
        self.reports[nodeid] = []
        with open(os.path.join(self.state, "current"), "w") as f:
            f.write(nodeid)
        sys.stdout.flush()
        os.write(2, f"\n{START}{nodeid} ===\n".encode())

    def pytest_runtest_logreport(self, report):
        text = report.longreprtext if report.failed else ""
        if report.skipped and isinstance(report.longrepr, tuple):
            text = str(report.longrepr[2])
        self.reports.setdefault(report.nodeid, []).append(
            (report.when, report.outcome, text, bool(getattr(report, "wasxfail", False))))

    def pytest_runtest_logfinish(self, nodeid, location):
        reports = self.reports.pop(nodeid, [])
        outcome, message = "pass", ""
        for when, result, text, xfail in reports:
            if result == "failed":
                bad = "fail" if when == "call" else "error"
                if outcome not in ("fail", "error"):
                    outcome, message = bad, text
            elif result == "skipped" and outcome == "pass":
                outcome, message = ("fail" if xfail else "skip"), text
        self.results.write(json.dumps({"id": nodeid, "outcome": outcome, "message": message[-20000:],
                                       "calls": dict(_calls)}) + "\n")
        self.results.flush()

    def pytest_sessionfinish(self, session):
        with open(os.path.join(self.state, "calls.json"), "w") as f:
            json.dump(dict(_total_calls), f)


def child(mode, state, pytest_args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    import tensorflow  # noqa: F401  (both runs import it first: v2 behaviour)
    if mode == "patched":
        try:
            import tf_scatter_ops  # noqa: F401
        except Exception as e:  # noqa: BLE001  (the library missing or half-written)
            print(f"tf_kernel_tests: tf_scatter_ops did not import: {type(e).__name__}: {e}",
                  file=sys.stderr)
            return IMPORT_FAILED
        replaced = apply_patch()
        with open(os.path.join(state, "replaced.json"), "w") as f:
            json.dump(replaced, f)
    import pytest
    return pytest.main(pytest_args, plugins=[Recorder(state)])


# --------------------------------------------------------------------- runs
# (in the parent process)

def pytest_args(path):
    """pytest on TensorFlow's file alone: none of this repository's pytest
    settings or conftest, no cache written beside the file, no output
    captured (a crash's CHECK message goes to the log), and faulthandler's
    stack of a crash."""
    return ["-c", os.devnull, f"--rootdir={os.path.dirname(path)}", "--noconftest",
            "-p", "no:cacheprovider", "-s", "--tb=short", "-W", "ignore::DeprecationWarning"]


def child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    env.setdefault("CUDA_VISIBLE_DEVICES", "")  # CPU kernels on both sides
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def collect(path, out):
    """The file's test node ids, in pytest's order."""
    log = os.path.join(out, "collect.log")
    with open(log, "w") as f:
        code = subprocess.run([sys.executable, "-m", "pytest", *pytest_args(path), "--collect-only",
                               "-q", path], cwd=out, env=child_env(), stdout=f,
                              stderr=subprocess.STDOUT).returncode
    base = os.path.basename(path)
    with open(log) as f:
        ids = [line.strip() for line in f if line.startswith(base + "::")]
    if code != 0 or not ids:
        sys.exit(f"tf_kernel_tests: pytest could not collect {path} (exit {code}); see {log}")
    return ids


def crash_report(log, nodeid, code):
    """What a dead process left about the test it was in: the signal, the
    fatal lines and the Python stack (faulthandler) of the log after the
    test's start marker."""
    with open(log, errors="replace") as f:
        text = f.read()
    marker = f"{START}{nodeid} ==="
    text = text[text.rfind(marker) + len(marker):] if marker in text else text[-20000:]
    lines = [line for line in text.splitlines() if line.strip()]
    signame = (signal.Signals(-code).name if code is not None and code < 0
               and -code in signal.Signals._value2member_map_ else f"exit status {code}")
    fatal = [line for line in lines if re.match(r"^[F]\d{4} |.*Check failed|^terminate called|"
                                                r"^Fatal Python error|.*\] (Check|FATAL)", line)]
    stack = []
    for k, line in enumerate(lines):
        if line.startswith(("Current thread", "Thread 0x")) and "most recent call first" in line:
            stack = [s.strip() for s in lines[k + 1:k + 80] if s.startswith("  File")]
            # the test's frames: up to unittest's
            cut = next((j for j, s in enumerate(stack) if f"unittest{os.sep}case.py" in s), None)
            stack = stack[:cut]
            if line.startswith("Current thread"):
                break
    head = fatal[:3] or lines[-3:]
    where = ""
    frames = [re.match(r'File "(.*)", line (\d+) in (\w+)', f) for f in stack]
    frames = [f for f in frames if f]
    test = next((f for f in frames if f.group(1).endswith("_test.py")), None)
    ours = next((f for f in frames if f"{os.sep}tf_scatter_ops{os.sep}" in f.group(1)
                 and not os.path.basename(f.group(1)).startswith("_generated")), None)
    if test:
        where = f" in {os.path.basename(test.group(1))}:{test.group(2)} ({test.group(3)})"
    if ours:
        where += f", in {os.path.relpath(ours.group(1), ROOT)}:{ours.group(2)} ({ours.group(3)})"
    elif any(re.search(r"client.session\.py|eager.(execute|polymorphic_function)", f.group(1))
             for f in frames):
        where += ", at run time (the op ran in a session or function: no plugin frame)"
    return "\n".join([f"process died: {signame}{where}", *head,
                      "Python stack (most recent call first):", *stack[:30]]), lines[-80:]


def run_mode(path, mode, ids, out, timeout, selected):
    """{node id: result} of one file in one mode: processes one after another
    until every test in `ids` has run, crashed or timed out."""
    base = os.path.basename(path)
    folder = os.path.join(out, base.replace(".py", ""), mode)
    os.makedirs(folder, exist_ok=True)
    results, remaining, runs, import_failures = {}, list(ids), 0, 0
    while remaining:
        runs += 1
        state = tempfile.mkdtemp(prefix=f"run{runs}.", dir=folder)
        log = os.path.join(folder, f"run{runs}.log")
        # the first run: the file (or the selected tests); after a crash: the
        # tests not run yet, by node id
        targets = [path] if runs == 1 and not selected else [
            os.path.join(os.path.dirname(path), n) for n in remaining]
        with open(log, "w") as f:
            process = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--child", mode, "--state", state, "--",
                 *pytest_args(path), "-v", *targets],
                cwd=state, env=child_env(), stdout=f, stderr=subprocess.STDOUT,
                start_new_session=True)
            current, since, code = None, time.monotonic(), None
            while code is None:
                try:
                    code = process.wait(1)
                except subprocess.TimeoutExpired:
                    now = read(os.path.join(state, "current"))
                    if now != current:
                        current, since = now, time.monotonic()
                    elif time.monotonic() - since > timeout:
                        # a test past its time, or a process that hangs
                        # between tests (its tests not run yet run again)
                        os.killpg(process.pid, signal.SIGKILL)
                        process.wait()
                        code = "timeout" if current and current not in done(state) else "hung"
        finished = done(state)
        results.update({k: v for k, v in finished.items() if k in set(remaining)})
        current = read(os.path.join(state, "current"))
        if code == IMPORT_FAILED and not finished:
            import_failures += 1
            if import_failures > IMPORT_RETRIES:
                sys.exit(f"tf_kernel_tests: tf_scatter_ops did not import {import_failures} times; "
                         f"see {log}")
            print(f"  {mode}: tf_scatter_ops did not import (being rebuilt?); retrying in 60 s",
                  flush=True)
            time.sleep(60)
            continue
        if current and current not in finished and current in set(remaining):
            if code == "timeout":
                results[current] = {"outcome": "timeout", "calls": {}, "log": log,
                                    "message": f"still running after {timeout} s (killed)"}
            else:
                message, tail = crash_report(log, current, code)
                results[current] = {"outcome": "crash", "message": message, "calls": {},
                                    "log": log, "tail": tail}
            print(f"  {mode}: {results[current]['outcome']} in {current} "
                  f"({message_head(results[current]['message'])}); going on", flush=True)
        left = [n for n in remaining if n not in results]
        if left and len(left) == len(remaining):
            # no test ran and none crashed: the file itself broke (import,
            # collection); each test left is an error with the log's end
            with open(log, errors="replace") as f:
                tail = f.read()[-4000:]
            for n in left:
                results[n] = {"outcome": "error", "calls": {}, "log": log,
                              "message": f"the run gave no result (exit {code}):\n{tail}"}
            left = []
        if left and code in (0, 1, 5):
            for n in left:  # pytest ended normally without running them
                results[n] = {"outcome": "missing", "calls": {}, "message": "did not run"}
            left = []
        remaining = left
    return results


def library_stamp():
    """The compiled library's size and modification time, and the newest of
    the package's Python files: what the patched run ran."""
    def when(t):
        return time.strftime("%H:%M:%S", time.localtime(t))
    try:
        st = os.stat(os.path.join(ROOT, LIBRARY))
        so = f"{os.path.basename(LIBRARY)} {st.st_size} bytes of {when(st.st_mtime)}"
    except FileNotFoundError:
        so = f"no {os.path.basename(LIBRARY)}"
    package = os.path.dirname(os.path.join(ROOT, LIBRARY))
    newest = max((os.path.join(d, f) for d, _, fs in os.walk(package) for f in fs
                  if f.endswith(".py")), key=os.path.getmtime, default=None)
    py = (f"{os.path.relpath(newest, ROOT)} of {when(os.path.getmtime(newest))}"
          if newest else "no Python files")
    return f"{so}, newest {py}"


def read(path):
    try:
        with open(path) as f:
            return f.read().strip() or None
    except FileNotFoundError:
        return None


def done(state):
    found = {}
    try:
        with open(os.path.join(state, "results.jsonl")) as f:
            for line in f:
                if line.endswith("\n"):
                    entry = json.loads(line)
                    found[entry.pop("id")] = entry
    except FileNotFoundError:
        pass
    return found


# ------------------------------------------------------------------ report

def message_head(message, lines=4):
    """The first lines worth reading of a failure: where in the test file it
    failed, and the first line of each exception pytest shows (`E` lines),
    TensorFlow's "Graph execution error" restatements and stacks left out;
    else the message's first lines."""
    all_lines = message.splitlines()
    where = ""
    for k, line in enumerate(all_lines):
        m = re.match(r"^(\S+_test\.py):(\d+): in (\w+)$", line)
        if m:
            source = all_lines[k + 1].strip() if k + 1 < len(all_lines) else ""
            where = f"{os.path.basename(m.group(1))}:{m.group(2)} `{source}`: "
    errors, previous_e = [], False
    for line in all_lines:
        is_e = line.startswith("E ")
        text = line[1:].strip()
        if is_e and not previous_e and text and "Graph execution error" not in text:
            if text not in errors:
                errors.append(text)
        previous_e = is_e
    chosen = errors or [line for line in all_lines if line.strip()]
    text = where + " | ".join(chosen[:lines])
    return text[:700] + ("..." if len(text) > 700 else "")


def difference_rows():
    """The first cells of the rows of docs/api.md's 'Where it differs from
    TensorFlow' tables (the section, up to the next `## ` heading)."""
    with open(DIFFERENCES) as f:
        text = f.read()
    if DIFFERENCES_SECTION not in text:
        sys.exit(f"tf_kernel_tests: docs/api.md has no {DIFFERENCES_SECTION!r} section")
    section = text.split(DIFFERENCES_SECTION, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] and not set(cells[0]) <= set("-: "):
            rows.append(cells[0])
    return rows


def check_allow_list():
    rows = difference_rows()
    bad = [f"  {test}: {reason!r}" for test, reason in ALLOW.items()
           if "\n" in reason or not any(reason.startswith(row + ":") for row in rows)]
    if bad:
        sys.exit("tf_kernel_tests: each ALLOW reason must be one line starting with the first "
                 "cell of a row of docs/api.md's 'Where it differs from TensorFlow' tables and a "
                 "colon; these do not:\n" + "\n".join(bad) + "\nthe rows:\n"
                 + "\n".join(f"  {r}" for r in rows))


def report(files, modes, elapsed, out):
    """Prints the table and totals; the exit status."""
    width = max([len(n) for _, results in files for n in results[modes[0]]] + [20])
    stock_only = modes == ["stock"]
    regressions, crashes, allowed = [], [], []
    totals = collections.Counter()
    for path, results in files:
        base = os.path.basename(path)
        print(f"\n{base}")
        header = f"  {'test':{width}}  {'stock':8}" + ("" if stock_only else
                                                       f"  {'patched':8}  plugin calls")
        print(header)
        print("  " + "-" * (len(header) - 2))
        for nodeid in results["stock"]:
            s = results["stock"][nodeid]
            row = f"  {nodeid:{width}}  {s['outcome']:8}"
            if not stock_only:
                p = results["patched"].get(nodeid, {"outcome": "missing", "message": "", "calls": {}})
                ours = sum(c for k, c in p.get("calls", {}).items() if "TensorFlow's" not in k)
                fallback = sum(c for k, c in p.get("calls", {}).items() if "TensorFlow's" in k)
                marks = ""
                if s["outcome"] == "pass" and p["outcome"] != "pass":
                    marks = "  << ALLOWED" if nodeid in ALLOW else "  << REGRESSION"
                    (allowed if nodeid in ALLOW else regressions).append((base, nodeid, p))
                elif s["outcome"] != "pass" and p["outcome"] == "pass":
                    marks = "  (passes patched only)"
                row += f"  {p['outcome']:8}  {ours}" + (f" (+{fallback} TensorFlow's)"
                                                        if fallback else "") + marks
                totals["patched " + p["outcome"]] += 1
                if s["outcome"] == "pass":
                    totals["pass stock, pass patched" if p["outcome"] == "pass"
                           else "pass stock, not patched"] += 1
                    if p["outcome"] == "pass" and not ours:
                        totals["pass both, no call to the plugin"] += 1
                for mode, r in (("stock", s), ("patched", p)):
                    if r["outcome"] in ("crash", "timeout"):
                        crashes.append((mode, base, nodeid, r))
            elif s["outcome"] in ("crash", "timeout"):
                crashes.append(("stock", base, nodeid, s))
            totals["tests"] += 1
            totals["stock " + s["outcome"]] += 1
            print(row)

    print("\ntotals")
    print(f"  tests: {totals['tests']}")
    for mode in modes:
        counts = ", ".join(f"{o} {totals[f'{mode} {o}']}" for o in OUTCOMES if totals[f"{mode} {o}"])
        print(f"  {mode}: {counts}")
    if not stock_only:
        print(f"  pass stock: {totals['stock pass']}; of those pass patched: "
              f"{totals['pass stock, pass patched']} ({totals['pass both, no call to the plugin']} "
              f"without a call to a patched function), fail patched: "
              f"{totals['pass stock, not patched']} ({len(allowed)} allowed)")
    print(f"  crashes and timeouts: {len(crashes)}")
    for mode, base, nodeid, r in crashes:
        print(f"    {mode}: {nodeid}: {r['outcome']}")
        for line in r["message"].splitlines()[:12]:
            print(f"        {line}")
        if r.get("log"):
            print(f"        log: {r['log']}")
    if not stock_only:
        print(f"  regressions (pass stock, not patched; not allowed): {len(regressions)}")
        for base, nodeid, r in regressions:
            print(f"    {nodeid}: {r['outcome']}: {message_head(r['message'])}")
        for base, nodeid, r in allowed:
            print(f"    allowed: {nodeid}: {r['outcome']}: {ALLOW[nodeid]}")
    print(f"\nlogs: {out}; wall time {elapsed:.0f} s")
    return 1 if regressions else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:  # --child MODE --state FOLDER -- PYTEST ARGS
        split = argv.index("--")
        options = dict(zip(argv[:split:2], argv[1:split:2]))
        return child(options["--child"], options["--state"], argv[split + 1:])

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help="TensorFlow test files")
    parser.add_argument("--test", action="append", default=[], metavar="ID",
                        help="run only this test (CLASS::TEST, or FILE::CLASS::TEST; a parameterized "
                        "test's name runs all its cases, a CLASS all its tests); repeatable")
    parser.add_argument("--stock-only", action="store_true", help="run stock TensorFlow only")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds one test may run before it is killed (default %(default)s)")
    parser.add_argument("--out", default=None,
                        help="logs and results (default: a new folder under the system's temp)")
    parser.add_argument("--json", help="write every result as JSON to this file")
    args = parser.parse_args(argv)
    check_allow_list()
    paths = [os.path.abspath(p) for p in args.paths]
    for p in paths:
        if not os.path.isfile(p):
            parser.error(f"no such file: {p}")
    out = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="tf_kernel_tests.")
    os.makedirs(out, exist_ok=True)
    modes = ["stock"] if args.stock_only else ["stock", "patched"]
    started = time.monotonic()
    files, changed = [], []
    for path in paths:
        base = os.path.basename(path)
        ids = collect(path, out)
        selected = False
        if args.test:
            # a test's id, a parameterized test's name (its cases: NAME0, NAME_...)
            # or a class
            wanted = [t if t.startswith(base + "::") else f"{base}::{t}" for t in args.test]
            ids = [n for n in ids if any(n == w or n.startswith(w + "::")
                                         or re.fullmatch(re.escape(w) + r"(\d+|_\w+)", n)
                                         for w in wanted)]
            selected = True
            if not ids:
                print(f"{base}: none of {sorted(args.test)} is one of its tests; skipped")
                continue
        results = {}
        for mode in modes:
            t = time.monotonic()
            library = library_stamp() if mode == "patched" else None
            if library:
                print(f"{base}: patched run of {library}", flush=True)
            print(f"{base}: {len(ids)} tests, {mode} ...", flush=True)
            results[mode] = run_mode(path, mode, ids, out, args.timeout, selected)
            print(f"{base}: {mode} done in {time.monotonic() - t:.0f} s", flush=True)
            if library is not None and library_stamp() != library:
                changed.append(f"{base}: tf_scatter_ops changed while the patched run ran "
                               f"({library} -> {library_stamp()}): its results may come from two "
                               "versions (a crash from a library rewritten under a running "
                               "process); run again")
            results[mode] = {n: results[mode][n] for n in ids}
        files.append((path, results))
        if "patched" in modes:
            replaced = sorted({name for f in os.scandir(os.path.join(out, base.replace(".py", ""),
                                                                     "patched"))
                               if f.is_dir() for name in
                               json.loads(read(os.path.join(f.path, "replaced.json")) or "[]")})
            print(f"{base}: patched names: {', '.join(replaced)} and tso.patch_tensorflow()'s")
    if not files:
        sys.exit("tf_kernel_tests: no test selected")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({os.path.basename(p): r for p, r in files}, f, indent=1)
    status = report(files, modes, time.monotonic() - started, out)
    for warning in changed:
        print(f"WARNING: {warning}")
    return status


if __name__ == "__main__":
    sys.exit(main())
