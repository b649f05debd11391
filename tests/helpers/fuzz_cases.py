"""The differential fuzzer's case specs: small JSON-able dicts that say what
to call (op, kind, mode, policy, dtypes, shapes, promises, a hostile size)
and the seed from which tests/helpers/fuzz_worker.py builds the arrays.

The ops come from the op table (tf_scatter_ops/_base/table.py's OPS), one generator
per row.kind (GENERATORS), so a new row is fuzzed without editing this file;
a kind without a generator is an error (make_specs raises, and
test_fuzz.py's test_every_kind_has_a_generator fails). Beside the rows:
unsorted_segment_mean / _sqrt_n ("Normalized") and segment_*_csr ("CSR").

This module imports neither TensorFlow nor the plugin: the parent process
generates specs from the table's rows, the workers run them.
"""

import zlib

import numpy as np

POLICIES = ("", "DEFAULT", "ERROR", "IGNORE", "CLIP", "FILL")
INDEX_DTYPES = ("int16", "int32", "int64")
MODES = ("eager", "function", "function_unknown", "xla")
FLOATS = ("bfloat16", "float16", "float32", "float64")

# Kinds that take indices_are_sorted / unique_indices.
HINTED = ("ScatterNd", "TensorScatter", "UnsortedSegment", "Normalized")
# Kinds built on unsorted_segment_*'s inputs (grid num_segments, negative ids dropped).
SEGMENT_LIKE = ("UnsortedSegment", "Normalized", "Groupwise", "ArgSegment")
SCATTER_LIKE = ("ScatterNd", "TensorScatter", "GatherNd", "ArgScatter")
# Functions beside the table's rows: (name, kind, the row whose dtypes they take).
NORMALIZED = (("unsorted_segment_mean", "unsorted_segment_sum"),
              ("unsorted_segment_sqrt_n", "unsorted_segment_sum"))

I63 = 2**63 - 1


class Target(dict):
    """One function to fuzz: op (its public name), kind, dtypes (names), tf
    (TensorFlow's equivalent or None), weight (share of the examples)."""

    __getattr__ = dict.__getitem__


def targets(rows, public_names):
    """Every op-table row (rows: objects with .py, .kind, .dtypes, .tf), then
    the normalized unsorted segment functions and the CSR functions that
    `public_names` (the package's attributes) has."""
    out = []
    by_py = {r.py: r for r in rows}
    for r in rows:
        out.append(Target(op=r.py, kind=r.kind, dtypes=[_name(d) for d in r.dtypes], tf=r.tf,
                          weight=3 if r.kind in SCATTER_LIKE[:3] else 1))
    for name, like in NORMALIZED:
        if name in public_names and like in by_py:
            dtypes = [_name(d) for d in by_py[like].dtypes]
            dtypes = [d for d in dtypes if d in FLOATS]  # (tf.maximum has no complex kernel)
            out.append(Target(op=name, kind="Normalized", dtypes=dtypes, tf=name, weight=1))
    for r in rows:
        if r.kind == "SortedSegment" and r.py + "_csr" in public_names:
            out.append(Target(op=r.py + "_csr", kind="CSR", dtypes=[_name(d) for d in r.dtypes],
                              tf=None, weight=1))
    return out


def _name(dtype):
    return getattr(dtype, "name", dtype)


# ----------------------------------------------------------------- helpers

def _choice(rng, seq, p=None):
    return seq[int(rng.choice(len(seq), p=p))]


def _mode(rng, xla_ok, function_ok=True):
    r = rng.random()
    if xla_ok and r < 0.07:
        return "xla"
    if function_ok and r < 0.17:
        return "function"
    if function_ok and r < 0.27:
        return "function_unknown"
    return "eager"


def _dims(rng, rank, hi, zero_p):
    return [0 if rng.random() < zero_p else int(rng.integers(1, hi + 1)) for _ in range(rank)]


def _base(t, rng, k):
    return {"op": t.op, "kind": t.kind, "case": k, "seed": int(rng.integers(0, 2**32)),
            "dtype": _choice(rng, t.dtypes)}


def _hints(rng, kind):
    if kind not in HINTED or rng.random() >= 0.3:
        return None
    sorted_, unique = _choice(rng, [(True, False), (False, True), (True, True)])
    # arrange: rows sorted (the promise holds) or reverse-sorted (it breaks)
    return {"sorted": sorted_, "unique": unique, "arrange": bool(rng.random() < 0.6)}


# ------------------------------------------------------------- generators

def gen_scatter(t, rng, k, large=False):
    """scatter_nd, tensor_scatter_nd_*, gather_nd and the arg scatters:
    rank 0..5, zero-size dims, depth 0..rank, outer index dims 0..2,
    duplicates, bad rows (int extremes too), every policy, index inputs as
    tensors, NumPy arrays or lists."""
    s = _base(t, rng, k)
    s["index_dtype"] = _choice(rng, INDEX_DTYPES)
    s["policy"] = _choice(rng, POLICIES)
    rank = int(rng.integers(0, 6))
    max_dim = 4 if rank <= 3 else 3
    s["shape"] = _dims(rng, rank, max_dim, 0.25 if rng.random() < 0.5 else 0.0)
    s["depth"] = int(rng.integers(0, rank + 1))
    outer_rank = _choice(rng, [0, 1, 1, 1, 2, 2])
    s["outer"] = [int(rng.integers(0, 6)) for _ in range(outer_rank)]
    s["duplicates"] = _choice(rng, ["none", "some", "hot"])
    s["nbad"] = _choice(rng, [0, 0, 0, 0, 0, 1, 2])
    s["extreme"] = bool(rng.random() < 0.5)
    s["specials"] = bool(rng.random() < 1 / 3)
    s["mode"] = _mode(rng, xla_ok=s["dtype"] != "string")
    s["indices_as"] = ("tensor" if s["mode"] != "eager"
                       else _choice(rng, ["tensor", "tensor", "numpy", "list"]))
    if s["indices_as"] != "tensor":
        s["index_dtype"] = "int64"
    s["hints"] = _hints(rng, t.kind)
    if s["hints"] and int(np.prod(s["outer"], dtype=np.int64)) < 2:
        s["outer"] = [int(rng.integers(2, 6))]  # rows that can break the promise
    if s["hints"] and s["hints"]["unique"] and s["hints"]["arrange"]:
        slots = int(np.prod(s["shape"][:s["depth"]], dtype=np.int64))
        if int(np.prod(s["outer"], dtype=np.int64)) > slots:
            s["outer"] = [min(slots, 5)]
    if large:
        # the parallel block path (more than 128k update elements). Not
        # int16: tf.gather_nd aborts on more than 65535 int16 index rows.
        s.update(shape=[300], depth=1, outer=[140_000], mode="eager", indices_as="tensor",
                 large=True, hints=None)
        if s["index_dtype"] == "int16":
            s["index_dtype"] = "int32"
        if s["dtype"] == "string":
            s["dtype"] = t.dtypes[0]
    return s


def gen_segment(t, rng, k, large=False):
    """unsorted_segment_*, _mean, _sqrt_n, the group-wise and the arg segment
    functions: ids of rank 0..2 (a prefix of data's shape), slices of rank
    0..2, empty segments, negative (dropped) ids, ids >= num_segments (int
    extremes too), num_segments as an int, NumPy int or tensor, or a grid's
    shape (ids are then index rows into it)."""
    s = _base(t, rng, k)
    s["index_dtype"] = _choice(rng, INDEX_DTYPES)
    s["policy"] = _choice(rng, POLICIES)
    s["grid"] = None
    if rng.random() < 0.2:
        depth = _choice(rng, [1, 2, 2, 3])
        s["grid"] = _dims(rng, depth, 4, 0.08)
        outer_rank = _choice(rng, [0, 1, 1, 1, 2])
        s["ids_shape"] = _dims(rng, outer_rank, 6, 0.08) + [depth]
        s["num_as"] = _choice(rng, ["list", "tensor32", "tensor64"])
        s["negatives"] = False
    else:
        outer_rank = _choice(rng, [0, 1, 1, 1, 2])
        s["ids_shape"] = _dims(rng, outer_rank, 6, 0.08)
        s["num_segments"] = 0 if rng.random() < 0.06 else int(rng.integers(1, 9))
        s["num_as"] = _choice(rng, ["int", "numpy", "tensor32", "tensor64"])
        s["negatives"] = bool(rng.random() < 0.4)
    s["slice"] = _dims(rng, _choice(rng, [0, 0, 1, 1, 2]), 4, 0.05)
    s["nbad"] = _choice(rng, [0, 0, 0, 1, 2])
    s["extreme"] = bool(rng.random() < 0.3)
    s["specials"] = bool(rng.random() < 0.25)
    s["mode"] = _mode(rng, xla_ok=True)
    s["ids_as"] = ("tensor" if s["mode"] != "eager"
                   else _choice(rng, ["tensor", "tensor", "numpy", "list"]))
    if s["ids_as"] != "tensor":
        s["index_dtype"] = "int64"
    s["hints"] = _hints(rng, t.kind)
    if s["hints"] and int(np.prod(s["ids_shape"][:-1] if s["grid"] is not None
                                  else s["ids_shape"], dtype=np.int64)) < 2:
        n = int(rng.integers(2, 7))  # rows that can break the promise
        s["ids_shape"] = [n, len(s["grid"])] if s["grid"] is not None else [n]
    if t.op in ("segment_var", "segment_std"):
        s["ddof"] = _choice(rng, [0, 0, 1, 2])
    if large:
        s.update(grid=None, ids_shape=[200_000], num_segments=3000, num_as="int", slice=[],
                 mode="eager", ids_as="tensor", large=True)
        if rng.random() < 0.5:
            s.update(ids_shape=[40_000], num_segments=500, slice=[4])
        if s["index_dtype"] == "int16":
            s["index_dtype"] = "int32"
    return s


def gen_sorted(t, rng, k, large=False):
    """segment_*: sorted 1-D ids with gaps, a negative prefix (an error, or
    dropped under IGNORE, clamped under CLIP), a decrease (an error under
    every policy)."""
    s = _base(t, rng, k)
    s["index_dtype"] = _choice(rng, INDEX_DTYPES)
    s["policy"] = _choice(rng, POLICIES)
    s["n"] = 0 if rng.random() < 0.06 else int(rng.integers(1, 14))
    s["slice"] = _dims(rng, _choice(rng, [0, 1, 1, 2]), 4, 0.05)
    s["max_id"] = int(rng.integers(0, 8))
    s["negatives"] = int(_choice(rng, [0, 0, 0, 0, 1, 2]))
    s["decrease"] = bool(rng.random() < 0.12)
    s["specials"] = bool(rng.random() < 0.25)
    s["mode"] = _mode(rng, xla_ok=False)  # XLA has no kernel for TensorFlow's segment_*
    s["ids_as"] = ("tensor" if s["mode"] != "eager"
                   else _choice(rng, ["tensor", "tensor", "numpy", "list"]))
    if s["ids_as"] != "tensor":
        s["index_dtype"] = "int64"
    if large:
        s.update(n=_choice(rng, [200_000, 40_000]), max_id=3000, negatives=0, decrease=False,
                 mode="eager", ids_as="tensor", large=True)
        s["slice"] = [] if s["n"] == 200_000 else [4]
        if s["index_dtype"] == "int16":
            s["index_dtype"] = "int32"
    return s


def gen_sparse(t, rng, k, large=False):
    """sparse_segment_*: rows of data at `indices`, sorted ids, num_segments
    given or not; one kind of problem per case (a bad index, a negative id,
    an id >= num_segments, a decrease), so that TensorFlow's message for it
    is comparable."""
    s = _base(t, rng, k)
    s["index_dtype"] = _choice(rng, INDEX_DTYPES)
    s["id_dtype"] = _choice(rng, INDEX_DTYPES)
    s["policy"] = _choice(rng, POLICIES)
    s["rows"] = 0 if rng.random() < 0.06 else int(rng.integers(1, 7))
    s["n"] = 0 if rng.random() < 0.06 else int(rng.integers(1, 14))
    s["slice"] = _dims(rng, _choice(rng, [0, 1, 1, 2]), 4, 0.05)
    s["max_id"] = int(rng.integers(0, 8))
    s["with_num"] = bool(rng.random() < 0.6)
    s["extra_segments"] = int(rng.integers(0, 3))
    s["problem"] = _choice(rng, ["none"] * 6 + ["bad_index", "neg_id", "big_id", "decrease"])
    if s["problem"] == "big_id" and not s["with_num"]:
        s["problem"] = "none"
    s["extreme"] = bool(rng.random() < 0.3)
    s["specials"] = bool(rng.random() < 0.2)
    s["num_as"] = _choice(rng, ["int", "tensor32", "tensor64"])
    s["mode"] = _mode(rng, xla_ok=s["with_num"])
    if large:
        s.update(rows=5000, n=200_000, max_id=900, with_num=True, mode="eager", large=True,
                 slice=[4], problem=_choice(rng, ["none", "bad_index"]))
    if s["index_dtype"] == "int16" and s["rows"] > 2**15 - 1:
        s["index_dtype"] = "int32"
    return s


def gen_csr(t, rng, k, large=False):
    """segment_*_csr: offsets with empty rows anywhere, int32/int64, data as
    a tensor or a RaggedTensor; invalid offsets (not starting at 0,
    decreasing, ending elsewhere, empty)."""
    s = _base(t, rng, k)
    s["nrows"] = int(rng.integers(0, 9))
    s["lengths_max"] = int(rng.integers(0, 5))
    s["slice"] = _dims(rng, _choice(rng, [0, 1, 1, 2]), 4, 0.05)
    s["splits_dtype"] = _choice(rng, ["int32", "int64"])
    s["invalid"] = _choice(rng, [None] * 17 + ["start", "decrease", "end", "empty"])
    s["ragged"] = bool(s["invalid"] is None and rng.random() < 0.2)
    s["specials"] = bool(rng.random() < 0.2)
    s["mode"] = _mode(rng, xla_ok=s["invalid"] is None)  # XLA does not check offsets
    if large:
        s.update(nrows=3000, lengths_max=120, slice=[], invalid=None, ragged=False,
                 mode="eager", large=True)
    return s


def gen_message(t, rng, k, large=False):
    """gather_reduce and edge_combine: a few nodes and edges (none too),
    rows of rank 0..2 (rank >= 1 for a dot, which takes the last axis),
    weights none / per edge / per edge and head, negative dst (dropped by
    gather_reduce), ids out of range; under XLA bad ids only where the
    policy drops or clamps them."""
    s = _base(t, rng, k)
    s["index_dtype"] = _choice(rng, INDEX_DTYPES)
    s["policy"] = _choice(rng, POLICIES)
    s["mode"] = _mode(rng, xla_ok=True)
    s["nodes"] = 0 if rng.random() < 0.06 else int(rng.integers(1, 9))
    s["nodes_b"] = 0 if rng.random() < 0.06 else int(rng.integers(1, 9))
    s["edges"] = 0 if rng.random() < 0.06 else int(rng.integers(1, 13))
    s["slice"] = _dims(rng, _choice(rng, [0, 1, 1, 2]), 4, 0.05)
    s["specials"] = bool(rng.random() < 0.25)
    s["nbad"] = _choice(rng, [0, 0, 0, 1, 2])
    if s["mode"] == "xla" and s["policy"] in ("", "DEFAULT", "ERROR"):
        # XLA raises nothing: every id in range (no rows to index: no edges)
        s["nbad"] = 0
        if not (s["nodes"] and s["nodes_b"]):
            s["edges"] = 0
    s["negatives"] = bool(rng.random() < 0.3)
    if t.kind == "GatherReduce":
        s["reduce"] = _choice(rng, ["sum", "mean", "max", "min"])
        s["weights"] = _choice(rng, ["none", "edge", "head"] if s["slice"] else ["none", "edge"])
    else:
        s["edge_op"] = _choice(rng, ["add", "sub", "mul", "dot"])
        if s["edge_op"] == "dot" and not s["slice"]:
            s["slice"] = [int(rng.integers(1, 5))]
        s["negatives"] = False
    if large:
        s.update(nodes=3000, nodes_b=3000, edges=200_000, slice=[4], mode="eager", large=True,
                 specials=False)
        if s["index_dtype"] == "int16":
            s["index_dtype"] = "int32"
    return s


GENERATORS = {
    "ScatterNd": gen_scatter,
    "TensorScatter": gen_scatter,
    "GatherNd": gen_scatter,
    "ArgScatter": gen_scatter,
    "UnsortedSegment": gen_segment,
    "Normalized": gen_segment,
    "Groupwise": gen_segment,
    "ArgSegment": gen_segment,
    "SortedSegment": gen_sorted,
    "SparseSegment": gen_sparse,
    "CSR": gen_csr,
    "GatherReduce": gen_message,
    "EdgeCombine": gen_message,
}


# --------------------------------------------------------- hostile sizes
# (what, value, size class). The class says what must happen: "negative" and
# "overflow": InvalidArgumentError or ValueError; "huge" (valid, too big to
# allocate): that or ResourceExhaustedError, or the right result where the
# output itself is small; "zero": the right (empty) result. The worker
# refines "huge" into "overflow" where the output's element count overflows
# int64 with the case's slice.

HOSTILE = {
    "ScatterNd": [
        ("shape", [-1], "negative"), ("shape", [3, -2], "negative"),
        ("shape", [2, -(2**63)], "negative"),
        ("shape", [2**40, 2**40], "overflow"), ("shape", [2**62, 4], "overflow"),
        ("shape", [I63, 2], "overflow"), ("shape", [2**32, 2**32], "overflow"),
        ("shape", [2**21, 2**21, 2**21], "overflow"),
        ("shape", [2**40], "huge"), ("shape", [2**62], "huge"),
        ("shape", [0, 2**62, 2**62], "zero"),
    ],
    "segment": [
        ("num_segments", -1, "negative"), ("num_segments", -2, "negative"),
        ("num_segments", -(2**31), "negative"), ("num_segments", 2**40, "huge"),
        ("num_segments", 2**62, "huge"), ("num_segments", I63, "huge"),
        ("grid", [2**31, 2**31, 4], "overflow"), ("grid", [2**40, 2**40], "overflow"),
        ("grid", [-1, 3], "negative"), ("grid", [2**20, 2**20], "huge"),
        ("grid", [0, 2**62], "zero"),
    ],
    "SortedSegment": [
        ("last_id", 2**40, "huge"),
        ("last_id", 2**62, "huge"), ("last_id", I63, "overflow"),
    ],
    "SparseSegment": [
        ("num_segments", -1, "negative"), ("num_segments", -2, "negative"),
        ("num_segments", 2**40, "huge"), ("num_segments", 2**62, "huge"),
        ("last_id", 2**40, "huge"), ("last_id", 2**62, "huge"), ("last_id", I63, "overflow"),
    ],
    "CSR": [
        ("splits", [0, 2**62], "invalid"), ("splits", [0, 2**62, -(2**62) - 1, "rows"], "invalid"),
        ("splits", [0, 2**30, -(2**30) - 1, "rows"], "invalid"),
        ("splits", [0, -(2**63), "rows"], "invalid"), ("splits", [0, I63, "rows"], "invalid"),
    ],
}
for _kind in SEGMENT_LIKE:
    HOSTILE[_kind] = HOSTILE["segment"]


def hostile_spec(t, rng, k, hostile, mode=None):
    what, value, size_class = hostile
    s = _base(t, rng, k)
    s.update(hostile={"what": what, "value": value, "class": size_class},
             mode=mode or _choice(rng, ["eager", "eager", "function", "function_unknown"]),
             policy=_choice(rng, ["", "IGNORE", "CLIP"]), specials=False)
    if t.kind == "CSR":
        s["policy"] = None
        s["splits_dtype"] = "int32" if all(isinstance(v, str) or abs(v) < 2**31 for v in value) \
            else "int64"
        s["slice"] = _choice(rng, [[], [3]])
    elif t.kind == "ScatterNd":
        s.update(index_dtype="int64", slice=[])
    else:
        s["index_dtype"] = "int64"
        s["slice"] = _choice(rng, [[], [3]])
        if t.op in ("segment_var", "segment_std"):
            s["ddof"] = 0
    return s


# ---------------------------------------------------------------- profiles

def op_seed(seed, op):
    return [seed, zlib.crc32(op.encode())]


def make_specs(all_targets, per_op, seed, hostile="all", large_per_op=1):
    """The cases: for each target, `per_op * weight` drawn cases (one in 150
    large, and at least `large_per_op`), then its hostile sizes: "all" of its
    kind's (each eagerly and in a tf.function), or "rotate" (a third of them
    per op, every one of a kind's by some op of it), or a probability (a
    share of the drawn cases)."""
    specs = []
    by_kind = {}
    for t in all_targets:
        by_kind.setdefault(t.kind, []).append(t)
    for t in all_targets:
        if t.kind not in GENERATORS:
            raise KeyError(f"no fuzz generator for kind {t.kind!r} (op {t.op}): add one to "
                           "tests/helpers/fuzz_cases.py GENERATORS and a runner to "
                           "tests/helpers/fuzz_worker.py")
        rng = np.random.default_rng(op_seed(seed, t.op))
        gen = GENERATORS[t.kind]
        count = per_op * t.weight
        large_at = set(int(i) for i in rng.choice(max(count, 1), size=min(large_per_op, count),
                                                   replace=False)) if count else set()
        hostiles = HOSTILE.get(t.kind, [])
        for k in range(count):
            if (k not in large_at and isinstance(hostile, float) and hostiles
                    and rng.random() < hostile):
                specs.append(hostile_spec(t, rng, k, _choice(rng, hostiles)))
                continue
            large = k in large_at or rng.random() < 1 / 150
            specs.append(gen(t, rng, k, large=large))
        if hostile in ("all", "rotate") and hostiles:
            peers = by_kind[t.kind]
            j = peers.index(t)
            step = 1 if hostile == "all" or len(peers) < 3 else 3
            for i, h in enumerate(hostiles):
                if (i + j) % step == 0:
                    specs.append(hostile_spec(t, rng, count + 2 * i, h, "eager"))
                    if hostile == "all":
                        specs.append(hostile_spec(t, rng, count + 2 * i + 1, h, _choice(
                            rng, ["function", "function_unknown"])))
    return specs
