"""GPU kernels, on a GPU: each test pins the device and checks where the
result lives, so it cannot silently pass on the CPU. (Which GPU kernels are
registered, and when, is test_gpu_gate.py's.)"""

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._base import table as _table
import table_rows
from table_rows import SCATTER_GATHER
from tf_scatter_ops.ops import DTYPES
import reference as ref

GPU_DTYPES = {op: [d for d in ds if d != tf.string] for op, ds in DTYPES.items()}


@pytest.fixture(autouse=True)
def no_soft_placement():
    """A GPU op without a GPU kernel must fail, not quietly run on the CPU."""
    before = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(False)
    yield
    tf.config.set_soft_device_placement(before)


def on(device, fn, *args, **kw):
    with tf.device(device):
        args = [tf.identity(a) for a in args]
        out = fn(*args, **kw)
    return out


GEOMETRIES = [((7,), (40,), 1), ((5, 4, 3), (6, 2), 2), ((300, 8), (5000,), 1),
              ((4, 3), (9,), 0)]


@pytest.mark.gpu
@pytest.mark.parametrize("op,dtype", [(op, d) for op in sorted(r.py for r in SCATTER_GATHER)
                                      for d in GPU_DTYPES[op]],
                         ids=lambda v: getattr(v, "name", v))
def test_gpu_equals_cpu_bitwise(op, dtype, rng):
    fn = getattr(tso, op)
    for shape, outer, depth in GEOMETRIES:
        idx = tf.constant(ref.random_indices(rng, shape, depth, outer, tf.int32))
        if op == "gather_nd":
            args = (tf.constant(ref.random_values(rng, dtype, shape), dtype), idx)
        elif op == "scatter_nd":
            upd = tf.constant(ref.random_values(rng, dtype, outer + shape[depth:]), dtype)
            args = (idx, upd, tf.constant(shape, tf.int64))
        else:
            upd = tf.constant(ref.random_values(rng, dtype, outer + shape[depth:]), dtype)
            args = (tf.constant(ref.random_values(rng, dtype, shape), dtype), idx, upd)
        gpu = on("/GPU:0", fn, *args)
        cpu = on("/CPU:0", fn, *args)
        assert gpu.device.endswith("GPU:0"), gpu.device
        assert cpu.device.endswith("CPU:0"), cpu.device
        # Serial per destination in row order on both: the same bits, float
        # sums included.
        ref.assert_same(gpu, cpu.numpy())


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["tensor_scatter_nd_add", "tensor_scatter_nd_update", "gather_nd"])
def test_gpu_bad_index_error_names_the_first_bad_row(op):
    tensor = tf.zeros([4, 2])
    idx = tf.constant([[1], [5], [-1]])
    with tf.device("/GPU:0"):
        target = "param shape" if op == "gather_nd" else "shape"
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=rf"indices\[1\] = \[5\] does not index into {target} \[4,2\]"):
            if op == "gather_nd":
                tso.gather_nd(tensor, idx)
            else:
                getattr(tso, op)(tensor, idx, tf.ones([3, 2]))


@pytest.mark.gpu
def test_gpu_ignore_drops_bad_rows_and_gather_gives_zeros():
    with tf.device("/GPU:0"):
        out = tso.tensor_scatter_nd_add(tf.zeros([4]), [[1], [9], [1]], [1.0, 5.0, 2.0],
                                        bad_indices_policy="IGNORE")
        got = tso.gather_nd(tf.constant([1.0, 2.0]), [[1], [-3]], bad_indices_policy="IGNORE")
    assert out.device.endswith("GPU:0") and got.device.endswith("GPU:0")
    np.testing.assert_array_equal(out.numpy(), [0, 3, 0, 0])
    np.testing.assert_array_equal(got.numpy(), [2, 0])


@pytest.mark.gpu
def test_gpu_runs_are_identical_and_update_keeps_the_last_row(rng):
    idx = tf.constant(rng.integers(0, 50, size=(200000, 1)), tf.int64)
    upd = tf.constant(rng.standard_normal(200000), tf.float32)
    with tf.device("/GPU:0"):
        runs = [tso.tensor_scatter_nd_add(tf.zeros([50]), idx, upd).numpy() for _ in range(3)]
        last = tso.tensor_scatter_nd_update(tf.zeros([50]), idx, upd).numpy()
    for r in runs[1:]:
        ref.assert_same(r, runs[0])
    expect = np.zeros(50, np.float32)
    expect[idx.numpy()[:, 0]] = upd.numpy()  # numpy: last write wins
    np.testing.assert_array_equal(last, expect)


@pytest.mark.gpu
def test_gpu_gradients_match_cpu(rng):
    tensor = tf.constant(rng.standard_normal((6, 3)), tf.float32)
    idx = tf.constant([[1], [4], [1]])
    upd = tf.constant(rng.standard_normal((3, 3)), tf.float32)

    def grads(device):
        with tf.device(device):
            t, u = tf.identity(tensor), tf.identity(upd)
            with tf.GradientTape() as tape:
                tape.watch([t, u])
                loss = tf.reduce_sum(tso.tensor_scatter_nd_max(t, idx, u) ** 2)
            return [g.numpy() for g in tape.gradient(loss, [t, u])]

    for g, c in zip(grads("/GPU:0"), grads("/CPU:0")):
        np.testing.assert_allclose(g, c, rtol=1e-6)


# The segment family: every GPU dtype of each row (complex products and
# means included).
def _segment_gpu_dtypes(op):
    return GPU_DTYPES[op]


def _segment_args(op, dtype, rng, n=3000, slice_=(5,)):
    data = tf.constant(ref.random_values(rng, dtype, (n,) + slice_), dtype)
    if op.startswith("unsorted_segment"):
        ids = rng.integers(-2, 40, size=n)  # negative ids dropped
        return (data, tf.constant(ids, tf.int32), 40)
    ids = np.sort(rng.integers(0, n // 20, size=n))
    if op.startswith("sparse_segment"):
        return (data, tf.constant(rng.integers(0, n, size=n), tf.int64), tf.constant(ids, tf.int32))
    return (data, tf.constant(ids, tf.int64))


@pytest.mark.gpu
@pytest.mark.parametrize("op,dtype", [(r.py, d) for r in _table.OPS
                                      if r.kind in table_rows.SEGMENT_KINDS
                                      for d in _segment_gpu_dtypes(r.py)],
                         ids=lambda v: getattr(v, "name", v))
def test_gpu_segments_equal_cpu_bitwise(op, dtype, rng):
    """Index-order (sorted, unsorted) and TensorFlow's groups of 8 (sparse)
    on both devices: the same bits, float sums and means included."""
    args = _segment_args(op, dtype, rng)
    gpu = on("/GPU:0", getattr(tso, op), *args)
    cpu = on("/CPU:0", getattr(tso, op), *args)
    assert gpu.device.endswith("GPU:0"), gpu.device
    # (a complex product's NaN: the CPU's sign is its compiler's operand order)
    ref.assert_same(gpu, cpu.numpy(), nan_bits=not dtype.is_complex)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [tf.complex64, tf.complex128], ids=lambda d: d.name)
def test_gpu_complex_products_and_means_keep_the_cpus_special_values(dtype):
    """Infinities and NaNs through Annex G's product and libgcc's quotient."""
    inf, nan = np.inf, np.nan
    values = np.array([1 + 2j, complex(inf, 0), complex(0, inf), complex(nan, 1),
                       complex(inf, inf), -0.0 - 0.0j, 1e30 + 1e30j, complex(-inf, nan),
                       3 - 1j, 1e-40 + 0j, complex(inf, -inf), 2 + 0j],
                      dtype.as_numpy_dtype).reshape(12, 1)
    data = tf.constant(np.tile(values, (1, 3)))
    for ids in ([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3], [0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3]):
        for op, args in (("segment_prod", (data, ids)), ("segment_mean", (data, ids)),
                         ("unsorted_segment_prod", (data, ids[::-1], 5))):
            gpu = on("/GPU:0", getattr(tso, op), *args)
            cpu = on("/CPU:0", getattr(tso, op), *args)
            assert gpu.device.endswith("GPU:0"), gpu.device
            ref.assert_same(gpu, cpu.numpy(), nan_bits=False)


def _groupwise_args(dtype, rng, n=2000, slice_=(3,), segments=70):
    x = rng.standard_normal((n,) + slice_) * 4
    x[rng.integers(0, n, 5)] = np.inf
    x[rng.integers(0, n, 5)] = -np.inf
    x[rng.integers(0, n, 3)] = np.nan
    ids = rng.integers(-2, segments, size=n)  # negative ids dropped, some segments empty
    return tf.constant(x, dtype), tf.constant(ids, tf.int32), segments


@pytest.mark.gpu
@pytest.mark.parametrize("op,dtype", [(r.py, d) for r in _table.GROUPWISE
                                      for d in GPU_DTYPES[r.py]],
                         ids=lambda v: getattr(v, "name", v))
def test_gpu_groupwise_and_gradients_equal_cpu_bitwise(op, dtype, rng):
    """The same passes in the same order with the library's exp and log: the
    CPU's bits, forward and fused gradient, IGNORE included."""
    x, ids, segments = _groupwise_args(dtype, rng)
    kw = {"ddof": 1} if op in ("segment_var", "segment_std") else {}

    def run(device, policy):
        with tf.device(device):
            xd = tf.identity(x)
            with tf.GradientTape() as tape:
                tape.watch(xd)
                y = getattr(tso, op)(xd, ids, segments, bad_indices_policy=policy, **kw)
                g = tf.cast(tf.cos(tf.cast(tf.range(tf.size(y)), tf.float32)), y.dtype)
                finite = tf.where(tf.math.is_finite(y), y, tf.zeros_like(y))
                loss = tf.reduce_sum(finite * tf.reshape(g, tf.shape(y)))
            return y, tape.gradient(loss, xd)

    for policy in ("", "IGNORE"):
        (y_gpu, dx_gpu), (y_cpu, dx_cpu) = run("/GPU:0", policy), run("/CPU:0", policy)
        assert y_gpu.device.endswith("GPU:0") and dx_gpu.device.endswith("GPU:0")
        ref.assert_same(y_gpu, y_cpu.numpy(), nan_bits=False)
        ref.assert_same(dx_gpu, dx_cpu.numpy(), nan_bits=False)


@pytest.mark.gpu
def test_gpu_groupwise_errors_name_the_first_bad_id():
    with tf.device("/GPU:0"):
        for op in ("segment_softmax", "segment_logsumexp", "segment_var"):
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"segment_ids\[2\] = 7 is out of range \[0, 3\)"):
                getattr(tso, op)(tf.ones([4, 2]), [-1, 0, 7, 9], 3)
        kept = tso.segment_softmax(tf.constant([1.0, 5.0, 2.0]), [0, 3, -1], 2,
                                   bad_indices_policy="IGNORE")
    assert kept.device.endswith("GPU:0")
    np.testing.assert_array_equal(kept.numpy(), [1.0, 0.0, 0.0])


@pytest.mark.gpu
@pytest.mark.parametrize("op,dtype", [(r.py, d) for r in table_rows.ARG_REDUCTIONS
                                      for d in GPU_DTYPES[r.py]],
                         ids=lambda v: getattr(v, "name", v))
def test_gpu_arg_reductions_equal_cpu_bitwise(op, dtype, rng):
    """Values and positions: ties to the first row, NaN wins, -1 for none."""
    n = 3000
    data = ref.random_values(rng, dtype, (n, 4))
    if dtype.is_floating:
        data[rng.integers(0, n, 20)] = np.nan
    data[rng.integers(0, n, 300)] = data[rng.integers(0, n, 300)]  # ties
    data = tf.constant(data, dtype)
    if op.startswith("unsorted_segment"):
        ids = tf.constant(rng.integers(-2, 900, size=n), tf.int32)  # empty segments too
        args, kw = (data, ids, 1000), {}
    else:
        tensor = tf.constant(ref.random_values(rng, dtype, (50, 8, 4)), dtype)
        idx = tf.constant(ref.random_indices(rng, (50, 8, 4), 2, (n,), tf.int64))
        args, kw = (tensor, idx, data), {}
    for policy in ("", "IGNORE"):
        gpu = on("/GPU:0", getattr(tso, op), *args, bad_indices_policy=policy, **kw)
        cpu = on("/CPU:0", getattr(tso, op), *args, bad_indices_policy=policy, **kw)
        for g, c in zip(gpu, cpu):
            assert g.device.endswith("GPU:0"), g.device
            ref.assert_same(g, c.numpy())


@pytest.mark.gpu
def test_gpu_arg_reduction_errors_name_the_first_bad_row():
    with tf.device("/GPU:0"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"segment_ids\[2\] = 7 is out of range \[0, 3\)"):
            tso.unsorted_segment_max_with_argmax(tf.ones([4, 2]), [-1, 0, 7, 9], 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[5\]"):
            tso.tensor_scatter_nd_min_with_argmin(tf.zeros([4]), [[0], [5]], [1.0, 2.0])


@pytest.mark.gpu
def test_gpu_segment_errors_name_the_first_bad_id():
    with tf.device("/GPU:0"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"segment_ids\[2\] = 7 is out of range \[0, 3\)"):
            tso.unsorted_segment_sum(tf.ones([4, 2]), [-1, 0, 7, 9], 3)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"segment_ids\[2\] = 0 follows segment_ids\[1\] = 1"):
            tso.segment_sum(tf.ones([3, 2]), [0, 1, 0])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] == 9"):
            tso.sparse_segment_mean(tf.ones([3, 2]), [0, 9], [0, 0])
        kept = tso.unsorted_segment_max(tf.constant([1.0, 5.0, 2.0]), [0, 3, 0], 2,
                                        bad_indices_policy="IGNORE")
    assert kept.device.endswith("GPU:0")
    np.testing.assert_array_equal(kept.numpy(), [2.0, np.finfo(np.float32).min])


@pytest.mark.gpu
def test_gpu_segment_sums_are_identical_run_to_run(rng):
    data = tf.constant(rng.standard_normal((200000, 4)), tf.float32)
    ids = tf.constant(rng.integers(0, 30, size=200000), tf.int32)
    with tf.device("/GPU:0"):
        runs = [tso.unsorted_segment_sum(data, ids, 30).numpy() for _ in range(3)]
        sorted_runs = [tso.segment_sum(data, tf.sort(ids)).numpy() for _ in range(3)]
    for r in runs[1:]:
        ref.assert_same(r, runs[0])
    for r in sorted_runs[1:]:
        ref.assert_same(r, sorted_runs[0])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [tf.bfloat16, tf.float16, tf.float32, tf.float64],
                         ids=lambda d: d.name)
def test_gpu_message_passing_equals_cpu_bitwise(dtype, rng):
    """gather_reduce (every reduction, weighted per head or not) and
    edge_combine (every op) on the GPU: the CPU's values and positions."""
    nodes, edges = 900, 7000
    params = tf.constant(ref.random_values(rng, dtype, (nodes, 2, 8)), dtype)
    weights = tf.constant(ref.random_values(rng, dtype, (edges, 2)), dtype)
    src = tf.constant(rng.integers(0, nodes, size=edges), tf.int32)
    dst = tf.constant(rng.integers(-1, nodes + 100, size=edges), tf.int32)  # empty nodes too
    for reduce in ("sum", "mean", "max", "min"):
        for w in (None, weights):
            fn = lambda p, s, d: tso.gather_reduce(p, s, d, nodes + 100, weights=w, reduce=reduce)
            gpu = on("/GPU:0", fn, params, src, dst)
            cpu = on("/CPU:0", fn, params, src, dst)
            assert gpu.device.endswith("GPU:0"), gpu.device
            ref.assert_same(gpu, cpu.numpy())
    ends = tf.constant(rng.integers(0, nodes, size=edges), tf.int32)
    for op in ("add", "sub", "mul", "dot"):
        fn = lambda a, b, s, d: tso.edge_combine(a, b, s, d, op=op)
        gpu = on("/GPU:0", fn, params, params, src, ends)
        cpu = on("/CPU:0", fn, params, params, src, ends)
        assert gpu.device.endswith("GPU:0"), gpu.device
        ref.assert_same(gpu, cpu.numpy())


@pytest.mark.gpu
def test_gpu_message_passing_errors_name_the_first_bad_edge():
    with tf.device("/GPU:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"src\[2\] = 9"):
            tso.gather_reduce(tf.ones([4, 2]), [0, 1, 9, 12], [0, 1, 2, 3], 4)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"dst\[1\] = 5"):
            tso.edge_combine(tf.ones([4, 2]), tf.ones([5, 2]), [0, 1, 2], [0, 5, 7])
