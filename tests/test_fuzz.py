"""Differential fuzzing: random rank 0..5, shapes with zero-size
dims, depth 0..rank, outer index dims 0..2, duplicates, bad rows (negative,
too large, int extremes), every value dtype, every index dtype and every
policy, for every op, against the NumPy reference (bitwise) and, where
TensorFlow 2.21 has a CPU kernel for the case, against TensorFlow.

Profiles (environment variable TFSO_FUZZ_PROFILE):
  ci    (default) 7 ops x 750 = 5,250 examples, derandomized, in `make test`
  long  TFSO_FUZZ_EXAMPLES in total (default 105,000; `make fuzz` asks for
        100,000, i.e. 7 x 14,286), random
"""

import os
import re

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import tf_scatter_ops as tso
from tf_scatter_ops.ops import DTYPES, INDEX_DTYPES, POLICIES
from tf_scatter_ops._table import OP_TYPES as TF_RAW  # Python name -> our op type
from tf_scatter_ops._table import SCATTER_GATHER
import reference as ref

IAE = tf.errors.InvalidArgumentError
OPS = tuple(row.py for row in SCATTER_GATHER)  # the segment family: test_segments.py
REF_OP = {row.py: row.py.rsplit("_", 1)[1] for row in SCATTER_GATHER}  # the reference's names
REF_OP["scatter_nd"] = "scatter_nd"
PRODUCTS = ("tensor_scatter_nd_mul", "tensor_scatter_nd_div")  # NaN signs: see assert_same
WITH_TF = {row.py for row in SCATTER_GATHER if row.tf}  # (mul and div: TensorFlow has none)

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile(
    "tfso-ci", max_examples=750, deadline=None, derandomize=True, database=None,
    suppress_health_check=_HEALTH, phases=[Phase.explicit, Phase.generate, Phase.shrink],
    print_blob=True)
_LONG_TOTAL = int(os.environ.get("TFSO_FUZZ_EXAMPLES", "105000"))
settings.register_profile(
    "tfso-long", max_examples=-(-_LONG_TOTAL // len(OPS)), deadline=None,
    suppress_health_check=_HEALTH, print_blob=True)
PROFILE = os.environ.get("TFSO_FUZZ_PROFILE", "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"TFSO_FUZZ_PROFILE must be 'ci' or 'long', got {PROFILE!r}")
FUZZ = settings(settings.get_profile(f"tfso-{PROFILE}"))

# Examples actually run, per op, and how many were also checked against TF.
COUNTS = {op: {"examples": 0, "tf": 0, "errors": 0, "large": 0} for op in OPS}


@st.composite
def cases(draw, op):
    dtype = draw(st.sampled_from(DTYPES[op]))
    index_dtype = draw(st.sampled_from(INDEX_DTYPES))
    policy = draw(st.sampled_from(POLICIES))
    rank = draw(st.integers(0, 5))
    max_dim = 4 if rank <= 3 else 3
    # Zero-size dims now and then, not half the time.
    shape = tuple(draw(st.lists(
        st.one_of(st.integers(1, max_dim), st.just(0)) if draw(st.booleans())
        else st.integers(1, max_dim), min_size=rank, max_size=rank)))
    depth = draw(st.integers(0, rank))
    outer_rank = draw(st.sampled_from([0, 1, 1, 1, 2, 2]))
    outer = tuple(draw(st.lists(st.integers(0, 5), min_size=outer_rank, max_size=outer_rank)))
    duplicates = draw(st.sampled_from(["none", "some", "hot"]))
    nbad = draw(st.sampled_from([0, 0, 0, 0, 0, 1, 2]))
    extreme = draw(st.booleans())
    through_function = draw(st.integers(0, 9)) == 0  # 10%: kernel with unknown shapes
    # Indices as a tensor, or as an int64 NumPy array / Python list that the
    # wrapper converts (out-of-int32 values must stay out of range, not wrap
    # into it as tf.convert_to_tensor with an int32 hint would make them).
    indices_as = "tensor" if through_function else draw(
        st.sampled_from(["tensor", "tensor", "numpy", "list"]))
    if indices_as != "tensor":
        index_dtype = tf.int64
    seed = draw(st.integers(0, 2**32 - 1))
    # About 1 in 200 (by the seed: hypothesis favours boundary values of
    # its own draws): a case big enough for the parallel block path (more
    # than 128k update elements); the rest stay small and fast. Not int16:
    # tf.gather_nd aborts the process on > 65535 int16 index rows.
    if seed % 200 == 7:
        shape, depth, outer = (300,), 1, (140_000,)
        through_function, indices_as = False, "tensor"
        if index_dtype == tf.int16:
            index_dtype = tf.int32
    return dict(op=op, dtype=dtype, index_dtype=index_dtype, policy=policy,
                shape=shape, depth=depth, outer=outer, duplicates=duplicates,
                nbad=nbad, extreme=extreme, function=through_function,
                indices_as=indices_as, seed=seed)


def make_indices(rng, c):
    shape, depth, outer = c["shape"], c["depth"], c["outer"]
    n = int(np.prod(outer, dtype=np.int64))
    idx = np.zeros((n, depth), np.int64)
    for d in range(depth):
        hi = max(shape[d], 1)
        if c["duplicates"] == "hot":
            idx[:, d] = rng.integers(0, min(hi, 2), size=n)
        elif c["duplicates"] == "none":
            idx[:, d] = rng.permutation(np.arange(n) % hi) if n else []
        else:
            idx[:, d] = rng.integers(0, hi, size=n)
    info = np.iinfo(c["index_dtype"].as_numpy_dtype)
    if depth and n:
        for row in rng.choice(n, size=min(c["nbad"], n), replace=False):
            d = rng.integers(0, depth)
            if c["extreme"]:
                idx[row, d] = rng.choice([info.max, info.min, info.min + 1, info.max - 1])
            else:
                idx[row, d] = rng.choice([-1, -2, shape[d], shape[d] + 1])
    return idx.reshape(outer + (depth,)).astype(c["index_dtype"].as_numpy_dtype)


def shape_str(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def expected(c, tensor, idx, upd):
    """(result, None) or (None, regex of the InvalidArgumentError)."""
    op, shape, dtype = c["op"], c["shape"], c["dtype"]
    # CLIP: clamped indices, then IGNORE (rows into an empty dimension);
    # FILL: IGNORE, a gather's bad rows then set to the default fill value
    ignore = c["policy"] in ("IGNORE", "CLIP", "FILL")
    given = idx
    if c["policy"] == "CLIP":
        idx = ref.clip(idx, shape)
    if op != "gather_nd":
        if idx.ndim - 1 + len(shape) - c["depth"] < 1:
            return None, r"updates must have rank at least 1"
        if np.prod(shape, dtype=np.int64) == 0 and idx.size > 0:
            return None, r"Indices and updates specified for empty output shape"
    try:
        if op == "gather_nd":
            got = ref.gather(tensor, idx, dtype, ignore=ignore)
            if c["policy"] == "FILL":
                got = ref.fill(got, given, shape, ref.fill_value(dtype))
            return got, None
        return ref.scatter(REF_OP[op], tensor, idx, upd, dtype, ignore=ignore), None
    except ref.BadIndex as e:
        row = "[" + ", ".join(str(int(v)) for v in e.index) + "]"
        if op != "gather_nd":
            return None, (re.escape(f"indices[{e.row}] = {row} does not index into shape ")
                          + re.escape(shape_str(shape)))
        if np.prod(shape, dtype=np.int64) == 0:
            return None, re.escape("Requested more than 0 entries, but params is empty.  Params shape: "
                                   + shape_str(shape))
        # TensorFlow's notation: the row's position in indices' outer dims
        position = ",".join(str(int(p)) for p in np.unravel_index(e.row, idx.shape[:-1])) if idx.ndim > 1 else ""
        return None, (re.escape(f"indices[{position}] = {row} does not index into param shape ")
                      + re.escape(shape_str(shape)))


_FUNCTIONS = {}


def ours(c, tensor, idx, upd):
    op, dtype, policy = c["op"], c["dtype"], c["policy"]
    indices = tf.constant(idx)
    if c["indices_as"] == "numpy":
        indices = idx
    elif c["indices_as"] == "list" and idx.size:
        indices = idx.tolist()
    args = [tf.constant(tensor, dtype), indices]
    if op != "gather_nd":
        args.append(tf.constant(upd, dtype))

    def call(*a):
        if op == "gather_nd":
            return tso.gather_nd(a[0], a[1], bad_indices_policy=policy)
        if op == "scatter_nd":
            # shape as the indices' dtype (the kernel's own) or int64 (widened)
            out_type = c["index_dtype"] if c["seed"] % 2 else tf.int64
            return tso.scatter_nd(a[1], a[2], tf.cast(tf.shape(a[0]), out_type),
                                  bad_indices_policy=policy)
        return getattr(tso, op)(a[0], a[1], a[2], bad_indices_policy=policy)

    if not c["function"]:
        return call(*args)
    key = (op, dtype, c["index_dtype"], policy, c["seed"] % 2)
    if key not in _FUNCTIONS:  # one trace per combination: unknown static shapes
        spec = [tf.TensorSpec(None, tf.as_dtype(a.dtype)) for a in args]
        _FUNCTIONS[key] = tf.function(call, input_signature=spec)
    return _FUNCTIONS[key](*args)


def tf_comparable(c, tensor, idx):
    """Whether TensorFlow 2.21 has a CPU kernel for this case with our semantics
    (shared/tf-behaviour.md 1.2, 2.4): int32/int64 indices for scatters
    (gather_nd also int16), depth >= 1 for scatters, and no gather from
    scalar or empty params (TF refuses those even for depth-0 or slice-empty
    gathers)."""
    if c["op"] not in WITH_TF or c["policy"] in ("CLIP", "FILL"):  # TensorFlow has neither
        return False
    if c["op"] == "gather_nd":  # TF: "params must be at least a vector"
        return tensor.ndim >= 1 and not (tensor.size == 0 and np.prod(idx.shape[:-1]) > 0)
    # TF's scatter kernels read rank-1 indices as N rows of depth 1 and then
    # reject every shape (tf-behaviour.md 2.4): compare rank >= 2 only.
    return c["index_dtype"] != tf.int16 and c["depth"] >= 1 and idx.ndim >= 2


def theirs(c, tensor, idx, upd):
    op, dtype = c["op"], c["dtype"]
    raw = getattr(tf.raw_ops, TF_RAW[op])
    i = tf.constant(idx)
    if op == "gather_nd":
        return raw(params=tf.constant(tensor, dtype), indices=i, bad_indices_policy=c["policy"])
    u = tf.constant(upd, dtype)
    if op == "scatter_nd":
        return raw(indices=i, updates=u, shape=tf.constant(c["shape"], i.dtype),
                   bad_indices_policy=c["policy"])
    return raw(tensor=tf.constant(tensor, dtype), indices=i, updates=u,
               bad_indices_policy=c["policy"])


SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])


def with_specials(rng, values, dtype):
    """float32/64 values with NaN, +-inf and signed zeros sprinkled in (a
    third of the cases): min/max must keep TensorFlow's NaN rules."""
    if dtype not in (tf.float32, tf.float64) or values.size == 0 or rng.random() > 1 / 3:
        return values
    values = values.copy()
    flat = values.reshape(-1)
    pick = rng.random(flat.size) < 0.2
    flat[pick] = rng.choice(SPECIALS, size=int(pick.sum()))
    return values


def run_case(c):
    # The op is mixed into the seed: derandomized draws repeat across the
    # parametrized ops, the values and indices should not.
    rng = np.random.default_rng([c["seed"], OPS.index(c["op"])])
    op, dtype, shape, depth = c["op"], c["dtype"], c["shape"], c["depth"]
    tensor = (ref.zeros(shape, dtype) if op == "scatter_nd"
              else with_specials(rng, ref.random_values(rng, dtype, shape), dtype))
    idx = make_indices(rng, c)
    upd = with_specials(rng, ref.random_values(rng, dtype, c["outer"] + shape[depth:]), dtype)
    want, error = expected(c, tensor, idx, upd)
    COUNTS[op]["examples"] += 1
    COUNTS[op]["large"] += int(np.prod(c["outer"], dtype=np.int64)) > 100_000
    if error is not None:
        COUNTS[op]["errors"] += 1
        with pytest.raises(IAE, match=error):
            ours(c, tensor, idx, upd)
    else:
        ref.assert_same(ours(c, tensor, idx, upd), want, nan_bits=op not in PRODUCTS)
    if tf_comparable(c, tensor, idx):
        COUNTS[op]["tf"] += 1
        if error is None:
            ref.assert_same(theirs(c, tensor, idx, upd), want)
        elif "does not index" in error:
            with pytest.raises(IAE, match="does not index"):
                theirs(c, tensor, idx, upd)


@pytest.mark.parametrize("op", OPS)
def test_fuzz_against_reference_and_tensorflow(op):
    @FUZZ
    @given(cases(op))
    def check(c):
        run_case(c)

    check()


def test_fuzz_counts():
    """Every op was fuzzed with the profile's number of examples (when the
    whole file ran), a share of them also against TensorFlow and a share on
    the error path; prints the counts (pytest -s shows them)."""
    if any(COUNTS[op]["examples"] == 0 for op in OPS):
        pytest.skip("not every op's fuzz test ran in this pytest process")
    total = sum(v["examples"] for v in COUNTS.values())
    print(f"\nfuzz profile {PROFILE}: {total} examples; per op {COUNTS}")
    want = FUZZ.max_examples
    for op, v in COUNTS.items():
        # Hypothesis runs max_examples successful examples (+ a few explicit/
        # replayed ones); never fewer unless it ran out of distinct inputs.
        assert v["examples"] >= want, (op, v)
        assert v["tf"] >= want // 10 or op not in WITH_TF, (op, v)
        assert v["errors"] >= want // 20, (op, v)
    assert sum(v["large"] for v in COUNTS.values()) >= len(OPS), COUNTS  # block path too
