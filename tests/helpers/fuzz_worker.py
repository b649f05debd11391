"""The differential fuzzer's worker: runs case specs (tests/helpers/fuzz_cases.py)
against the plugin, the NumPy references below (tests/helpers/reference.py for the
scatters and gathers) and, where the op has a TensorFlow equivalent with the
same semantics and a CPU kernel, stock TensorFlow.

    python tests/helpers/fuzz_worker.py --worker           # the pool's protocol (stdin/stdout JSON lines)
    python tests/helpers/fuzz_worker.py --replay '<spec>'  # one spec, verbose; exit status 1 if it fails

Each spec is answered with one JSON line: {"status": "pass" | "fail",
"tf": checked against TensorFlow, "error_path": an error was expected,
"detail": why it failed}. A crash of this process is the parent's to record
(tests/helpers/fuzz_pool.py).

What is compared, per kind (the rules are the docs': docs/api.md's differences
from TensorFlow, docs/out-of-bounds.md, docs/xla.md, docs/segments.md):
- sums, products, min/max, gathers and scatters in index order: bitwise
  (NaN payloads aside for products), eagerly and in tf.function; under XLA
  bitwise for the scatters and gathers (the plugin's XLA kernels), within a
  tolerance for the segment family (TensorFlow's ops, XLA's order);
- unsorted_segment_mean / _sqrt_n, the group-wise functions, sparse segment
  means and XLA's segment sums: within a tolerance;
- errors: the class and the message naming the first bad row (TensorFlow's
  words; segment_* and sparse_segment_*: ours starts with TensorFlow's);
  under XLA a bad scatter or gather row fails (InternalError or
  InvalidArgumentError, the same message) and a bad segment id or grid row
  is dropped; XLA neither uses nor checks indices_are_sorted / unique_indices;
- hostile sizes: InvalidArgumentError or ValueError (ResourceExhaustedError
  for a valid size too big to allocate), never a crash or a silent result.
"""

import json
import os
import re
import resource
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # tests/helpers/..
for _p in (ROOT, HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf_scatter_ops as tso  # noqa: E402
from tf_scatter_ops._base import table as _table  # noqa: E402
import reference as ref  # noqa: E402

IAE = tf.errors.InvalidArgumentError
OOM = tf.errors.ResourceExhaustedError
INTERNAL = tf.errors.InternalError
VE = ValueError
I63 = 2**63 - 1
PRODUCTS = ("tensor_scatter_nd_mul", "tensor_scatter_nd_div")  # NaN signs: nan_bits
PER_ROW = ("segment_softmax", "segment_log_softmax")
EPS = {"bfloat16": 2.0**-8, "float16": 2.0**-11, "float32": 2.0**-24, "float64": 2.0**-53,
       "complex64": 2.0**-24, "complex128": 2.0**-53}
GROUPWISE_TOL = {"bfloat16": 2e-2, "float16": 2e-3, "float32": 1e-5, "float64": 1e-10}
ABORT = "__abort__"  # the harness's own test: the worker dies on it
OVERFLOW = r"(?i)overflow|too many elements|too large"  # a size whose product overflows int64


class Mismatch(AssertionError):
    pass


class Value:
    """An expected result and how to compare: check(got, want) raises."""

    def __init__(self, value, check):
        self.value, self.check = value, check


class Error:
    """An expected exception: one of `classes`, its message matching
    `regex` (re.search) unless None; `or_value`: a Value also accepted."""

    def __init__(self, classes, regex=None, or_value=None, what=""):
        self.classes, self.regex, self.or_value = tuple(classes), regex, or_value
        self.what = what  # "bad_row", "promise", "shape", ... (which TensorFlow check applies)

    def __repr__(self):
        return f"{'|'.join(c.__name__ for c in self.classes)} /{self.regex}/"


class Ctx:
    def __init__(self, spec):
        self.spec = spec
        self.tf = False
        self.error_path = False
        self.expect = None  # "value", or what error: "bad_row", "promise", "shape", ...


# ------------------------------------------------------------------ helpers

def tf_dtype(name):
    return tf.as_dtype(name)


def message(e):
    return getattr(e, "message", None) or str(e)


def bare(text):
    """A TensorFlow error message without its {{function_node ...}} prefix
    and [Op:...] suffix."""
    if text.startswith("Graph execution error"):
        # the op's message follows the traceback of where the node was defined
        text = text.split("\n\t [[")[0].rsplit("\n\n", 1)[-1]
    text = text.split("}} ")[-1] if "{{function_node" in text else text
    return text.split(" [Op:")[0].strip()


class Empty:
    """A result with no elements whose shape NumPy cannot hold ([0, 2**62, 2**62])."""

    size = 0

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def to_numpy(value):
    if isinstance(value, tuple):
        return tuple(to_numpy(v) for v in value)
    if isinstance(value, tf.Tensor) and value.shape.num_elements() == 0:
        try:
            return value.numpy()
        except Exception:  # noqa: BLE001 - TensorFlow's conversion of such a shape
            return Empty(value.shape, value.dtype.as_numpy_dtype)
    return value.numpy() if hasattr(value, "numpy") else value


def summary(value):
    if isinstance(value, tuple):
        return "(" + ", ".join(summary(v) for v in value) + ")"
    if isinstance(value, Empty):
        return f"{value.dtype}{list(value.shape)} (empty)"
    a = np.asarray(value)
    text = np.array2string(a, threshold=20, edgeitems=3) if a.dtype != object else repr(a)[:300]
    return f"{a.dtype}{list(a.shape)} {text}"


def attempt(thunk):
    try:
        return "value", to_numpy(thunk())
    except Exception as e:  # noqa: BLE001 - compared with the expectation
        return "error", e


def same(nan_bits=True):
    def check(got, want):
        ref.assert_same(got, want, nan_bits=nan_bits)
    return check


def close(rtol, atol=0.0, exact_ints=True):
    """NaN where NaN, infinities equal, else |got - want| <= atol + rtol |want|
    (atol may be an array of want's shape); integers and bools exactly."""
    def check(got, want):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype.kind in "iub" and exact_ints:
            ref.assert_same(got, want)
            return
        kind = np.complex128 if want.dtype.kind == "c" else np.float64
        g, w = got.astype(kind), want.astype(kind)
        bad = np.isnan(g) != np.isnan(w)
        inf = np.isinf(w) | np.isinf(g)
        with np.errstate(invalid="ignore", over="ignore"):
            bad |= inf & ~np.isnan(w) & (g != w)
            finite = ~np.isnan(w) & ~inf
            bad |= finite & ~(np.abs(g - w) <= atol + rtol * np.abs(w))
        if bad.any():
            where = np.argwhere(bad)[:5].tolist()
            raise Mismatch(f"results differ (rtol {rtol:g}) at {where}: got "
                           f"{g[bad][:5].tolist()} want {w[bad][:5].tolist()}")
    return check


def nan_bits(op):
    """Whether a NaN's sign and payload are compared: not for sums and
    products (docs/api.md, "add/sub giving NaN": on some paths the NaN has the
    other operand's sign or payload; a product of two NaNs is the compiler's
    choice of operand order), of the segment family or the scatters."""
    return not (op.endswith(("sum", "mean", "sqrt_n", "prod", "_csr", "_add", "_sub"))
                or op in PRODUCTS or op == "scatter_nd")


def empty_of(shape, dtype):
    """An empty result of this shape and dtype (NumPy cannot make one whose
    other dims overflow: [0, 2**62, 2**62])."""
    def check(got, want):
        got = got if isinstance(got, Empty) else np.asarray(got)
        assert got.size == 0 and tuple(got.shape) == tuple(shape) and got.dtype == dtype, (
            f"expected an empty {np.dtype(dtype).name}{list(shape)}, "
            f"got {got.dtype}{list(got.shape)}")
    return check


def product_check(op, dtype, rows_per_segment):
    """Complex products and quotients round differently in NumPy and Eigen
    (the formula's order): within a tolerance; everything else bitwise."""
    if dtype.startswith("complex") and op.endswith(("prod", "mean")):
        return close(4 * (rows_per_segment + 2) * EPS[dtype], np.finfo(np.float32).tiny)
    if op.endswith("prod") and dtype in EPS:
        return flushed(same(nan_bits(op)), dtype)
    return same(nan_bits(op))


TINY = {"bfloat16": 2.0**-126, "float32": 2.0**-126, "float64": 2.0**-1022}


def flush_denormals(values, dtype):
    """TensorFlow's CPU threads flush denormal results to zero (and so do
    the kernels run on them); NumPy keeps them: a denormal is that zero,
    its sign kept. (float32, float64, and bfloat16, which multiplies in float32;
    half's products are rounded from float32 into half's own denormals, kept.)"""
    if dtype not in TINY:
        return values
    v = np.asarray(values)
    wide = v.astype(np.float64)
    denormal = (wide != 0) & (np.abs(wide) < TINY[dtype])
    if not denormal.any():
        return values
    return np.where(denormal, np.copysign(0.0, wide), wide).astype(v.dtype)


def flushed(check, dtype):
    """check(got, want) with want's denormals flushed to zero."""
    return lambda got, want: check(got, flush_denormals(want, dtype))


def xla_min_max(nan_inputs=None):
    """Under XLA, TensorFlow's segment min / max are XLA's, whose NaN rule is
    its own (docs/segments.md): where either side is NaN, or (`nan_inputs`,
    a bool array of the result's shape) the element's segment holds a NaN,
    anything is accepted; the rest must be equal (signs of zero aside)."""
    exact = close(0.0)

    def check(got, want):
        g, w = np.asarray(got), np.asarray(want)
        if g.shape != w.shape or w.dtype.kind in "iub":
            return exact(got, want)
        kind = np.complex128 if w.dtype.kind == "c" else np.float64
        g, w = g.astype(kind), w.astype(kind)
        either = np.isnan(g) | np.isnan(w)
        if nan_inputs is not None:
            either |= nan_inputs
        return exact(np.where(either, 0, g), np.where(either, 0, w))
    return check


def segments_with_nan(rows, flat, nout):
    """[nout, width] bool: whether a kept row of that segment holds a NaN in
    that column (flat: each row's segment, dropped rows outside [0, nout))."""
    mask = np.zeros((nout, rows.shape[1]), bool)
    kept = (flat >= 0) & (flat < nout)
    if rows.dtype.kind in "fcV" or rows.dtype.name == "bfloat16":
        np.logical_or.at(mask, flat[kept], np.isnan(rows[kept].astype(np.complex128)))
    return mask


def zero_signs_aside(check):
    """check(got, want) with -0.0 read as 0.0 on both sides (real floats)."""
    def run(got, want):
        g, w = np.asarray(got), np.asarray(want)
        if w.dtype.kind in "iubcOSU" or g.shape != w.shape:
            return check(got, want)
        return check(np.where(g == 0, np.zeros_like(g), g), np.where(w == 0, np.zeros_like(w), w))
    return run


def check_tuple(*checks):
    def check(got, want):
        assert isinstance(got, tuple) and len(got) == len(want), summary(got)
        for c, g, w in zip(checks, got, want):
            c(g, w)
    return check


def perturbed(want):
    """The sabotage check's wrong expectation: the first element changed
    (beyond any tolerance: a float by 1 + 2|x|, NaN and inf made 0; an
    integer's lowest bit flipped), or a shape with one more dimension."""
    if isinstance(want, tuple):
        return (perturbed(want[0]),) + tuple(want[1:])
    want = np.array(want, copy=True)
    if want.size == 0:
        return np.zeros((1,) + want.shape, want.dtype)
    flat = want.reshape(-1)
    if want.dtype == object:
        flat[0] = bytes(flat[0]) + b"x"
    elif want.dtype.kind in "fcV" or want.dtype.name == "bfloat16":
        x = complex(flat[0]) if want.dtype.kind == "c" else float(flat[0])
        flat[0] = 0 if not np.isfinite(x) else x + 1 + 2 * abs(x)
    else:
        flat.view(np.uint8)[0] ^= 1
    return want


def verdict(ctx, outcome, expected, who="ours"):
    """Raises Mismatch unless `outcome` ("value"/"error", payload) is what
    `expected` (Value or Error) says."""
    kind, got = outcome
    if who == "ours":
        ctx.expect = (expected.what or "error") if isinstance(expected, Error) else "value"
    if ctx.spec.get("sabotage") and who == "ours":
        if isinstance(expected, Value):
            expected = Value(perturbed(expected.value), expected.check)
        else:
            expected = Error(expected.classes, r"(?!x)x")
    if isinstance(expected, Error):
        ctx.error_path = True
        if kind == "value":
            if expected.or_value is not None:
                try:
                    expected.or_value.check(got, expected.or_value.value)
                    return
                except AssertionError as e:
                    raise Mismatch(f"{who}: expected {expected} or the right value; returned "
                                   f"a wrong one: {e}") from None
            raise Mismatch(f"{who}: expected {expected}, returned {summary(got)}")
        names = [c.__name__ for c in type(got).__mro__]
        if not any(c.__name__ in names for c in expected.classes):
            raise Mismatch(f"{who}: raised {type(got).__name__}: {bare(message(got))[:600]}; "
                           f"expected {expected}")
        if expected.regex is not None and not re.search(expected.regex, message(got)):
            raise Mismatch(f"{who}: {type(got).__name__} message {bare(message(got))[:600]!r} "
                           f"does not match {expected.regex!r}")
        return
    if kind == "error":
        raise Mismatch(f"{who}: raised {type(got).__name__}: {bare(message(got))[:600]}; "
                       f"expected {summary(expected.value)}")
    try:
        expected.check(got, expected.value)
    except Mismatch as e:
        raise Mismatch(f"{who}: {e}") from None
    except AssertionError as e:
        raise Mismatch(f"{who}: {e}\n got  {summary(got)}\n want {summary(expected.value)}") \
            from None


class Arg:
    """An input: what eager code passes (`eager`: a tensor, a NumPy array or
    a list), the tensor tf.function gets, and its shape in an unknown-shape
    input signature."""

    def __init__(self, value, dtype=None, eager=None, unknown=None):
        self.tensor = value if isinstance(value, (tf.Tensor, tf.RaggedTensor)) \
            else tf.constant(value, dtype)
        self.eager = self.tensor if eager is None else eager
        self.unknown = unknown


def run_mode(spec, fn, args):
    """fn(*args) eagerly, in a tf.function (known or unknown input shapes)
    or compiled by XLA."""
    mode = spec["mode"]
    if mode == "eager":
        return fn(*[a.eager for a in args])
    f = tf.autograph.experimental.do_not_convert(fn)
    tensors = [a.tensor for a in args]
    if mode == "function":
        return tf.function(f)(*tensors)
    if mode == "function_unknown":
        sig = [tf.RaggedTensorSpec([None] * t.shape.rank, t.dtype, ragged_rank=1,
                                   row_splits_dtype=t.row_splits.dtype)
               if isinstance(t, tf.RaggedTensor) else tf.TensorSpec(a.unknown, t.dtype)
               for a, t in zip(args, tensors)]
        return tf.function(f, input_signature=sig)(*tensors)
    if mode == "xla":
        return tf.function(f, jit_compile=True)(*tensors)
    raise ValueError(f"unknown mode {mode!r}")


def error_classes(spec, runtime=True):
    """The classes a bad input may raise in this mode: run-time checks raise
    InvalidArgumentError (XLA: InternalError, its class for a failed custom
    call); a shape check may be a ValueError where shapes are known when a
    function is traced."""
    mode = spec["mode"]
    if mode == "eager" or (runtime and mode in ("function", "function_unknown")):
        return (IAE,)
    if mode == "function_unknown":
        return (IAE,)
    if mode == "function":
        return (IAE, VE)
    return (IAE, INTERNAL, VE)


SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])


def with_specials(rng, values, dtype_name, on):
    """float32/64 values with NaN, +-inf and signed zeros sprinkled in."""
    if not on or dtype_name not in ("float32", "float64") or values.size == 0:
        return values
    values = values.copy()
    flat = values.reshape(-1)
    pick = rng.random(flat.size) < 0.2
    flat[pick] = rng.choice(SPECIALS, size=int(pick.sum()))
    return values


def random_values(rng, dtype_name, shape, specials=False, scale=1.0):
    values = ref.random_values(rng, tf_dtype(dtype_name), tuple(shape))
    if scale != 1.0 and dtype_name in EPS and not dtype_name.startswith("complex"):
        values = (values.astype(np.float64) * scale).astype(values.dtype)
    return with_specials(rng, values, dtype_name, specials)


def tf_unavailable(e):
    """TensorFlow has no CPU kernel for this dtype (not a semantic answer)."""
    text = message(e)
    return isinstance(e, tf.errors.NotFoundError) or "Could not find device for node" in text \
        or "No registered" in text or "is not in the list of allowed values" in text


def compare_tf(ctx, thunk, expected):
    """TensorFlow's answer must be `expected` (a Value, or an Error); where it
    has no kernel for the dtype nothing is counted."""
    kind, got = attempt(thunk)
    if kind == "error" and tf_unavailable(got):
        return
    ctx.tf = True
    verdict(ctx, (kind, got), expected, who="TensorFlow")


def tf_error_parity(ctx, thunk, ours):
    """Where ours raised: TensorFlow (thunk) must raise too, with a message
    ours starts with (docs/api.md: ours may add the position and the id)."""
    kind, got = attempt(thunk)
    if kind == "error" and tf_unavailable(got):
        return
    ctx.tf = True
    if kind == "value":
        raise Mismatch(f"TensorFlow returned a value where ours raised: {summary(got)}")
    mine = bare(message(ours[1]))
    if not mine.startswith(bare(message(got))):
        raise Mismatch(f"our message {mine!r} does not start with TensorFlow's "
                       f"{bare(message(got))!r}")


def policy_of(spec):
    policy = spec.get("policy") or ""
    default = policy in ("", "DEFAULT", "ERROR")
    return policy, default


def xla(spec):
    return spec["mode"] == "xla"


def positions(i, shape):
    """Row i's position in `shape` (its outer dims), as TensorFlow writes it."""
    if len(shape) == 0:
        return ""
    return ",".join(str(int(p)) for p in np.unravel_index(i, tuple(shape)))


def shape_str(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def row_str(row):
    return "[" + ", ".join(str(int(v)) for v in row) + "]"


def elements_overflow(*dims):
    total = 1
    for d in dims:
        total *= int(d)
    return total > I63


# ------------------------------------------------ scatters and gathers

REF_OP = {row.py: row.py.rsplit("_", 1)[1] for row in _table.OPS
          if row.kind in ("TensorScatter", "ScatterNd")}
REF_OP["scatter_nd"] = "scatter_nd"


def scatter_indices(rng, s):
    shape, depth, outer = s["shape"], s["depth"], s["outer"]
    n = int(np.prod(outer, dtype=np.int64))
    idx = np.zeros((n, depth), np.int64)
    for d in range(depth):
        hi = max(shape[d], 1)
        if s["duplicates"] == "hot":
            idx[:, d] = rng.integers(0, min(hi, 2), size=n)
        elif s["duplicates"] == "none":
            idx[:, d] = rng.permutation(np.arange(n) % hi) if n else []
        else:
            idx[:, d] = rng.integers(0, hi, size=n)
    hints = s.get("hints")
    if hints and depth and n:
        # rows in order (the promise holds), or in reverse (it breaks,
        # unless all are the same)
        dims = [max(d, 1) for d in shape[:depth]]
        slots = int(np.prod(dims, dtype=np.int64))
        if hints["unique"] and n <= slots:
            flat = np.sort(rng.choice(slots, size=n, replace=False))
        else:
            flat = np.sort(np.ravel_multi_index(tuple(idx.T), dims))
        flat = flat if hints["arrange"] else flat[::-1]
        idx = np.stack(np.unravel_index(flat, dims), axis=-1).astype(np.int64)
    info = np.iinfo(tf_dtype(s["index_dtype"]).as_numpy_dtype)
    if depth and n:
        for row in rng.choice(n, size=min(s["nbad"], n), replace=False):
            d = rng.integers(0, depth)
            if s["extreme"]:
                idx[row, d] = rng.choice([info.max, info.min, info.min + 1, info.max - 1])
            else:
                idx[row, d] = rng.choice([-1, -2, shape[d], shape[d] + 1])
    return idx.reshape(tuple(outer) + (depth,)).astype(info.dtype)


def arg_scatter_reference(kind, tensor, idx, upd, ignore):
    """(values, positions) of tensor_scatter_nd_{max_with_argmax,...}: rows
    offered in index order; one takes an element when strictly better, or a
    NaN over a number (test_argminmax.py's rule)."""
    shape = tensor.shape
    depth = idx.shape[-1]
    nslots = int(np.prod(shape[:depth], dtype=np.int64))
    width = int(np.prod(shape[depth:], dtype=np.int64))
    out = tensor.copy().reshape(nslots, width)
    arg = np.full(out.shape, -1, np.int64)
    rows = upd.reshape(int(np.prod(idx.shape[:-1], dtype=np.int64)), width)
    for i, slot, row in ref._rows(idx, shape):
        if slot is None:
            if ignore:
                continue
            raise ref.BadIndex(i, row)
        takes = _beats(kind, rows[i], out[slot])
        out[slot][takes] = rows[i][takes]
        arg[slot][takes] = i
    return out.reshape(shape), arg.reshape(shape)


def _beats(kind, u, o):
    uf, of = np.asarray(u), np.asarray(o)
    if uf.dtype.kind == "f" or uf.dtype.name == "bfloat16":
        uf, of = uf.astype(np.float64), of.astype(np.float64)
        beats = (of < uf) if kind == "max" else (uf < of)
        return beats | (np.isnan(uf) & ~np.isnan(of))
    return (of < uf) if kind == "max" else (uf < of)


def promise_error(hints, keys, name):
    """The false-promise message for the first row that breaks
    indices_are_sorted (with unique_indices: strictly increasing), or None.
    keys: [(row number, its key or None when dropped, its text)]."""
    if not hints or not hints["sorted"]:
        return None
    strict = hints["unique"]
    prev = None
    for i, key, text in keys:
        if key is None:
            continue
        if prev is not None and (key <= prev if strict else key < prev):
            index = f"{name}[{i}] = {text}"
            if strict:
                return re.escape(f"indices_are_sorted=True and unique_indices=True, but {index} "
                                 "is not after the previous row's index")
            return re.escape(f"indices_are_sorted=True, but {index} comes before the previous "
                             "row's index")
        prev = key
    return None


def expected_scatter(s, tensor, idx, upd):
    op, kind, dtype = s["op"], s["kind"], tf_dtype(s["dtype"])
    shape, depth = tuple(s["shape"]), s["depth"]
    policy, default = policy_of(s)
    ours_xla = xla(s) and tso.xla_uses_our_kernels()
    # CLIP: clamped indices, then IGNORE; FILL: IGNORE, a gather's bad rows
    # then set to the default fill value. Under XLA without our kernels,
    # TensorFlow's ops: scatters drop bad rows, gathers clamp them.
    ignore = not default or (xla(s) and not ours_xla)
    given = idx
    if policy == "CLIP" or (xla(s) and not ours_xla and default and kind == "GatherNd"):
        idx = ref.clip(idx, shape)
    shape_errors = error_classes(s, runtime=False)
    runtime_errors = error_classes(s)
    if kind != "GatherNd":
        if idx.ndim - 1 + len(shape) - depth < 1:
            return Error(shape_errors, r"updates must have rank at least 1", what="shape")
        if np.prod(shape, dtype=np.int64) == 0 and idx.size > 0:
            return Error(shape_errors, r"Indices and updates specified for empty output shape",
                         what="shape")
    try:
        if kind == "GatherNd":
            got = ref.gather(tensor, idx, dtype, ignore=ignore)
            if policy == "FILL":
                got = ref.fill(got, given, shape, ref.fill_value(dtype))
            return Value(got, same())
        if kind == "ArgScatter":
            want = arg_scatter_reference("max" if "_max_" in op else "min", tensor, idx, upd,
                                         ignore)
            result = Value(want, check_tuple(same(nan_bits=False), same()))
        else:
            check = same(nan_bits(op))
            if op == "scatter_nd" and xla(s):
                # docs/xla.md: XLA folds 0 + x into x, so a lone -0.0 row
                # stays -0.0 there (TensorFlow's own scatter_nd too)
                check = zero_signs_aside(check)
            result = Value(ref.scatter(REF_OP[op], tensor, idx, upd, dtype, ignore=ignore), check)
    except ref.BadIndex as e:
        row = row_str(e.index)
        if kind != "GatherNd":
            return Error(runtime_errors, re.escape(f"indices[{e.row}] = {row} does not index into "
                                                   f"shape {shape_str(shape)}"), what="bad_row")
        if np.prod(shape, dtype=np.int64) == 0:
            return Error(runtime_errors, re.escape(
                "Requested more than 0 entries, but params is empty.  Params shape: "
                + shape_str(shape)), what="empty_params")
        position = positions(e.row, idx.shape[:-1])
        return Error(runtime_errors, re.escape(f"indices[{position}] = {row} does not index "
                                               f"into param shape {shape_str(shape)}"),
                     what="bad_row")
    if default and not xla(s):
        keys = []
        for i, slot, row in ref._rows(idx, shape):
            keys.append((i, slot, row_str(row)))
        wrong = promise_error(s.get("hints"), keys, "indices")
        if wrong:
            return Error(runtime_errors, wrong, what="promise")
    return result


def run_scatter(ctx):
    s = ctx.spec
    op, kind, dtype = s["op"], s["kind"], tf_dtype(s["dtype"])
    shape, depth, outer = tuple(s["shape"]), s["depth"], tuple(s["outer"])
    rng = np.random.default_rng(s["seed"])
    tensor = (ref.zeros(shape, dtype) if kind == "ScatterNd"
              else random_values(rng, s["dtype"], shape, s["specials"]))
    idx = scatter_indices(rng, s)
    upd = random_values(rng, s["dtype"], outer + shape[depth:], s["specials"])
    expected = expected_scatter(s, tensor, idx, upd)
    policy = s["policy"]
    hints = s.get("hints")
    kw = {"bad_indices_policy": policy}
    if hints:
        kw.update(indices_are_sorted=hints["sorted"], unique_indices=hints["unique"])
    eager_idx = tf.constant(idx)
    if s["indices_as"] == "numpy":
        eager_idx = idx
    elif s["indices_as"] == "list" and idx.size:
        eager_idx = idx.tolist()
    args = [Arg(tensor, dtype), Arg(idx, eager=eager_idx)]
    if kind != "GatherNd":
        args.append(Arg(upd, dtype))
    out_type = tf_dtype(s["index_dtype"]) if s["seed"] % 2 else tf.int64

    def call(*a):
        if kind == "GatherNd":
            return tso.gather_nd(a[0], a[1], **kw)
        if kind == "ScatterNd":
            # shape as the indices' dtype (the kernel's own) or int64 (widened)
            return tso.scatter_nd(a[1], a[2], tf.cast(tf.shape(a[0]), out_type), **kw)
        return tuple(getattr(tso, op)(a[0], a[1], a[2], **kw)) if kind == "ArgScatter" \
            else getattr(tso, op)(a[0], a[1], a[2], **kw)

    verdict(ctx, attempt(lambda: run_mode(s, call, args)), expected)
    tf_scatter_parity(ctx, tensor, idx, upd, expected)


def tf_scatter_parity(ctx, tensor, idx, upd, expected):
    """TensorFlow 2.21's CPU kernel for the case, where it has one with our
    semantics: int32/int64 indices for scatters (gather_nd also int16),
    depth >= 1 and indices of rank >= 2 for scatters (TF reads rank-1
    indices as N rows of depth 1, then rejects every shape), no gather from
    scalar or empty params; no CLIP or FILL (TensorFlow has neither)."""
    s = ctx.spec
    op, kind = s["op"], s["kind"]
    row = _table.BY_PY[op]
    policy, _ = policy_of(s)
    if not row.tf or policy in ("CLIP", "FILL"):
        return
    if kind == "GatherNd":
        if tensor.ndim < 1 or (tensor.size == 0 and np.prod(idx.shape[:-1]) > 0):
            return
    elif s["index_dtype"] == "int16" or s["depth"] < 1 or idx.ndim < 2:
        return
    dtype = tf_dtype(s["dtype"])
    raw = getattr(tf.raw_ops, row.tf)
    i = tf.constant(idx)

    def theirs():
        if kind == "GatherNd":
            return raw(params=tf.constant(tensor, dtype), indices=i, bad_indices_policy=policy)
        u = tf.constant(upd, dtype)
        if kind == "ScatterNd":
            return raw(indices=i, updates=u, shape=tf.constant(s["shape"], i.dtype),
                       bad_indices_policy=policy)
        return raw(tensor=tf.constant(tensor, dtype), indices=i, updates=u,
                   bad_indices_policy=policy)

    if isinstance(expected, Error):
        if expected.what == "bad_row":
            compare_tf(ctx, theirs, Error((IAE,), r"does not index"))
        return
    # TF's answer is the reference's (no hints, no XLA: TensorFlow eagerly)
    if xla(s):
        s_eager = dict(s, mode="eager", hints=None)
        want = expected_scatter(s_eager, tensor, idx, upd)
        if isinstance(want, Error):
            return
        expected = want
    compare_tf(ctx, theirs, Value(expected.value, same()))


# ------------------------------------------------------ segment family

def segment_inputs(rng, s):
    """(data, ids) for the unsorted segment family."""
    dtype = s["dtype"]
    grid = s.get("grid")
    ids_shape = list(s["ids_shape"])
    outer = ids_shape[:-1] if grid is not None else ids_shape
    scale = 3.0 if s["kind"] == "Groupwise" else 1.0
    data = random_values(rng, dtype, outer + list(s["slice"]), s.get("specials"), scale)
    info = np.iinfo(tf_dtype(s["index_dtype"]).as_numpy_dtype)
    n = int(np.prod(outer, dtype=np.int64))
    hints = s.get("hints")
    if grid is not None:
        depth = len(grid)
        rows = np.stack([rng.integers(0, max(d, 1), size=n) for d in grid], axis=-1) \
            if depth else np.zeros((n, 0), np.int64)
        if hints and n:
            dims = [max(d, 1) for d in grid]
            cells = int(np.prod(dims))
            flat = (np.sort(rng.choice(cells, size=n, replace=False))
                    if hints["unique"] and n <= cells
                    else np.sort(np.ravel_multi_index(tuple(rows.T), dims)))
            flat = flat if hints["arrange"] else flat[::-1]
            rows = np.stack(np.unravel_index(flat, dims), axis=-1)
        rows = rows.astype(np.int64)
        for r in rng.choice(n, size=min(s["nbad"], n), replace=False) if n else []:
            d = rng.integers(0, depth)
            rows[r, d] = (rng.choice([info.max, info.min, info.max - 1]) if s["extreme"]
                          else rng.choice([-1, -2, grid[d], grid[d] + 1]))
        ids = rows.reshape(ids_shape)
    else:
        num = s["num_segments"]
        flat = rng.integers(0, max(num, 1), size=n).astype(np.int64)
        if hints and n:
            if hints["unique"] and n <= num:
                flat = np.sort(rng.choice(num, size=n, replace=False))
            else:
                flat = np.sort(flat)
            flat = flat if hints["arrange"] else flat[::-1]
        if s.get("negatives") and n:
            neg = rng.random(n) < 0.3
            flat[neg] = (rng.choice([-1, -2, info.min], size=int(neg.sum())) if s["extreme"]
                         else -1 - rng.integers(0, 3, size=int(neg.sum())))
        for r in rng.choice(n, size=min(s["nbad"], n), replace=False) if n else []:
            flat[r] = (rng.choice([info.max, info.max - 1]) if s["extreme"]
                       else num + rng.integers(0, 2))
        ids = flat.reshape(ids_shape)
    return data, ids.astype(info.dtype)


def segment_plan(s, ids):
    """What the ids mean under the case's policy and mode: (flat [n] int64,
    -1 where a row is dropped; the number of flat segments; an Error or None)."""
    policy, default = policy_of(s)
    grid = s.get("grid")
    raising = default and not xla(s)  # under XLA bad ids and grid rows are dropped
    errors = error_classes(s)
    if grid is not None:
        outer = ids.shape[:-1]
        rows = ids.reshape(-1, len(grid)).astype(np.int64)
        if policy == "CLIP":
            rows = ref.clip(rows, grid).astype(np.int64)
        flat = np.full(len(rows), -1, np.int64)
        for r, row in enumerate(rows):
            bad = any(v < 0 or v >= d for v, d in zip(row, grid))
            if bad:
                if raising:
                    return None, None, Error(errors, re.escape(
                        f"segment_ids[{positions(r, outer)}] = "
                        f"{row_str(ids.reshape(-1, len(grid))[r])} does not index into shape "
                        f"{shape_str(grid)}"), what="bad_row")
                continue
            flat[r] = int(np.ravel_multi_index(tuple(int(v) for v in row), grid)) if grid else 0
        cells = int(np.prod(grid, dtype=np.int64))
        keys = [(positions(r, outer), int(f) if f >= 0 else None) for r, f in enumerate(flat)]
        return flat, cells, _segment_promise(s, keys, errors)
    num = s["num_segments"]
    flat = ids.reshape(-1).astype(np.int64)
    out = np.where(flat < 0, -1, flat)
    for r, v in enumerate(flat):
        if v >= num:
            if raising:
                where = f"[{positions(r, ids.shape)}]" if ids.ndim else ""  # TensorFlow's
                return None, None, Error(errors, re.escape(
                    f"segment_ids{where} = {int(v)} is out of range [0, {num})"), what="bad_row")
            out[r] = num - 1 if policy == "CLIP" and num > 0 else -1
    keys = [(positions(r, ids.shape), int(f) if f >= 0 else None) for r, f in enumerate(out)]
    return out, num, _segment_promise(s, keys, errors)


def _segment_promise(s, keys, errors):
    _, default = policy_of(s)
    if not default or xla(s):
        return None
    wrong = promise_error(s.get("hints"), [(p, k, str(k)) for p, k in keys], "segment_ids")
    return Error(errors, wrong, what="promise") if wrong else None


def identity(op, dtype):
    dtype = tf_dtype(dtype)
    if op.endswith("sum"):
        return 0
    if op.endswith("prod"):
        return 1
    return dtype.max if op.endswith("min") else dtype.min


def reduce_rows(op, rows, flat, nout, dtype, first_row=False):
    """The unsorted segment reduction of rows [n, S] by flat ids (-1 dropped)
    into [nout, S], in index order, with TensorFlow's CPU rules: empty
    segments hold the identity (0, 1, the dtype's highest / lowest); max
    keeps the row unless it is below the result (a NaN row replaces the
    result, a later number replaces a NaN), min likewise. `first_row`: a
    segment starts from its first row (the sorted kernels: a lone +inf
    stays +inf in a min, a lone -0.0 stays -0.0 in a sum)."""
    npd = ref.np_dtype(tf_dtype(dtype))
    out = np.full((nout, rows.shape[1]), identity(op, dtype), dtype=npd)
    started = np.zeros(nout, bool)
    with np.errstate(all="ignore"):
        for i, sid in enumerate(flat):
            if sid < 0:
                continue
            if first_row and not started[sid]:
                started[sid] = True
                out[sid] = rows[i]
                continue
            o, r = out[sid], rows[i]
            if op.endswith("sum"):
                out[sid] = o + r
            elif op.endswith("prod"):
                out[sid] = flush_denormals(o * r, dtype)
            elif op.endswith("max"):
                out[sid] = np.where(r < o, o, r)
            else:
                out[sid] = np.where(o < r, o, r)
    return out


def abs_scale(rows, flat, nout):
    """Per segment and element: the sum of |x| over its rows, and its row
    count (float64): the error bound of a sum in another order."""
    a = np.abs(rows.astype(np.complex128 if rows.dtype.kind == "c" else np.float64))
    a = np.where(np.isfinite(a), a, 0)
    total = np.zeros((nout, rows.shape[1]))
    count = np.zeros((nout, 1))
    for i, sid in enumerate(flat):
        if sid >= 0:
            total[sid] += a[i]
            count[sid] += 1
    return total, count


def groupwise_reference(op, x, flat, nout, ddof):
    """test_groupwise.py's reference in float64, rows flattened; dropped rows
    (id -1) give 0 (per-row ops)."""
    rows = np.asarray(x, np.float64)
    per_row = np.zeros_like(rows)
    per_segment = np.zeros((nout, rows.shape[1]))
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(nout + 1))
    members = {s: order[bounds[s]:bounds[s + 1]] for s in range(nout)
               if op not in PER_ROW or bounds[s + 1] > bounds[s]}
    for s, at in members.items():
        r = rows[at]
        with np.errstate(all="ignore"):
            if op in ("segment_var", "segment_std"):
                n = r.shape[0]
                mean = r.sum(0) / n if n else np.full(rows.shape[1], np.nan)
                v = ((r - mean) ** 2).sum(0) / (n - ddof) if n - ddof > 0 \
                    else np.full(rows.shape[1], np.nan)
                per_segment[s] = np.sqrt(v) if op == "segment_std" else v
                continue
            m = r.max(0) if r.shape[0] else np.full(rows.shape[1], -np.inf)
            if r.shape[0] and np.isnan(r).any(0).any():
                m = np.where(np.isnan(r).any(0), np.nan, m)
            shift = np.where(np.isfinite(m), m, 0.0)
            total = np.exp(r - shift).sum(0)
            if op == "segment_logsumexp":
                per_segment[s] = shift + np.log(total)
            elif op == "segment_log_softmax":
                per_row[at] = (r - shift) - np.log(total)
            else:
                per_row[at] = np.exp(r - shift) / total
    return per_row if op in PER_ROW else per_segment


def arg_segment_reference(kind, rows, flat, nout, dtype):
    dt = tf_dtype(dtype)
    worst = (dt.min if kind == "max" else dt.max)
    npd = ref.np_dtype(dt)
    out = np.full((nout, rows.shape[1]), worst, dtype=npd)
    arg = np.full(out.shape, -1, np.int64)
    for i, sid in enumerate(flat):
        if sid < 0:
            continue
        takes = (arg[sid] < 0) | _beats(kind, rows[i], out[sid])
        out[sid][takes] = rows[i][takes]
        arg[sid][takes] = i
    return out, arg


def expected_segment(s, data, ids, flat, nout):
    """The Value of a segment-family call on valid (planned) ids."""
    op, kind, dtype = s["op"], s["kind"], s["dtype"]
    grid = s.get("grid")
    outer = ids.shape[:-1] if grid is not None else ids.shape
    slice_shape = tuple(data.shape[len(outer):])
    head = tuple(grid) if grid is not None else (nout,)
    width = int(np.prod(slice_shape, dtype=np.int64))
    rows = data.reshape(len(flat), width)
    floats = dtype in EPS
    loose = xla(s) and floats  # TensorFlow's ops under XLA: XLA's order of summation
    if kind == "UnsortedSegment":
        out = reduce_rows(op, rows, flat, nout, dtype).reshape(head + slice_shape)
        if loose and (op.endswith("sum") or op.endswith("prod")):
            total, count = abs_scale(rows, flat, nout)
            if op.endswith("sum"):
                atol = ((count + 2) * EPS[dtype] * total).reshape(out.shape)
                return Value(out, close(EPS[dtype] * 2, atol + 1e-300))
            return Value(out, close((rows.shape[0] + 2) * EPS[dtype] * 4,
                                    np.finfo(np.float32).tiny))
        if loose:  # min/max: the same numbers, signs of zero aside; NaN as XLA's
            return Value(out, xla_min_max(segments_with_nan(rows, flat, nout).reshape(out.shape)))
        return Value(out, product_check(op, dtype, len(flat)))
    if kind == "Normalized":
        sums = reduce_rows("sum", rows, flat, nout, dtype)
        ones = np.ones((len(flat), 1), sums.dtype)
        count = np.maximum(reduce_rows("sum", ones, flat, nout, dtype), 1).astype(sums.dtype)
        with np.errstate(all="ignore"):
            out = sums / (count if op.endswith("mean") else np.sqrt(count))
        out = out.astype(sums.dtype).reshape(head + slice_shape)
        total, n = abs_scale(rows, flat, nout)
        scale = (total / (np.maximum(n, 1) if op.endswith("mean") else np.sqrt(np.maximum(n, 1))))
        eps = EPS[dtype]
        atol = ((n + 4) * eps * scale).reshape(out.shape) + np.finfo(np.float32).tiny
        return Value(out, close(eps * 4, atol))
    if kind == "Groupwise":
        want = groupwise_reference(op, rows, flat, nout, s.get("ddof", 0))
        shape = data.shape if op in PER_ROW else head + slice_shape
        tol = GROUPWISE_TOL[dtype]
        return Value(want.reshape(shape), close(tol, tol))
    if kind == "ArgSegment":
        out, arg = arg_segment_reference("max" if "_max_" in op else "min", rows, flat, nout,
                                         dtype)
        return Value((out.reshape(head + slice_shape), arg.reshape(head + slice_shape)),
                     check_tuple(same(nan_bits=False), same()))
    raise KeyError(kind)


def num_arg(s, num):
    """num_segments (or the grid) as the case passes it."""
    how = s["num_as"]
    if how == "int":
        return num
    if how == "numpy":
        return np.int64(num)
    if how == "list":
        return list(num)
    dtype = tf.int32 if how == "tensor32" else tf.int64
    return tf.constant(num, dtype)


def call_segment(s, data, ids, num):
    """Our function on (data, ids, num_segments) in the case's mode."""
    op, kind, dtype = s["op"], s["kind"], tf_dtype(s["dtype"])
    kw = {"bad_indices_policy": s["policy"]}
    hints = s.get("hints")
    if hints:
        kw.update(indices_are_sorted=hints["sorted"], unique_indices=hints["unique"])
    if "ddof" in s:
        kw["ddof"] = s["ddof"]
    f = getattr(tso, op)
    eager_ids = None
    if s.get("ids_as") == "numpy":
        eager_ids = ids
    elif s.get("ids_as") == "list" and ids.size:
        eager_ids = ids.tolist()
    args = [Arg(data, dtype), Arg(ids, eager=eager_ids)]
    passed = num_arg(s, num)
    grid = s.get("grid") is not None
    as_arg = isinstance(passed, tf.Tensor) and not xla(s)  # XLA: a compile-time constant
    if as_arg:
        args.append(Arg(passed, unknown=[None] if grid else None))

    def call(d, i, *n):
        out = f(d, i, n[0] if n else passed, **kw)
        return tuple(out) if kind == "ArgSegment" else out

    return run_mode(s, call, args)


def run_segment(ctx):
    s = ctx.spec
    if s.get("hostile"):
        return run_segment_hostile(ctx)
    rng = np.random.default_rng(s["seed"])
    data, ids = segment_inputs(rng, s)
    grid = s.get("grid")
    num = grid if grid is not None else s["num_segments"]
    flat, nout, error = segment_plan(s, ids)
    expected = error if error is not None else expected_segment(s, data, ids, flat, nout)
    if error is None and xla(s) and nout == 0:
        # docs/segments.md: XLA refuses a scatter into zero segments (TensorFlow's
        # own ops too); eagerly the result is empty
        expected = Error((IAE,), r"is of size zero", or_value=expected)
    ours = attempt(lambda: call_segment(s, data, ids, num))
    verdict(ctx, ours, expected)
    tf_segment_parity(ctx, data, ids, flat, nout, expected, ours)


def tf_segment_parity(ctx, data, ids, flat, nout, expected, ours):
    """tf.math.unsorted_segment_* (and _mean, _sqrt_n) on the ids our policy
    makes (dropped: -1, which TensorFlow drops; clamped; grid rows as flat
    cells), eagerly: bitwise our result (mean and sqrt_n where ours ran
    eagerly; in a function TensorFlow's grappler rewrites x / sqrt(n)); for
    an id >= num_segments under the default policy, TensorFlow's error, its
    message word for word ours."""
    s = ctx.spec
    op, kind = s["op"], s["kind"]
    if kind not in ("UnsortedSegment", "Normalized") or xla(s):
        return
    fn = getattr(tf.math, op)
    dtype = tf_dtype(s["dtype"])
    _, default = policy_of(s)
    if isinstance(expected, Error):
        # (TensorFlow returns an empty output without reading the ids)
        empty = data.size == 0 or s.get("num_segments") == 0
        if default and s.get("grid") is None and expected.what == "bad_row" and not empty:
            theirs = attempt(lambda: fn(tf.constant(data, dtype), tf.constant(ids),
                                        s["num_segments"]))
            if theirs[0] == "error" and tf_unavailable(theirs[1]):
                return
            ctx.tf = True
            verdict(ctx, theirs, Error((IAE,), r"is out of range"), who="TensorFlow")
            mine, their_text = bare(message(ours[1])), bare(message(theirs[1]))
            if mine != their_text:
                raise Mismatch(f"our message {mine!r} is not TensorFlow's {their_text!r}")
        return
    grid = s.get("grid")
    outer = ids.shape[:-1] if grid is not None else ids.shape
    tf_ids = flat.reshape(outer)

    def theirs():
        out = fn(tf.constant(data, dtype), tf.constant(tf_ids, tf.int64), nout)
        return tf.reshape(out, expected.value.shape) if grid is not None else out

    check = (same(nan_bits(op)) if kind == "UnsortedSegment" or s["mode"] == "eager"
             else expected.check)
    compare_tf(ctx, theirs, Value(ours[1], check))


def run_segment_hostile(ctx):
    """num_segments (or a grid) that is negative, overflows int64 with the
    slice, or is too big to allocate; valid ids and data."""
    s = ctx.spec
    h = s["hostile"]
    op, kind, dtype = s["op"], s["kind"], s["dtype"]
    rng = np.random.default_rng(s["seed"])
    slice_shape = list(s["slice"])
    width = int(np.prod(slice_shape, dtype=np.int64))
    if h["what"] == "grid":
        grid = h["value"]
        if h["class"] == "zero":
            ids = np.zeros((0, len(grid)), np.int64)
        else:
            ids = np.array([[min(1, max(d - 1, 0)) for d in grid], [0] * len(grid),
                            [min(3, max(d - 1, 0)) for d in grid]], np.int64)
        outer = [len(ids)]
        cells = 1
        for d in grid:
            cells *= int(d)
        num = grid
        s = dict(s, grid=grid, num_as="list", ids_shape=list(ids.shape))
    else:
        num = h["value"]
        ids = np.array([0, 1, 0], np.int64)
        outer = [3]
        cells = num
        s = dict(s, grid=None, num_segments=num, num_as="int", ids_shape=[3])
    data = random_values(rng, dtype, outer + slice_shape)
    size_class = h["class"]
    if size_class == "huge" and elements_overflow(cells, width):
        size_class = "overflow"
    result = None
    if op in PER_ROW:
        # the output is shaped like data (small): a correct result is also right
        keys = ids.reshape(len(data), int(np.prod(ids.shape[1:], dtype=np.int64)))
        compact = (np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
                   if len(keys) else np.zeros(0, np.int64))
        nout = int(compact.max()) + 1 if len(compact) else 0
        result = expected_segment(dict(s, grid=None, num_segments=nout), data,
                                  np.zeros(len(data), np.int64), compact, nout)
    elif size_class == "zero":
        shape = tuple(num) + tuple(slice_shape)
        npd = ref.np_dtype(tf_dtype(dtype))
        result = (Value((None, None), check_tuple(empty_of(shape, npd), empty_of(shape, np.int64)))
                  if kind == "ArgSegment" else Value(None, empty_of(shape, npd)))
    if size_class == "zero":
        expected = result
    elif size_class == "negative":
        expected = Error((IAE, VE))
    elif size_class == "overflow":
        # a grid's cell count that overflows must be named as such (not as
        # an id out of range of the wrapped count); otherwise an intermediate
        # smaller than the output may be what fails to allocate first (the
        # row counts of mean and sqrt_n, as in TensorFlow's functions)
        expected = (Error((IAE, VE), OVERFLOW, or_value=result) if h["what"] == "grid"
                    else Error((IAE, VE, OOM), or_value=result))
    else:
        expected = Error((IAE, VE, OOM), or_value=result)
    verdict(ctx, attempt(lambda: call_segment(s, data, ids, num)), expected)


# -------------------------------------------------------- sorted segments

def sorted_ids(rng, s, info):
    n = s["n"]
    ids = np.sort(rng.integers(0, s["max_id"] + 1, size=n)).astype(np.int64)
    k = min(s["negatives"], n)
    if k:
        neg = np.sort(rng.choice([-1, -2, -3, int(info.min)], size=k))
        ids[:k] = neg
    if s["decrease"] and n - k >= 2:
        p = int(rng.integers(k + 1, n))
        if ids[p - 1] == 0:
            ids[p - 1] = 1
        ids[p] = ids[p - 1] - 1
    return ids


def sorted_problems(ids, default):
    """The first problem of sorted ids (a decrease under every policy; a
    negative id under the default one), as an Error regex, or None. The
    kernel names the first offending position; the message starts with
    TensorFlow's (test_sorted_segments.py)."""
    rows = int(ids[-1]) + 1 if len(ids) else 0
    for i, v in enumerate(ids):
        if i and v < ids[i - 1]:
            return re.escape(f"segment ids are not increasing: segment_ids[{i}] = {int(v)} "
                             f"follows segment_ids[{i - 1}] = {int(ids[i - 1])}")
        if default and v < 0:
            if rows <= 0:  # TensorFlow's words when the last id is negative too
                return (r"segment ids must be >= 0|" + re.escape(f"Segment id {int(v)} out of "
                                                                  f"range [0, {rows})"))
            return re.escape(f"Segment id {int(v)} out of range [0, {rows}), possibly because "
                             "'segment_ids' input is not sorted.")
    return None


def sorted_reference(op, data, ids, dtype):
    """segment_* of sorted ids (negative ones dropped): last id + 1 rows,
    each run reduced in index order; gaps 0 (prod 1); mean: the sum over the
    count in the dtype (integers: truncating division)."""
    nout = max(int(ids[-1]) + 1, 0) if len(ids) else 0
    rows = data.reshape(len(ids), int(np.prod(data.shape[1:], dtype=np.int64)))
    base = "sum" if op == "segment_mean" else op.rsplit("_", 1)[1]
    out = reduce_rows("segment_" + base, rows, ids, nout, dtype, first_row=True)
    present = np.zeros(nout, bool)
    present[ids[ids >= 0]] = True
    if op == "segment_mean":
        count = np.bincount(ids[ids >= 0], minlength=nout)
        npd = out.dtype
        if npd.kind in "iu":
            q = [[_trunc_div(int(v), int(c)) if c else 0 for v in row]
                 for row, c in zip(out.tolist(), count)]
            out = np.array(q, dtype=object).astype(npd) if nout else out
        else:
            with np.errstate(all="ignore"):
                out = (out / np.maximum(count, 1).astype(npd)[:, None]).astype(npd)
    gap = 1 if op == "segment_prod" else 0
    out[~present] = gap
    return out.reshape((nout,) + data.shape[1:])


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def run_sorted(ctx):
    s = ctx.spec
    op, dtype = s["op"], s["dtype"]
    rng = np.random.default_rng(s["seed"])
    info = np.iinfo(tf_dtype(s["index_dtype"]).as_numpy_dtype)
    policy, default = policy_of(s)
    h = s.get("hostile")
    if h:
        ids = np.array([0, 0, h["value"]], np.int64)
        s = dict(s, n=3, ids_as="tensor")
        info = np.iinfo(np.int64)
    else:
        ids = sorted_ids(rng, s, info)
    data = random_values(rng, dtype, [len(ids)] + list(s["slice"]), s.get("specials"))
    ids = ids.astype(info.dtype)
    eff = ids.astype(np.int64)
    if policy == "CLIP":
        eff = np.maximum(eff, 0)
    errors = error_classes(s)
    problem = sorted_problems(eff, default)
    if h:
        width = int(np.prod(s["slice"], dtype=np.int64))
        size_class = "overflow" if h["class"] == "overflow" or elements_overflow(
            int(h["value"]) + 1, width) else "huge"
        expected = (Error((IAE, VE)) if size_class == "overflow" else Error((IAE, VE, OOM)))
    elif problem:
        expected = Error(errors, problem)
    else:
        kept = eff >= 0
        out = sorted_reference(op, data[kept], eff[kept], dtype)
        runs = int(np.bincount(eff[kept]).max()) if kept.any() else 0
        expected = Value(out, product_check(op, dtype, runs))
    eager_ids = {"numpy": ids, "list": ids.tolist() if ids.size else None}.get(s.get("ids_as"))
    args = [Arg(data, tf_dtype(dtype)), Arg(ids, eager=eager_ids)]
    fn = getattr(tso, op)

    def call(d, i):
        return fn(d, i, bad_indices_policy=s["policy"])

    ours = attempt(lambda: run_mode(s, call, args))
    verdict(ctx, ours, expected)
    if h:
        return
    # TensorFlow: its sorted kernel on the rows our policy keeps, bitwise our
    # result where each run has at most 8 rows (TensorFlow's kernel sums
    # longer runs of wide slices in another order), else its unsorted kernel
    # for sums and products without NaN, inf or -0.0 (index order; gaps made
    # segment_*'s); for a bad input its error, whose message ours starts with.
    theirs_sorted = getattr(tf.math, op)
    tdt = tf_dtype(dtype)
    if isinstance(expected, Error):
        kept = eff >= 0 if not default else np.ones(len(eff), bool)
        tf_ids = eff[kept] if not default else ids
        tf_error_parity(ctx, lambda: theirs_sorted(tf.constant(data[kept], tdt),
                                                   tf.constant(tf_ids)), ours)
        return
    kept = eff >= 0
    d, i = data[kept], eff[kept]
    runs = np.bincount(i).max() if len(i) else 0
    if op in ("segment_min", "segment_max") and np.isnan(d.astype(np.float64)).any():
        # docs/segments.md: TensorFlow's sorted min / max reduce a run with
        # Eigen's vectorised reduction, whose NaN result depends on the lanes
        return
    if runs <= 8:
        # (min / max: the sign of a zero result is the lanes' too; sum and
        # mean: docs/api.md, a run of -0.0 rows sums to -0.0, TensorFlow's to +0.0)
        minmax = op in ("segment_min", "segment_max")
        check = same(nan_bits(op))
        if op in ("segment_sum", "segment_mean"):
            check = zero_signs_aside(check)
        compare_tf(ctx, lambda: theirs_sorted(tf.constant(d, tdt), tf.constant(i)),
                   Value(ours[1], close(0.0) if minmax else check))
    elif op in ("segment_sum", "segment_prod") and not s.get("specials"):
        nout = int(i[-1]) + 1
        unsorted = getattr(tf.math, "unsorted_" + op)
        present = np.bincount(i, minlength=nout) > 0

        def via_unsorted():
            out = unsorted(tf.constant(d, tdt), tf.constant(i), nout).numpy()
            out[~present] = 1 if op == "segment_prod" else 0
            return out
        compare_tf(ctx, via_unsorted, Value(ours[1], same(nan_bits(op))))


# -------------------------------------------------------- sparse segments

def sparse_inputs(rng, s):
    rows, n = s["rows"], s["n"]
    data = random_values(rng, s["dtype"], [rows] + list(s["slice"]), s.get("specials"))
    iinfo = np.iinfo(tf_dtype(s["index_dtype"]).as_numpy_dtype)
    dinfo = np.iinfo(tf_dtype(s["id_dtype"]).as_numpy_dtype)
    indices = rng.integers(0, max(rows, 1), size=n).astype(np.int64)
    ids = np.sort(rng.integers(0, s["max_id"] + 1, size=n)).astype(np.int64)
    last = int(ids[-1]) if n else -1
    num = last + 1 + s["extra_segments"] if s["with_num"] else None
    problem = s["problem"]
    if n and problem == "bad_index":
        for p in rng.choice(n, size=min(n, int(rng.integers(1, 3))), replace=False):
            indices[p] = (rng.choice([iinfo.max, iinfo.min]) if s["extreme"]
                          else rng.choice([-1, rows, rows + 1]))
    elif n and problem == "neg_id":
        k = int(rng.integers(1, min(n, 2) + 1))
        ids[:k] = np.sort(rng.choice([-1, -2, int(dinfo.min)] if s["extreme"] else [-1, -2],
                                     size=k))
    elif n and problem == "big_id" and num is not None:
        k = int(rng.integers(1, min(n, 2) + 1))
        big = [num, num + 1] + ([int(dinfo.max)] if s["extreme"] else [])
        ids[n - k:] = np.sort(rng.choice(big, size=k))
    elif n >= 2 and problem == "decrease":
        p = int(rng.integers(1, n))
        if ids[p - 1] == 0:
            ids[p - 1] = 1
        ids[p] = ids[p - 1] - 1
    if s["rows"] == 0 and n and problem == "none":
        problem = "bad_index"  # every index is out of range of no rows
    return data, indices.astype(iinfo.dtype), ids.astype(dinfo.dtype), num


def sparse_plan(s, data, indices, ids, num):
    """(kept mask, effective indices, effective ids, output rows, Error or None)."""
    policy, default = policy_of(s)
    rows = data.shape[0]
    idx = indices.astype(np.int64)
    sid = ids.astype(np.int64)
    if policy == "CLIP":
        idx = np.minimum(np.maximum(idx, 0), rows - 1)
        sid = np.maximum(sid, 0)
        if num is not None:
            sid = np.minimum(sid, num - 1)
    raising = default and not xla(s)
    errors = error_classes(s)
    if not xla(s):
        if raising:
            wrong = tf_sparse_error(idx, sid, rows, num)
            if wrong is not None:
                return None, None, None, None, Error(errors, wrong)
        for i in range(1, len(sid)):  # IGNORE drops bad ids, not disorder
            if sid[i] < sid[i - 1]:
                return None, None, None, None, Error(errors, re.escape(
                    f"segment ids are not increasing: segment_ids[{i}] = {int(sid[i])} "
                    f"follows segment_ids[{i - 1}] = {int(sid[i - 1])}"))
    kept = (idx >= 0) & (idx < rows) & (sid >= 0)
    if num is not None:
        kept &= sid < num
    nout = num if num is not None else (max(int(sid[-1]) + 1, 0) if len(sid) else 0)
    return kept, idx, sid, nout, None


def tf_sparse_error(idx, sid, rows, num):
    """The regex of TensorFlow's first error for sparse_segment_*, in the
    order its kernel meets them (the output's length, then run by run: an id
    below the run's, the run's id out of range, an index of the run's rows
    out of range), or None. Ours adds the position where docs/api.md says."""
    n = len(sid)
    if n and sid[-1] == np.iinfo(np.int64).max:
        return re.escape("Last segment id must be < kintmax")
    last = int(sid[-1]) + 1 if n else 0
    out = last
    if num is not None:
        if num < last:
            i = int(np.argmax(sid >= num))
            return re.escape(f"segment ids must be < num_segments: segment_ids[{i}] = "
                             f"{int(sid[i])} is out of range [0, {num})")
        out = num
    if out < 0 or (n and out == 0):
        return re.escape("segment ids must be >= 0")
    start = 0
    for end in range(1, n + 1):
        if end < n and sid[end] == sid[start]:
            continue
        if end < n and sid[end] < sid[start]:
            return re.escape(f"segment ids are not increasing: segment_ids[{end}] = "
                             f"{int(sid[end])} follows segment_ids[{end - 1}] = "
                             f"{int(sid[end - 1])}")
        if not 0 <= sid[start] < out:
            return re.escape(f"Segment id {int(sid[start])} out of range [0, {out}), possibly "
                             "because 'segment_ids' input is not sorted.")
        for i in range(start, end):
            if not 0 <= idx[i] < rows:
                return re.escape(f"Bad: indices[{i}] == {int(idx[i])} out of range [0, {rows})")
        start = end
    return None


def run_sparse(ctx):
    s = ctx.spec
    op, dtype = s["op"], s["dtype"]
    rng = np.random.default_rng(s["seed"])
    h = s.get("hostile")
    if h:
        return run_sparse_hostile(ctx)
    data, indices, ids, num = sparse_inputs(rng, s)
    kept, idx, sid, nout, error = sparse_plan(s, data, indices, ids, num)
    if error is not None:
        expected = error
    else:
        rows = data.reshape(data.shape[0], int(np.prod(data.shape[1:], dtype=np.int64)))
        picked = (rows[np.where(kept, idx, 0)] if len(rows)
                  else np.zeros((len(idx), rows.shape[1]), rows.dtype))
        flat = np.where(kept, sid, -1)
        out = reduce_rows("sum", picked, flat, nout, dtype)
        shape = (nout,) + data.shape[1:]
        if dtype in EPS:
            total, count = abs_scale(picked, flat, nout)
            exact64 = np.zeros((nout, rows.shape[1]))
            for i, f in enumerate(flat):
                if f >= 0:
                    exact64[f] += picked[i].astype(np.float64)
            eps = EPS[dtype]
            if op == "sparse_segment_sum":
                want, scale = exact64, total
            else:
                div = np.maximum(count, 1) if op == "sparse_segment_mean" \
                    else np.sqrt(np.maximum(count, 1))
                want, scale = exact64 / div, total / div
            atol = (count + 4) * eps * scale + np.finfo(np.float32).tiny
            want = want.astype(ref.np_dtype(tf_dtype(dtype)))
            expected = Value(want.reshape(shape), close(eps * 4, atol.reshape(shape)))
        else:
            expected = Value(out.reshape(shape), same(nan_bits(op)))
    nump = None if num is None else num_arg(s, num)
    tdt = tf_dtype(dtype)
    args = [Arg(data, tdt), Arg(indices), Arg(ids)]
    fn = getattr(tso, op)

    def call(d, i, g):
        return fn(d, i, g, num_segments=nump, bad_indices_policy=s["policy"])

    ours = attempt(lambda: run_mode(s, call, args))
    verdict(ctx, ours, expected)
    # TensorFlow (eagerly): on the rows our policy keeps, bitwise our result
    # (its order of summation is ours); for a bad input under the default
    # policy its error, whose message ours starts with.
    theirs = getattr(tf.sparse, op[len("sparse_"):])
    _, default = policy_of(s)
    if isinstance(expected, Error):
        # (TensorFlow's last id + 1 overflows for an id of the dtype's
        # maximum, and it keeps the output's length in the indices' dtype:
        # int64 ids past int32 are cut, docs/api.md; its message then names
        # something else)
        wide = ids.size and (ids.max() == np.iinfo(ids.dtype).max or (
            indices.dtype != np.int64 and np.abs(ids.astype(np.float64)).max() >= 2**31 - 1))
        if not default or xla(s) or wide:
            return
        tf_error_parity(ctx, lambda: theirs(tf.constant(data, tdt), tf.constant(indices),
                                            tf.constant(ids), num_segments=num), ours)
        return
    if xla(s):
        return
    k_idx, k_ids = idx[kept], sid[kept]
    compare_tf(ctx, lambda: theirs(tf.constant(data, tdt), tf.constant(k_idx),
                                   tf.constant(k_ids), num_segments=nout),
               Value(ours[1], same(nan_bits(op))))


def run_sparse_hostile(ctx):
    s = ctx.spec
    h = s["hostile"]
    op, dtype = s["op"], s["dtype"]
    rng = np.random.default_rng(s["seed"])
    data = random_values(rng, dtype, [3] + list(s["slice"]))
    width = int(np.prod(s["slice"], dtype=np.int64))
    indices = np.array([0, 1, 2], np.int64)
    if h["what"] == "num_segments":
        ids, num = np.array([0, 1, 1], np.int64), h["value"]
        rows = num
    else:
        ids, num = np.array([0, 0, h["value"]], np.int64), None
        rows = h["value"] + 1
    size_class = h["class"]
    if size_class == "huge" and elements_overflow(rows, width):
        size_class = "overflow"
    if size_class == "negative":
        expected = Error((IAE, VE))
    elif size_class == "overflow":
        expected = Error((IAE, VE))
    else:
        expected = Error((IAE, VE, OOM))
    args = [Arg(data, tf_dtype(dtype)), Arg(indices), Arg(ids)]
    fn = getattr(tso, op)

    def call(d, i, g):
        return fn(d, i, g, num_segments=num, bad_indices_policy=s["policy"])

    verdict(ctx, attempt(lambda: run_mode(s, call, args)), expected)


# ------------------------------------------------------------------- CSR

def run_csr(ctx):
    s = ctx.spec
    op, dtype = s["op"], s["dtype"]
    base = op[:-len("_csr")]
    rng = np.random.default_rng(s["seed"])
    h = s.get("hostile")
    sdt = np.int32 if s["splits_dtype"] == "int32" else np.int64
    if h:
        data_rows = 3
        splits = np.array([data_rows if v == "rows" else v for v in h["value"]], np.int64)
        invalid = "hostile"
    else:
        lengths = rng.integers(0, s["lengths_max"] + 1, size=s["nrows"])
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        data_rows = int(splits[-1])
        invalid = s["invalid"]
        if invalid == "start":
            splits[0] = -1  # (not 1: that could make a decrease too)
        elif invalid == "decrease":
            if len(splits) >= 3:
                p = int(rng.integers(1, len(splits) - 1))
                splits[p] = splits[p - 1] - 1
            else:
                invalid = "end"
        if invalid == "end":  # past data's rows (one fewer could make a decrease too)
            if len(splits) == 1:
                splits = np.zeros(2, np.int64)
            splits[-1] += 1
        elif invalid == "empty":
            splits = np.zeros(0, np.int64)
    splits = splits.astype(sdt)
    data = random_values(rng, dtype, [data_rows] + list(s["slice"]), s.get("specials"))
    messages = {"start": "row_splits must start at 0", "decrease": "row_splits must not decrease",
                "end": "row_splits must end at data's row count", "empty": "row_splits is empty",
                "hostile": None}
    if invalid:
        # (a graph's Assert writes data's as data\'s)
        regex = messages[invalid] and re.escape(messages[invalid]).replace("'", r"\\?'")
        expected = Error((IAE,), regex)
    else:
        ids = np.repeat(np.arange(len(splits) - 1), np.diff(splits)).astype(np.int64)
        out = sorted_reference(base, data, ids, dtype)
        nrows = len(splits) - 1
        if out.shape[0] < nrows:  # empty rows at the end: segment_*'s gap value
            gap = np.full((nrows - out.shape[0],) + out.shape[1:],
                          1 if base == "segment_prod" else 0, out.dtype)
            out = np.concatenate([out, gap])
        if xla(s) and dtype in EPS:
            rows = data.reshape(data_rows, int(np.prod(data.shape[1:], dtype=np.int64)))
            total, count = abs_scale(rows, ids, nrows)
            eps = EPS[dtype]
            if base in ("segment_sum", "segment_mean"):
                scale = total / (np.maximum(count, 1) if base == "segment_mean" else 1)
                atol = ((count + 4) * eps * scale).reshape(out.shape)
                expected = Value(out, close(eps * 4, atol + 1e-300))
            elif base == "segment_prod":
                expected = Value(out, close((count.max(initial=0) + 4) * eps * 4,
                                            np.finfo(np.float32).tiny))
            else:
                # docs/segments.md: TensorFlow's unsorted op (XLA's) starts a maximum
                # from the lowest finite value, so a row of only -inf gives that
                bound, inf = ((tf_dtype(dtype).min, -np.inf) if base == "segment_max"
                              else (tf_dtype(dtype).max, np.inf))
                if base in ("segment_max", "segment_min") and not dtype.startswith("complex"):
                    out = np.where(out == inf, np.asarray(bound, out.dtype), out)
                expected = Value(out, xla_min_max())
        else:
            runs = int(np.diff(splits).max(initial=0))
            expected = Value(out, product_check(base, dtype, runs))
    fn = getattr(tso, op)
    tdt = tf_dtype(dtype)
    if s.get("ragged"):
        ragged = tf.RaggedTensor.from_row_splits(tf.constant(data, tdt), tf.constant(splits))
        args = [Arg(ragged)]

        def call(r):
            return fn(r)
    else:
        args = [Arg(data, tdt), Arg(splits)]

        def call(d, sp):
            return fn(d, sp)
    verdict(ctx, attempt(lambda: run_mode(s, call, args)), expected)


def message_inputs(rng, s):
    """A case's rows, ids (bad ones planted) and weights, as NumPy arrays."""
    dtype = s["dtype"]
    inner = list(s["slice"])
    n_a, n_b, e = s["nodes"], s["nodes_b"], s["edges"]
    a = random_values(rng, dtype, [n_a] + inner, s["specials"])
    b = random_values(rng, dtype, [n_b] + inner, s["specials"])
    nd = s.get("num_segments", n_b)
    src = rng.integers(0, max(n_a, 1), size=e)
    dst = rng.integers(0, max(nd, 1), size=e)
    if s["negatives"] and e:
        dst[rng.random(e) < 0.3] = -1
    for k in rng.choice(e, size=min(s["nbad"], e), replace=False) if e else []:
        which = src if rng.random() < 0.5 else dst
        limit = n_a if which is src else nd
        which[k] = limit + int(rng.integers(0, 3)) if rng.random() < 0.6 \
            else -1 - int(rng.integers(0, 3))
    weights = None
    if s.get("weights") == "edge":
        weights = random_values(rng, dtype, [e])
    elif s.get("weights") == "head":
        weights = random_values(rng, dtype, [e, inner[0]])
    index = np.dtype(s["index_dtype"])
    return a, b, src.astype(index), dst.astype(index), weights


def run_message(ctx):
    """gather_reduce (kind GatherReduce) and edge_combine against the NumPy
    reference (reference.py), bitwise outside XLA; an id out of range under
    the default policy is an InvalidArgumentError naming the first bad
    edge."""
    s = ctx.spec
    rng = np.random.default_rng(s["seed"])
    gather = s["kind"] == "GatherReduce"
    if gather:
        s.setdefault("num_segments", s["nodes_b"])
    a, b, src, dst, weights = message_inputs(rng, s)
    policy, default = policy_of(s)
    src64, dst64 = src.astype(np.int64), dst.astype(np.int64)
    n_a, n_b = a.shape[0], (s["num_segments"] if gather else b.shape[0])
    if policy == "CLIP":
        src64 = np.clip(src64, 0, max(n_a - 1, 0)) if n_a else src64
        dst64 = np.minimum(dst64, n_b - 1) if gather else (np.clip(dst64, 0, max(n_b - 1, 0))
                                                           if n_b else dst64)
    bad_src = (src64 < 0) | (src64 >= n_a)
    bad_dst = (dst64 >= n_b) | ((dst64 < 0) & (not gather))
    dtype = tf_dtype(s["dtype"])
    if default and (bad_src | bad_dst).any():
        expected = Error(error_classes(s), r"(src|dst)\[\d+\] = -?\d+ is out of range",
                         what="bad_row")
    elif gather:
        out, _ = ref.gather_reduce(a, src64, dst64, n_b, weights, s["reduce"])
        expected = Value(out, close(EPS[s["dtype"]] * 64, EPS[s["dtype"]] * 64)
                         if xla(s) else same(nan_bits=False))
        if xla(s) and n_b == 0:  # XLA refuses a scatter into zero segments (docs/segments.md)
            expected = Error((IAE,), r"is of size zero", or_value=expected)
    else:
        out = ref.edge_combine(a, b, src64, dst64, s["edge_op"])
        expected = Value(out, close(EPS[s["dtype"]] * 64, EPS[s["dtype"]] * 64)
                         if xla(s) else same(nan_bits=False))
    kw = {"bad_indices_policy": s["policy"]}
    if gather:
        args = [Arg(a, dtype), Arg(src), Arg(dst)] + ([Arg(weights, dtype)] if weights is not None
                                                      else [])

        def call(x, i, j, *w):
            return tso.gather_reduce(x, i, j, n_b, weights=w[0] if w else None,
                                     reduce=s["reduce"], **kw)
    else:
        args = [Arg(a, dtype), Arg(b, dtype), Arg(src), Arg(dst)]

        def call(x, y, i, j):
            return tso.edge_combine(x, y, i, j, op=s["edge_op"], **kw)
    if s["mode"] == "function_unknown":
        for arg in args:
            arg.unknown = [None] * arg.tensor.shape.rank
    verdict(ctx, attempt(lambda: run_mode(s, call, args)), expected)


RUNNERS = {
    "ScatterNd": run_scatter,
    "TensorScatter": run_scatter,
    "GatherNd": run_scatter,
    "ArgScatter": run_scatter,
    "UnsortedSegment": run_segment,
    "Normalized": run_segment,
    "Groupwise": run_segment,
    "ArgSegment": run_segment,
    "SortedSegment": run_sorted,
    "SparseSegment": run_sparse,
    "CSR": run_csr,
    "GatherReduce": run_message,
    "EdgeCombine": run_message,
}


def run_scatter_hostile(ctx):
    """scatter_nd's shape negative, overflowing int64, too big to allocate,
    or zero times huge (a valid empty result); no rows."""
    s = ctx.spec
    h = s["hostile"]
    shape = h["value"]
    dtype = tf_dtype(s["dtype"] if s["dtype"] != "string" else "float32")
    depth = 1 if h["class"] == "zero" else len(shape)
    upd_shape = [0] + list(shape[depth:])
    kw = {"bad_indices_policy": s["policy"]}
    args = [Arg(np.zeros((0, depth), np.int64)), Arg(tf.zeros(upd_shape, dtype))]
    shape_arg = tf.constant(shape, tf.int64)
    as_arg = s["mode"] != "eager"
    if as_arg:
        args.append(Arg(shape_arg, unknown=[None]))

    def call(i, u, *sh):
        return tso.scatter_nd(i, u, sh[0] if sh else shape_arg, **kw)

    if h["class"] == "zero":
        expected = Value(None, empty_of(shape, dtype.as_numpy_dtype))
    elif h["class"] == "negative":
        expected = Error((IAE, VE), r"negative dimension|must not be negative|non-negative")
    elif h["class"] == "overflow":
        expected = Error((IAE, VE), OVERFLOW)
    else:
        expected = Error((IAE, VE, OOM))
    verdict(ctx, attempt(lambda: run_mode(s, call, args)), expected)


def run_spec(spec):
    """One case: {"status", "tf", "error_path", "detail"}."""
    ctx = Ctx(spec)
    start = time.time()
    try:
        kind = spec["kind"]
        if kind not in RUNNERS:
            raise KeyError(f"no fuzz runner for kind {kind!r}")
        if kind == "ScatterNd" and spec.get("hostile"):
            run_scatter_hostile(ctx)
        else:
            RUNNERS[kind](ctx)
        status, detail = "pass", ""
    except Mismatch as e:
        status, detail = "fail", str(e)
    except AssertionError as e:
        status, detail = "fail", f"{type(e).__name__}: {e}"
    except Exception:  # noqa: BLE001 - a fuzzer bug is a failure too
        status, detail = "fail", "fuzzer error: " + traceback.format_exc(limit=6)
    return {"status": status, "tf": ctx.tf, "error_path": ctx.error_path, "expect": ctx.expect,
            "detail": detail[:3000], "seconds": round(time.time() - start, 3),
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def worker_main():
    """Reads specs (JSON lines) from stdin, answers one JSON line each. A
    crash leaves no core file (a multi-GB one where core dumps are on): the
    limit is set here, not by the parent (preexec_fn is unsafe in its
    threads)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything TensorFlow prints goes to stderr, not the protocol
    out.write(json.dumps({"ready": True, "xla_ours": bool(tso.xla_uses_our_kernels())}) + "\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        spec = json.loads(line)
        if spec.get("op") == ABORT:
            os.abort()
        out.write(json.dumps(run_spec(spec)) + "\n")


def replay(text):
    spec = json.loads(text)
    result = run_spec(spec)
    print(json.dumps(spec))
    print(f"{result['status'].upper()}  (checked vs TensorFlow: {result['tf']}, error path: "
          f"{result['error_path']})")
    if result["detail"]:
        print(result["detail"])
    return 0 if result["status"] == "pass" else 1


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker_main()
    elif "--replay" in sys.argv:
        sys.exit(replay(sys.argv[sys.argv.index("--replay") + 1]))
    else:
        print(__doc__)
        sys.exit(2)
