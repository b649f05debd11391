"""Differential fuzzing of every row of the op table (tf_scatter_ops/_base/table.py's OPS,
one generator per row.kind, tests/helpers/fuzz_cases.py), unsorted_segment_mean /
_sqrt_n and the segment_*_csr functions, against NumPy references and,
where TensorFlow has a CPU kernel with the same semantics, TensorFlow
(tests/helpers/fuzz_worker.py says what is compared for each kind).

Each case is a small JSON spec (op, mode, policy, dtypes, shapes, promises,
hostile size, seed); a pool of worker processes, one per core
(tests/helpers/fuzz_pool.py), builds the arrays from the seed and answers. A worker
that dies fails its case only: the case is a CRASH with its exit status, and
a new worker takes the next case. Any failing case can be replayed:

    .venv/bin/python tests/helpers/fuzz_worker.py --replay '<spec>'

Covered: every policy ("", DEFAULT, ERROR, IGNORE, CLIP, FILL), the promises
indices_are_sorted / unique_indices (true and false) where a function takes
them, grid segment ids (num_segments a vector), rank 0..5 and zero-size
dims, bad rows and ids (int extremes too), every value and index dtype,
index inputs as tensors, NumPy arrays and lists, NaN / inf / -0.0, eager,
tf.function (known and unknown input shapes) and jit_compile=True, a large
case per op (the parallel paths), and hostile sizes (0, negative, huge,
products overflowing int64), which must raise InvalidArgumentError or
ValueError (ResourceExhaustedError for a valid size too big to allocate),
never crash and never return silently. The hostile cases' workers run with
TF_ENABLE_ONEDNN_OPTS=0: TensorFlow's oneDNN CPU allocator retries a failed
allocation for 10 s, and those cases fail allocations on purpose.

Profiles (TFSO_FUZZ_PROFILE):
  ci    (default) fixed seed, FUZZ_CI_PER_OP cases per op (three times that for
        the scatters and gathers), every hostile size of its kind for every
        op; part of `make test`
  long  TFSO_FUZZ_EXAMPLES cases in all (default 100,000; `make fuzz`), a
        random seed (printed; TFSO_FUZZ_SEED repeats a run), the hostile
        sizes as in ci plus 1% of the drawn cases
Also: TFSO_FUZZ_OPS=op,op|kind (only those), TFSO_FUZZ_PER_OP=n (ci),
TFSO_FUZZ_WORKERS=n (default: one per core). The
report (per-op counts) and the failing specs are printed and written to
build/fuzz/.
"""

import collections
import json
import os
import random
import re
import shlex
import subprocess
import sys
import time

import pytest

import tf_scatter_ops as tso
from tf_scatter_ops._base import table as _table
import table_rows
import fuzz_cases as fc
import fuzz_pool

PROFILE = os.environ.get("TFSO_FUZZ_PROFILE", "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"TFSO_FUZZ_PROFILE must be 'ci' or 'long', got {PROFILE!r}")
CI_SEED = 20240611
FUZZ_CI_PER_OP = int(os.environ.get("TFSO_FUZZ_PER_OP", "200"))
if PROFILE == "ci":
    SEED = int(os.environ.get("TFSO_FUZZ_SEED", CI_SEED))
else:
    SEED = int(os.environ.get("TFSO_FUZZ_SEED", random.SystemRandom().randrange(2**31)))
WORKERS = int(os.environ.get("TFSO_FUZZ_WORKERS", "0")) or None
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "fuzz")
WORKER = fuzz_pool.WORKER

ALL_TARGETS = fc.targets(_table.OPS, set(dir(tso)))
_ONLY = [o for o in os.environ.get("TFSO_FUZZ_OPS", "").split(",") if o]
TARGETS = [t for t in ALL_TARGETS if not _ONLY or t.op in _ONLY or t.kind in _ONLY]


def _plan():
    """(drawn specs, hostile specs) of the profile: every hostile size of
    each op's kind for every op, and (long) 1% of the drawn cases."""
    weight = sum(t.weight for t in TARGETS) or 1
    if PROFILE == "ci":
        per_op, share = FUZZ_CI_PER_OP, "none"
    else:
        total = int(os.environ.get("TFSO_FUZZ_EXAMPLES", "100000"))
        per_op, share = -(-total // weight), 0.01
    drawn = fc.make_specs(TARGETS, per_op, SEED, hostile=share)
    extra = fc.make_specs(TARGETS, 0, SEED + 1, hostile="all", large_per_op=0)
    hostile_specs = [s for s in drawn if s.get("hostile")] + extra
    drawn = [s for s in drawn if not s.get("hostile")]
    return drawn, hostile_specs


def _sabotaged(specs):
    """One case per kind whose expectation is made wrong on purpose: the
    oracle must fail each (a check that cannot fail checks nothing)."""
    out, seen = [], set()
    for s in specs:
        if s["kind"] not in seen and not s.get("large") and s["mode"] == "eager":
            seen.add(s["kind"])
            out.append(dict(s, sabotage=True))
    return out


@pytest.fixture(scope="module")
def fuzz_run():
    drawn, hostile = _plan()
    sabotage = _sabotaged(drawn)
    abort = [{"op": "__abort__", "kind": "harness"}]
    print(f"\nfuzz profile {PROFILE}, seed {SEED}: {len(drawn)} drawn + {len(hostile)} hostile "
          f"cases over {len(TARGETS)} functions (TFSO_FUZZ_PROFILE={PROFILE} "
          f"TFSO_FUZZ_SEED={SEED} repeats it)")
    start = time.time()
    pool = fuzz_pool.Pool(WORKERS, case_timeout_s=120 if PROFILE == "ci" else 300)
    # the harness's own cases first: a crash (abort) and the sabotaged ones
    results = pool.run(abort + sabotage + drawn)
    harness, checks = results[:1], results[1:1 + len(sabotage)]
    results = results[1 + len(sabotage):]
    hostile_pool = fuzz_pool.Pool(WORKERS, case_timeout_s=120,
                                  env={"TF_ENABLE_ONEDNN_OPTS": "0"})
    results += hostile_pool.run(hostile)
    elapsed = time.time() - start
    run = dict(specs=drawn + hostile, results=results, harness=harness, sabotage=sabotage,
               sabotage_results=checks, elapsed=elapsed,
               restarts=pool.restarts + hostile_pool.restarts)
    report = _report(run)
    print(report)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, f"report-{PROFILE}.txt"), "w") as f:
        f.write(report + "\n")
    return run


def _counts(run):
    counts = collections.OrderedDict((t.op, collections.Counter()) for t in TARGETS)
    for spec, r in zip(run["specs"], run["results"]):
        c = counts[spec["op"]]
        c["examples"] += 1
        c["tf"] += bool(r.get("tf"))
        c["errors"] += bool(r.get("error_path"))
        c["hostile"] += bool(spec.get("hostile"))
        c["large"] += bool(spec.get("large"))
        c[r["status"]] += 1
        c["mode:" + spec.get("mode", "")] += 1
        c["policy:" + str(spec.get("policy"))] += 1
        c["expect:" + str(r.get("expect"))] += 1
        c["grid"] += spec.get("grid") is not None
        c["as:" + str(spec.get("indices_as") or spec.get("ids_as"))] += 1
        c["hints"] += bool(spec.get("hints"))
    return counts


def _report(run):
    counts = _counts(run)
    lines = [f"{'op':36} {'cases':>6} {'vs TF':>6} {'errors':>6} {'hostile':>7} {'large':>5} "
             f"{'eager/fn/fn?/xla':>17} {'FAIL':>5} {'CRASH':>5} {'TIME':>4}"]
    for op, c in counts.items():
        modes = "/".join(str(c["mode:" + m]) for m in fc.MODES)
        lines.append(f"{op:36} {c['examples']:6} {c['tf']:6} {c['errors']:6} {c['hostile']:7} "
                     f"{c['large']:5} {modes:>17} {c['fail']:5} {c['crash']:5} {c['timeout']:4}")
    total = sum(c["examples"] for c in counts.values())
    bad = sum(c["fail"] + c["crash"] + c["timeout"] for c in counts.values())
    rss = max((r.get("max_rss_mb") or 0 for r in run["results"]), default=0)
    lines.append(f"{total} cases in {run['elapsed']:.0f} s ({run['restarts']} worker restarts "
                 f"after a crash or a hang; workers' peak RSS {rss} MB), {bad} failing; "
                 f"profile {PROFILE}, seed {SEED}")
    return "\n".join(lines)


def _signature(result):
    detail = (result.get("detail") or "").split("\n")[0]
    if result["status"] == "crash":
        return f"CRASH ({fuzz_pool.describe_exit(result.get('returncode'))})"
    if result["status"] == "timeout":
        return "TIMEOUT"
    # group by the message's shape, not its numbers
    return "FAIL " + re.sub(r"\d+", "#", detail)[:72]


def test_every_kind_has_a_generator_and_a_runner():
    """A row whose kind has no generator is not fuzzed: that is a failure
    here (and make_specs refuses it), not a silent gap."""
    import fuzz_worker
    kinds = {row.kind for row in _table.OPS}
    assert kinds <= set(fc.GENERATORS), f"no fuzz generator for {kinds - set(fc.GENERATORS)}"
    assert set(fc.GENERATORS) == set(fuzz_worker.RUNNERS)
    new = fc.Target(op="brand_new", kind="BrandNewKind", dtypes=["float32"], tf=None, weight=1)
    with pytest.raises(KeyError, match="no fuzz generator for kind 'BrandNewKind'"):
        fc.make_specs([new], 1, 0)
    ops = {t.op for t in ALL_TARGETS}
    assert {row.py for row in _table.OPS} <= ops
    assert {"unsorted_segment_mean", "unsorted_segment_sqrt_n"} <= ops
    assert {row.py + "_csr" for row in table_rows.SORTED_SEGMENTS} <= ops


def test_specs_are_json_and_reproducible():
    a, b = fc.make_specs(ALL_TARGETS, 3, 7), fc.make_specs(ALL_TARGETS, 3, 7)
    assert a == b and json.loads(json.dumps(a)) == a  # JSON, the same for a seed
    assert fc.make_specs(ALL_TARGETS, 3, 8) != a


def test_the_harness_records_a_crash_and_catches_a_wrong_answer(fuzz_run):
    """A case that kills its worker (abort) is a CRASH with its signal and
    the next case runs in a new worker; an expectation made wrong on
    purpose (one case per kind) fails."""
    (crash,) = fuzz_run["harness"]
    assert crash["status"] == "crash" and crash["returncode"] == -6, crash
    kinds = {t.kind for t in TARGETS}
    assert {s["kind"] for s in fuzz_run["sabotage"]} == kinds
    for spec, r in zip(fuzz_run["sabotage"], fuzz_run["sabotage_results"]):
        assert r["status"] == "fail", ("a wrong expectation passed", spec, r)


def test_fuzz_coverage(fuzz_run):
    """Every function was fuzzed with the profile's cases, in every mode it
    has, under every policy it takes, on the error path and (where
    TensorFlow has it) against TensorFlow; the promises, grids, large and
    hostile cases ran."""
    counts = _counts(fuzz_run)
    by_op = {t.op: t for t in TARGETS}
    hostile_ran = collections.defaultdict(set)
    for spec in fuzz_run["specs"]:
        if spec.get("hostile"):
            h = spec["hostile"]
            hostile_ran[spec["kind"]].add(json.dumps([h["what"], h["value"]]))
    problems = []
    for op, c in counts.items():
        t = by_op[op]
        want = FUZZ_CI_PER_OP * t.weight if PROFILE == "ci" and not _ONLY else 1
        drawn = c["examples"] - c["hostile"]
        if drawn < want:
            problems.append(f"{op}: {drawn} cases < {want}")
        if c["errors"] < max(1, drawn // 20):
            problems.append(f"{op}: {c['errors']} error-path cases")
        if t.tf and c["tf"] < max(1, drawn // 10):
            problems.append(f"{op}: only {c['tf']} cases checked against TensorFlow")
        if t.kind in fc.SCATTER_LIKE + fc.SEGMENT_LIKE + ("SortedSegment",) and drawn >= 150:
            for how in ("numpy", "list"):
                if c["as:" + how] == 0:
                    problems.append(f"{op}: indices never passed as a {how}")
        modes = ["eager", "function", "function_unknown"]
        if t.kind != "SortedSegment":  # (XLA has no kernel for TensorFlow's segment_*)
            modes.append("xla")
        for m in modes:
            if drawn >= 150 and c["mode:" + m] == 0:
                problems.append(f"{op}: never ran in mode {m}")
        if t.kind != "CSR" and drawn >= 150:
            for p in fc.POLICIES:
                if c["policy:" + p] == 0:
                    problems.append(f"{op}: never ran with policy {p!r}")
        if t.kind in fc.HINTED and drawn >= 150 and c["expect:promise"] == 0:
            problems.append(f"{op}: no false promise was checked")
        if t.kind in fc.SEGMENT_LIKE and drawn >= 150 and c["grid"] == 0:
            problems.append(f"{op}: no grid segment ids")
        if drawn >= 50 and c["large"] == 0:
            problems.append(f"{op}: no large case")
    for kind, values in fc.HOSTILE.items():
        if kind in {t.kind for t in TARGETS} and kind != "segment":
            missing = {json.dumps([w, v]) for w, v, _ in values} - hostile_ran[kind]
            if missing:
                problems.append(f"{kind}: hostile sizes never ran: {sorted(missing)}")
    assert not problems, "\n".join(problems)


def test_fuzz_finds_no_failures(fuzz_run):
    """No case fails, crashes or hangs; the message lists every failing
    spec, grouped by what went wrong, with the command that replays it."""
    groups = collections.OrderedDict()
    for spec, r in zip(fuzz_run["specs"], fuzz_run["results"]):
        if r["status"] != "pass":
            groups.setdefault((spec["op"], _signature(r)), []).append((spec, r))
    if not groups:
        return
    lines, dump = [], []
    for (op, signature), cases in groups.items():
        lines.append(f"\n{op}: {len(cases)} x {signature}")
        spec, r = cases[0]
        detail = (r.get("detail") or r.get("stderr") or "").strip()
        lines.append("    " + detail[:1200].replace("\n", "\n    "))
        for spec, r in cases:
            lines.append("    " + json.dumps(spec))
            dump.append(dict(spec=spec, result=r))
    path = os.path.join(OUT, f"failures-{PROFILE}.jsonl")
    with open(path, "w") as f:
        for d in dump:
            f.write(json.dumps(d) + "\n")
    n = sum(len(c) for c in groups.values())
    pytest.fail(f"{n} failing cases in {len(groups)} groups (all in {path}); replay one with\n"
                f"    .venv/bin/python tests/helpers/fuzz_worker.py --replay '<spec>'\n"
                + "\n".join(lines), pytrace=False)


def test_a_spec_replays_from_the_command_line():
    """`python tests/helpers/fuzz_worker.py --replay '<spec>'`: exit status 0 and
    PASS for a passing case, 1 and FAIL with the reason for a failing one."""
    spec = next(s for s in fc.make_specs([t for t in ALL_TARGETS if t.op == "gather_nd"], 20, 1)
                if s["mode"] == "eager" and not s.get("large"))
    for sabotage, rc, word in ((False, 0, "PASS"), (True, 1, "FAIL")):
        text = json.dumps(dict(spec, sabotage=sabotage))
        proc = subprocess.run([sys.executable, WORKER, "--replay", text], capture_output=True,
                              text=True, env=fuzz_pool.worker_env(), timeout=300)
        assert proc.returncode == rc and word in proc.stdout, (
            shlex.join([sys.executable, WORKER, "--replay", text]), proc.stdout,
            proc.stderr[-2000:])
