"""Under tf.function(jit_compile=True). With XLA kernels in the library and no
GPU (xla_uses_our_kernels()), each call site of a tensor op compiles to XLA's
own scatter or gather with our policy around it, or, for large static ones,
to a custom call of our CPU kernel: on both paths the same results, bits,
policy and messages as eager code (a bad index is an InternalError, XLA's
class for every failed custom call). TF_SCATTER_OPS_XLA=ours|xla forces a
path; the `xla_path` fixture runs a test on each. Without XLA kernels the
wrappers lower to TensorFlow's own XLA-compilable ops: same results for
valid input, XLA's rules for bad indices. docs/xla.md says both."""

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops import ops
from tf_scatter_ops._dispatch import context as _calls
from tf_scatter_ops._base import library as _loader
from tf_scatter_ops._base import table as _table
import table_rows
import reference as ref

TF_VERSION = tuple(int(v) for v in tf.__version__.split(".")[:2])
OURS = ops.xla_uses_our_kernels()
# The skip reasons: what is missing where a test does not apply.
NOT_OURS = ("our XLA kernels do not run here: the library was built without them "
            "(tf_scatter_ops.built_with_xla() is False) or a GPU is visible")
NOT_LOWERED = "our XLA kernels run here: the lowering to TensorFlow's ops is not used"
TENSOR_OPS = ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
              "tensor_scatter_nd_min", "tensor_scatter_nd_max")
# XLA has no strings.
XLA_DTYPES = {op: [d for d in ds if d != tf.string] for op, ds in ops.DTYPES.items()}


def jit(f):
    return tf.function(f, jit_compile=True)


def positional(op):
    """`op` with its tensors only (tf.function would make its keyword
    defaults arguments of the compiled function)."""
    return lambda *tensors: op(*tensors)


def hlo(f, *args):
    return f.experimental_get_compiler_ir(*args)(stage="hlo")


@pytest.fixture(params=["auto", "ours", "xla"])
def xla_path(request, monkeypatch):
    """The path our XLA kernels take: chosen by size, or forced (read when a
    function is compiled)."""
    monkeypatch.setenv("TF_SCATTER_OPS_XLA", request.param)
    return request.param


def test_xla_context_helper():
    seen = {}

    def probe(key):
        seen[key] = _calls.in_xla_context()
        return tf.constant(0)

    probe("eager")
    tf.function(lambda: probe("function"))()
    jit(lambda: probe("xla"))()
    assert seen == {"eager": False, "function": False, "xla": True}


def test_builds_for_tensorflow_2_21_have_xla_kernels():
    """`make install` installs the headers the XLA kernels need: a build
    against TensorFlow 2.21 or later without them would hide here."""
    if TF_VERSION < (2, 21):
        pytest.skip(f"TensorFlow {tf.__version__} is older than 2.21: no XLA kernels are built for it")
    assert _loader.built_with_xla()
    assert OURS == (not tf.config.list_physical_devices("GPU"))


def calls(text):
    """The custom-call targets and XLA instructions of interest in HLO text."""
    found = set(re.findall(r'custom_call_target="tf_scatter_ops\.([A-Za-z]+)', text))
    return found | {op for op in ("scatter", "gather") if f" {op}(" in text}


@pytest.mark.skipif(not OURS, reason=NOT_OURS)
def test_each_call_site_runs_xla_or_our_kernel(monkeypatch):
    """Small call sites run XLA's scatter or gather (checked by our index check
    with the default policy, not with IGNORE). Our kernel runs a large static
    scatter into a fresh output (scatter_nd, or a tensor_scatter of the
    function's argument) with no more update rows than output rows (for rows
    under 16 elements, one per 4); XLA's in-place loop runs one into an
    intermediate or with more update rows. The environment variable forces
    either."""
    small = tf.zeros([4]), tf.constant([[1]]), tf.constant([1.0])
    n = 1 << 12  # rows of 16: 2^16 update elements
    ids = tf.constant(np.arange(n)[::-1, None] % (n // 2), tf.int32)
    large = tf.zeros([n, 16]), ids, tf.ones([n, 16])
    crowded = tf.zeros([n // 2, 16])
    narrow = tf.zeros([n * 16]), tf.zeros([n * 16, 1], tf.int32), tf.ones([n * 16])
    sparse = tf.zeros([n * 64]), tf.zeros([n * 16, 1], tf.int32), tf.ones([n * 16])
    xla = {"scatter", "CheckIndices"}
    for op in TENSOR_OPS:
        f = positional(getattr(tso, op))
        g = getattr(tso, op)
        ignore = lambda t, i, u: g(t, i, u, bad_indices_policy="IGNORE")  # noqa: E731
        intermediate = lambda t, i, u: g(t * 2.0, i, u)  # noqa: E731
        assert calls(hlo(jit(f), *small)) == xla
        assert calls(hlo(jit(ignore), *small)) == {"scatter"}
        assert calls(hlo(jit(f), *large)) == {table_rows.OP_TYPES[op]}
        assert calls(hlo(jit(intermediate), *large)) == xla
        assert calls(hlo(jit(f), crowded, *large[1:])) == xla  # 2 update rows per row
        assert calls(hlo(jit(f), *narrow)) == xla  # single elements, one update each
        assert calls(hlo(jit(f), *sparse)) == {table_rows.OP_TYPES[op]}  # ... one per 4
    assert calls(hlo(jit(lambda i, u: tso.scatter_nd(i, u, [4])), *small[1:])) == xla
    assert calls(hlo(jit(lambda i, u: tso.scatter_nd(i, u, [n, 16])), *large[1:])) == {
        "ScatterNd"}
    assert calls(hlo(jit(lambda i, u: tso.scatter_nd(i, u, [n // 2, 16])), *large[1:])) == xla
    # gathers: XLA's, which XLA fuses into their consumers
    assert calls(hlo(jit(positional(tso.gather_nd)), *small[:2])) == {"gather", "CheckIndices"}
    assert calls(hlo(jit(positional(tso.gather_nd)), tf.zeros([n, 1]), ids)) == {
        "gather", "CheckIndices"}
    # ... except a large row gather that no consumer could fuse
    table, rows = tf.zeros([1024, 64]), tf.zeros([1 << 14, 1], tf.int32)
    assert calls(hlo(jit(positional(tso.gather_nd)), table, rows)) == {"GatherNd"}
    assert calls(hlo(jit(lambda t, i: tf.reduce_sum(tso.gather_nd(t, i), -1)), table, rows)) == {
        "GatherNd"}
    assert calls(hlo(jit(lambda t, i: tso.gather_nd(t, i) @ tf.ones([64, 1])),
                     table, rows)) == {"GatherNd"}
    assert calls(hlo(jit(lambda t, i: tf.nn.relu(tso.gather_nd(t, i))), table, rows)) == {
        "gather", "CheckIndices"}
    both = jit(lambda t, i: (tso.gather_nd(t, i), tso.gather_nd(t, i) * 2.0))
    assert calls(hlo(both, table, rows)) == {"GatherNd", "gather", "CheckIndices"}
    assert calls(hlo(jit(positional(tso.gather_nd)), table, rows[:1 << 13])) == {
        "gather", "CheckIndices"}  # under 2^20 elements
    # operands of dynamic size: XLA's instruction; the check reads rows that
    # are one block of the buffer (only the first dimension dynamic), and
    # only reports a row that fused instructions found otherwise
    dynamic = jit(lambda t, i: tso.gather_nd(t, tf.boolean_mask(i, i[:, 0] >= 0)))
    inner = jit(lambda t, i: tso.gather_nd(
        t, tf.boolean_mask(tf.stack([i, i]), i[:, 0] >= 0, axis=1)))
    found = calls(hlo(dynamic, *small[:2]))  # (boolean_mask has a scatter of its own)
    assert {"gather", "CheckIndices"} <= found and not found & {"ReportBadRow", "GatherNd"}
    found_inner = calls(hlo(inner, *small[:2]))
    assert {"gather", "ReportBadRow"} <= found_inner and "CheckIndices" not in found_inner
    monkeypatch.setenv("TF_SCATTER_OPS_XLA", "ours")
    assert calls(hlo(jit(positional(tso.tensor_scatter_nd_add)), *small)) == {"TensorScatterAdd"}
    assert calls(hlo(jit(positional(tso.gather_nd)), tf.zeros([n, 1]), ids)) == {"GatherNd"}
    assert calls(hlo(dynamic, *small[:2])) == found  # no custom call takes a dynamic operand
    assert calls(hlo(inner, *small[:2])) == found_inner
    monkeypatch.setenv("TF_SCATTER_OPS_XLA", "xla")
    assert calls(hlo(jit(positional(tso.tensor_scatter_nd_add)), *large)) == {
        "scatter", "CheckIndices"}
    monkeypatch.setenv("TF_SCATTER_OPS_XLA", "fast")
    with pytest.raises(tf.errors.InvalidArgumentError, match="TF_SCATTER_OPS_XLA=fast: expected"):
        jit(positional(tso.gather_nd))(*small[:2])


@pytest.mark.skipif(not OURS, reason=NOT_OURS)
def test_our_kernel_updates_in_place_unless_its_input_outlives_it(monkeypatch):
    """A function's argument must survive the call: our kernel writes an
    output of its own (copying as it scatters). An intermediate or a loop
    variable is updated in place: the call's output aliases its input."""
    monkeypatch.setenv("TF_SCATTER_OPS_XLA", "ours")
    t, i, u = tf.zeros([8]), tf.constant([[1], [1]]), tf.constant([1.0, 2.0])
    aliased = "output_to_operand_aliasing={{}: (0, {})}"
    argument = jit(positional(tso.tensor_scatter_nd_add))
    intermediate = jit(lambda t, i, u: tso.tensor_scatter_nd_add(t * 2.0, i, u))
    loop = jit(lambda t, i, u: tf.while_loop(
        lambda k, c: k < 3, lambda k, c: (k + 1, tso.tensor_scatter_nd_add(c, i, u)), [0, t])[1])
    assert aliased not in hlo(argument, t, i, u)
    assert aliased in hlo(intermediate, t, i, u)
    assert aliased in hlo(loop, t, i, u)
    want = np.array([0, 3, 0, 0, 0, 0, 0, 0], np.float32)
    for f, expected in ((argument, want), (intermediate, want), (loop, 3 * want)):
        ref.assert_same(f(t, i, u), expected)
    ref.assert_same(t, np.zeros(8, np.float32))  # the argument is intact


@pytest.mark.parametrize("ours", [True, False], ids=["ours", "lowered"])
@pytest.mark.parametrize("op", TENSOR_OPS + ("scatter_nd", "gather_nd"))
def test_jit_compile_matches_eager_for_every_dtype(op, ours, rng, monkeypatch, xla_path):
    """Bitwise, with duplicate rows: compiled code runs the same kernels (or,
    lowered, TensorFlow's, which agree on these inputs up to the order of
    duplicate additions: floats then compared with a tolerance; int16
    indices are widened for TensorFlow's scatters)."""
    if ours and not OURS:
        pytest.skip(NOT_OURS)
    if not ours and xla_path != "auto":
        pytest.skip("TF_SCATTER_OPS_XLA only picks among our kernels' paths: "
                    "the lowered run needs only the xla_path=auto case")
    if not ours:
        monkeypatch.setattr(_calls, "xla_uses_our_kernels", lambda: False)
    shape = (6, 3)
    for dtype in XLA_DTYPES[op]:
        for index_dtype in ((tf.int16, tf.int32, tf.int64) if dtype == tf.float32 else (tf.int32,)):
            idx = tf.constant(ref.random_indices(rng, shape, 1, (8,), index_dtype))
            values = tf.constant(ref.random_values(rng, dtype, shape), dtype)
            if op == "gather_nd":
                args, f = (values, idx), tso.gather_nd
            else:
                upd = tf.constant(ref.random_values(rng, dtype, (8, 3)), dtype)
                if op == "scatter_nd":
                    args, f = (idx, upd), (lambda i, u: tso.scatter_nd(i, u, shape))
                else:
                    args, f = (values, idx, upd), getattr(tso, op)
            got, want = jit(f)(*args), f(*args)
            if ours or op in ("gather_nd", "tensor_scatter_nd_min", "tensor_scatter_nd_max") \
                    or not (dtype.is_floating or dtype.is_complex):
                ref.assert_same(got, want)
            else:
                np.testing.assert_allclose(got.numpy().astype(np.complex128),
                                           want.numpy().astype(np.complex128), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("op", TENSOR_OPS)
def test_jit_compile_depth_zero_rows_into_one_element_or_a_scalar(op, xla_path):
    """Rows of depth 0 (each updates the whole tensor) into a tensor of one
    element and into a scalar: every row applies, in index order, under XLA
    as eagerly (XLA's own scatter kept only the last row of the first and
    failed to compile the second; found by the fuzzer)."""
    f = getattr(tso, op)
    for t, u in ((tf.constant([10.0]), tf.constant([[3.0], [100.0], [2.0]])),
                 (tf.constant(10.0), tf.constant([3.0, 100.0, 2.0]))):
        i = tf.zeros([3, 0], tf.int32)
        ref.assert_same(jit(f)(t, i, u), f(t, i, u).numpy())


def test_jit_compile_matches_eager_for_other_forms(rng, xla_path):
    t = tf.constant(rng.standard_normal((5, 4, 3)), tf.float32)
    for depth, outer in ((0, (2,)), (2, (3, 2)), (3, (4,))):
        idx = tf.constant(ref.random_indices(rng, (5, 4, 3), depth, outer, tf.int32))
        upd = tf.constant(rng.standard_normal(outer + (5, 4, 3)[depth:]), tf.float32)
        ref.assert_same(jit(tso.gather_nd)(t, idx), tso.gather_nd(t, idx))
        ref.assert_same(jit(tso.tensor_scatter_nd_max)(t, idx, upd),
                        tso.tensor_scatter_nd_max(t, idx, upd))
    b = tf.constant([[0], [2], [1], [0], [0]])
    ref.assert_same(jit(lambda p, i: tso.gather_nd(p, i, batch_dims=1))(t[:, 0], b),
                    tso.gather_nd(t[:, 0], b, batch_dims=1))
    # empty tensors and no rows
    ref.assert_same(jit(tso.tensor_scatter_nd_add)(tf.zeros([0, 3]), tf.zeros([0, 1], tf.int32),
                                                  tf.zeros([0, 3])), np.zeros([0, 3], np.float32))
    ref.assert_same(jit(tso.gather_nd)(t, tf.zeros([0, 2], tf.int32)), np.zeros([0, 3], np.float32))


def test_jit_compile_on_captured_eager_tensors(rng, xla_path):
    t = tf.constant(rng.standard_normal((6, 3)), tf.float32)
    idx = tf.constant([[1], [4], [1], [0]], tf.int32)
    upd = tf.constant(rng.standard_normal((4, 3)), tf.float32)
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_max"):
        f = getattr(tso, op)
        np.testing.assert_allclose(jit(lambda: f(t, idx, upd))(), f(t, idx, upd), rtol=1e-6)


def test_scatter_nd_shape_known_only_when_compiled():
    """A shape that is an argument of the compiled function is a constant only
    to XLA's own ops: there scatter_nd lowers to TensorFlow's."""
    f = jit(lambda i, u, s: tso.scatter_nd(i, u, s))
    ref.assert_same(f(tf.constant([[1], [1]]), tf.constant([2.0, 3.0]), tf.constant([4])),
                    np.array([0., 5., 0., 0.], np.float32))
    g = jit(lambda i, u, x: tso.scatter_nd(i, u, tf.shape(x)))
    ref.assert_same(g(tf.constant([[1]]), tf.constant([2.0]), tf.zeros([5])),
                    np.array([0., 2., 0., 0., 0.], np.float32))


def test_jit_compile_gradients_flow():
    x = tf.constant([1., 2., 3.])

    @jit
    def grad(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = tf.reduce_sum(tso.scatter_nd([[1], [1], [3]], v * v, [4]) * [1., 10., 100., 1000.])
        return tape.gradient(y, v)

    np.testing.assert_allclose(grad(x), [20., 40., 6000.])


@pytest.mark.skipif(not OURS, reason=NOT_OURS)
def test_jit_compile_gradients_match_eager(rng, xla_path):
    """Our gradients in compiled code too: for update, only the winning
    duplicate gets gradient; for min/max, ties as eager."""
    t = tf.constant(rng.integers(0, 3, (6, 2)), tf.float32)
    idx = tf.constant([[1], [4], [1], [0], [4]])
    upd = tf.constant(rng.integers(0, 3, (5, 2)), tf.float32)
    w = tf.constant(rng.standard_normal((6, 2)), tf.float32)

    def grads(op):
        def g(t, u):
            with tf.GradientTape() as tape:
                tape.watch([t, u])
                y = tf.reduce_sum(getattr(tso, op)(t, idx, u) * w)
            return tape.gradient(y, [t, u])
        return g

    # Equal values; the sign of a zero may differ where XLA compiles the
    # gradient's arithmetic.
    for op in ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_min",
               "tensor_scatter_nd_max"):
        for got, want in zip(jit(grads(op))(t, upd), grads(op)(t, upd)):
            np.testing.assert_array_equal(got, want)

    def gather_grad(p):
        with tf.GradientTape() as tape:
            tape.watch(p)
            y = tf.reduce_sum(tso.gather_nd(p, idx) * upd)
        return tf.convert_to_tensor(tape.gradient(y, p))

    np.testing.assert_array_equal(jit(gather_grad)(t), gather_grad(t))


@pytest.mark.skipif(not OURS, reason=NOT_OURS)
def test_bad_indices_under_xla_follow_the_policy(xla_path):
    """The eager message, as an InternalError (XLA's class for a failed custom
    call); IGNORE as eager."""
    t = tf.constant([1., 2., 3., 4.])
    for f, message in (
            (lambda: tso.tensor_scatter_nd_update(t, [[0], [4]], [9., 7.]),
             "indices[1] = [4] does not index into shape [4]"),
            (lambda: tso.scatter_nd([[-1]], [9.], [4]),
             "indices[0] = [-1] does not index into shape [4]"),
            (lambda: tso.gather_nd(t, [[0], [-1]]),
             "indices[1] = [-1] does not index into param shape [4]")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace("[", r"\[")):
            f()
        with pytest.raises(tf.errors.InternalError, match=message.replace("[", r"\[")):
            jit(f)()
    for f in (lambda: tso.tensor_scatter_nd_add(t, [[4], [0], [-2]], [9., 7., 1.],
                                                bad_indices_policy="IGNORE"),
              lambda: tso.gather_nd(t, [[4], [-1], [0]], bad_indices_policy="IGNORE")):
        ref.assert_same(jit(f)(), f())


@pytest.mark.skipif(not OURS, reason=NOT_OURS)
def test_shape_errors_under_xla_are_the_eager_ones(xla_path):
    """Shapes unknown when the function is traced are checked when XLA
    compiles it, with the eager message."""
    t, i, u = tf.zeros([4, 2]), tf.constant([[1], [2]]), tf.ones([2, 3])
    message = r"The inner 1 dimensions of output.shape=\[4,2\] must match the inner 1 dimensions of updates"
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tso.tensor_scatter_nd_add(t, i, u)
    spec = tf.TensorSpec(None, tf.float32)
    f = tf.function(lambda t, i, u: tso.tensor_scatter_nd_add(t, i, u), jit_compile=True,
                    input_signature=[spec, tf.TensorSpec(None, tf.int32), spec])
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        f(t, i, u)


@pytest.mark.skipif(OURS, reason=NOT_LOWERED)
def test_documented_xla_bad_index_behaviour():
    t = tf.constant([1., 2., 3., 4.])
    update = jit(lambda: tso.tensor_scatter_nd_update(t, [[4], [0]], [9., 7.]))
    ref.assert_same(update(), np.array([7., 2., 3., 4.], np.float32))  # bad row dropped, no error
    gather = jit(lambda: tso.gather_nd(t, [[4], [-1], [0]]))
    ref.assert_same(gather(), np.array([4., 1., 1.], np.float32))  # clamped
    ignore = jit(lambda: tso.gather_nd(t, [[4], [-1], [0]], bad_indices_policy="IGNORE"))
    # TensorFlow 2.21's XLA gives zeros for IGNORE; older ones (2.17) clamp
    got = ignore().numpy()
    zeros, clamped = np.array([0., 0., 1.], np.float32), np.array([4., 1., 1.], np.float32)
    if TF_VERSION >= (2, 21):
        ref.assert_same(got, zeros)
    else:
        assert np.array_equal(got, zeros) or np.array_equal(got, clamped), got


@pytest.mark.skipif(not OURS, reason=NOT_OURS)
def test_library_loaded_after_xla_has_compiled():
    """XLA's op registry takes no new ops once it has compiled a function; our
    kernels are registered on its CPU device directly, so a library imported
    after a first compile still compiles."""
    code = textwrap.dedent("""
        import tensorflow as tf
        print(tf.function(lambda x: x * 2, jit_compile=True)(tf.constant([1.0])).numpy())
        import tf_scatter_ops as tso
        f = tf.function(lambda t, i, u: tso.tensor_scatter_nd_add(t, i, u), jit_compile=True)
        args = (tf.zeros([3]), tf.constant([[1], [1]]), tf.constant([1.0, 2.0]))
        assert "custom_call_target" in f.experimental_get_compiler_ir(*args)(stage="hlo")
        print("result", f(*args).numpy().tolist())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert "result [0.0, 3.0, 0.0]" in out.stdout, out.stderr[-2000:]


def test_lowering_under_xla_warns_once_when_a_gpu_is_present(monkeypatch):
    """Keras 3 turns XLA on by default with a GPU; then our kernels are not
    used (ours are for the CPU), and the user is told so, once."""
    import warnings
    monkeypatch.setattr(_calls, "_warned_xla_on_gpu", False)
    monkeypatch.setattr(_calls, "has_gpu", lambda: False)
    t = tf.zeros([4])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = jit(lambda x: tso.tensor_scatter_nd_add(x, [[1]], [1.]))
        f(t)
    assert not [w for w in caught if "tf_scatter_ops" in str(w.message)]  # CPU only: no warning
    assert ("custom_call_target" in hlo(f, t)) == _loader.built_with_xla()
    monkeypatch.setattr(_calls, "has_gpu", lambda: True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = jit(lambda x: tso.tensor_scatter_nd_add(x, [[1]], [1.]))
        f(t)
        jit(lambda x: tso.gather_nd(x, [[1]]))(t)
        tso.tensor_scatter_nd_add(t, [[1]], [1.])  # eager: ours, no warning
    ours = [w for w in caught if "tf_scatter_ops" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "jit_compile=False" in str(ours[0].message)
    assert "custom_call_target" not in hlo(f, t)


@pytest.mark.parametrize("op", ["segment_softmax", "segment_log_softmax"])
def test_groupwise_gradient_under_xla_is_as_small_as_the_composed_softmax(op):
    """Under XLA the group-wise functions are TensorFlow's ops; their gradient
    must not grow past that of the softmax a user writes with TensorFlow's
    ops (it had 4x its HLO: the max's gradient, which the shift-invariant
    functions do not need, and a row select whose gradient had dynamic
    shapes). Values as the eager gradient's."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((300, 4)), tf.float32)
    ids = tf.constant(rng.integers(0, 40, 300), tf.int32)
    w = tf.constant(rng.standard_normal((300, 4)), tf.float32)

    def composed(v):
        e = tf.exp(v - tf.gather(tf.math.unsorted_segment_max(v, ids, 40), ids))
        y = e / tf.gather(tf.math.unsorted_segment_sum(e, ids, 40), ids)
        return y if op == "segment_softmax" else tf.math.log(y)

    def gradient(function):
        def step(v):
            with tf.GradientTape() as tape:
                tape.watch(v)
                loss = tf.reduce_sum(function(v) * w)
            return tape.gradient(loss, v)
        return tf.function(step, jit_compile=True)

    ours = gradient(lambda v: getattr(tso, op)(v, ids, 40))
    theirs = gradient(composed)
    graph_ops = {o.type for o in ours.get_concrete_function(x).graph.get_operations()}
    assert "Where" not in graph_ops, graph_ops  # no shape known only at run time

    def instructions(f):
        return len(re.findall(r"^\s+\S+ = ", f.experimental_get_compiler_ir(x)(stage="hlo"),
                              re.MULTILINE))

    assert instructions(ours) <= 1.5 * instructions(theirs), (instructions(ours),
                                                                instructions(theirs))
    np.testing.assert_allclose(ours(x), gradient(lambda v: getattr(tso, op)(v, ids, 40))
                               .python_function(x), rtol=1e-5, atol=1e-6)
