"""A NumPy reference for the family, written independently of the C++ core:
a plain loop over index rows in index order, in canonical [slots, slice] form."""

import numpy as np
import tensorflow as tf

class BadIndex(Exception):
    def __init__(self, row, index):
        super().__init__(f"indices[{row}] = {index}")
        self.row, self.index = row, index


def np_dtype(dtype):
    return object if dtype == tf.string else dtype.as_numpy_dtype


def zeros(shape, dtype):
    if dtype == tf.string:
        return np.full(shape, b"", dtype=object)
    return np.zeros(shape, dtype=np_dtype(dtype))


def _rows(indices, shape):
    """Yields (row number, flat slot or None when out of bounds)."""
    depth = indices.shape[-1]
    rows = indices.reshape(int(np.prod(indices.shape[:-1])), depth).astype(np.int64)
    dims = shape[:depth]
    for i, row in enumerate(rows):
        if any(v < 0 or v >= d for v, d in zip(row, dims)):
            yield i, None, row
            continue
        slot = 0
        for v, d in zip(row, dims):
            slot = slot * d + int(v)
        yield i, slot, row


def _combine(op, dtype, out, upd):
    if op == "update":
        return upd
    if op in ("add", "scatter_nd"):
        if dtype == tf.bool:
            return np.logical_or(out, upd)
        return out + upd  # object arrays of bytes concatenate
    if op == "sub":
        return out - upd
    if op == "min":
        return np.where(upd < out, upd, out)
    if op == "max":
        return np.where(out < upd, upd, out)
    if op == "mul":
        return out * upd  # integers wrap
    if op == "div":
        return out / upd
    raise ValueError(op)


def scatter(op, tensor, indices, updates, dtype, ignore=False):
    """op in update/add/sub/min/max/mul/div (tensor given) or scatter_nd
    (tensor = zeros)."""
    shape = tensor.shape
    depth = indices.shape[-1]
    slice_len = int(np.prod(shape[depth:], dtype=np.int64))
    out = tensor.copy().reshape(int(np.prod(shape[:depth], dtype=np.int64)), slice_len)
    upd = updates.reshape(int(np.prod(updates.shape[:indices.ndim - 1])), slice_len)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for i, slot, row in _rows(indices, shape):
            if slot is None:
                if ignore:
                    continue
                raise BadIndex(i, row)
            out[slot:slot + 1] = _combine(op, dtype, out[slot:slot + 1], upd[i:i + 1])
    return out.reshape(shape)


def gather(params, indices, dtype, ignore=False):
    shape = params.shape
    depth = indices.shape[-1]
    flat = params.reshape(int(np.prod(shape[:depth], dtype=np.int64)),
                          int(np.prod(shape[depth:], dtype=np.int64)))
    rows = []
    for i, slot, row in _rows(indices, shape):
        if slot is None:
            if not ignore:
                raise BadIndex(i, row)
            rows.append(zeros(flat.shape[1:], dtype))
        else:
            rows.append(flat[slot])
    out_shape = indices.shape[:-1] + shape[depth:]
    if not rows:
        return zeros(out_shape, dtype)
    return np.stack(rows).reshape(out_shape)


def clip(indices, shape):
    """CLIP's indices: each coordinate clamped into [0, dim - 1]; a
    coordinate into an empty dimension stays out of range (IGNORE drops it)."""
    idx = np.array(indices, np.int64)
    for d in range(idx.shape[-1]):
        if shape[d] > 0:
            idx[..., d] = np.clip(idx[..., d], 0, shape[d] - 1)
    return idx.astype(np.asarray(indices).dtype)


# FILL's default fill_value for a gather, per dtype, as docs/out-of-bounds.md
# promises it (JAX's defaults): NaN for floating and complex dtypes (JAX's
# NaN of a complex dtype is NaN + 0j), the lowest value of a signed integer
# dtype, the highest of an unsigned one, True for bool, an empty string for
# strings. Written out, not computed from the product's rule.
FILL_DEFAULTS = {
    "bfloat16": np.nan, "float16": np.nan, "float32": np.nan, "float64": np.nan,
    "complex64": complex(np.nan, 0.0), "complex128": complex(np.nan, 0.0),
    "int8": -128, "int16": -32768, "int32": -2147483648, "int64": -9223372036854775808,
    "uint8": 255, "uint16": 65535, "uint32": 4294967295, "uint64": 18446744073709551615,
    "bool": True, "string": b"",
}


def fill_value(dtype):
    """FILL's default for a gather of `dtype` (FILL_DEFAULTS)."""
    return FILL_DEFAULTS[tf.as_dtype(dtype).name]


def fill(gathered, indices, shape, value):
    """A gather's rows with any coordinate out of range set to `value`."""
    depth = indices.shape[-1]
    n = int(np.prod(indices.shape[:-1], dtype=np.int64))
    idx = np.asarray(indices, np.int64).reshape(n, depth)
    bad = np.zeros(n, bool)
    for d in range(depth):
        bad |= (idx[:, d] < 0) | (idx[:, d] >= shape[d])
    out = np.array(gathered, copy=True)
    flat = out.reshape((n,) + out.shape[indices.ndim - 1:])
    flat[bad] = value
    return flat.reshape(out.shape)


def _canonical_nans(values):
    values = np.array(values)
    if values.dtype.kind in "fc":
        values[np.isnan(values)] = np.nan
    return values


def random_values(rng, dtype, shape):
    shape = tuple(shape)
    if dtype == tf.bool:
        return rng.random(shape) < 0.5
    if dtype == tf.string:
        words = [f"s{v}".encode() for v in rng.integers(0, 1000, size=int(np.prod(shape)))]
        return np.array(words, dtype=object).reshape(shape)
    if dtype.is_complex:
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(
            dtype.as_numpy_dtype)
    if dtype.is_floating:
        return rng.standard_normal(shape).astype(dtype.as_numpy_dtype)
    info = np.iinfo(dtype.as_numpy_dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True,
                        dtype=dtype.as_numpy_dtype)


def random_indices(rng, shape, depth, outer, index_dtype, bad=0):
    """Valid random indices (with duplicates), `bad` rows made out of bounds."""
    n = int(np.prod(outer))
    cols = [rng.integers(0, max(d, 1), size=n) for d in shape[:depth]]
    idx = np.stack(cols, axis=-1) if depth else np.zeros((n, 0), np.int64)
    for k in rng.choice(n, size=min(bad, n), replace=False) if bad and depth else []:
        d = rng.integers(0, depth)
        idx[k, d] = shape[d] + rng.integers(0, 3) if rng.random() < 0.5 else -1 - rng.integers(0, 3)
    return idx.reshape(tuple(outer) + (depth,)).astype(index_dtype.as_numpy_dtype)


def assert_same(actual, expected, nan_bits=True):
    """Bitwise equality (NaN-safe, exact for floats), shapes included. With
    nan_bits=False any NaN equals any NaN: the sign of the NaN a product
    makes of two NaNs is the compiler's choice of operand order."""
    actual = actual.numpy() if hasattr(actual, "numpy") else actual
    if not nan_bits:
        actual, expected = _canonical_nans(actual), _canonical_nans(expected)
    actual = np.asarray(actual, dtype=object if isinstance(actual, bytes) else None)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype == object or expected.dtype == object:
        assert actual.tolist() == expected.tolist()
        return
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    a = np.ascontiguousarray(actual).view(np.uint8)
    e = np.ascontiguousarray(expected).view(np.uint8)
    if not np.array_equal(a, e):
        diff = np.argwhere(actual != expected)[:5]
        raise AssertionError(f"results differ at {diff.tolist()}:\n{actual}\nvs\n{expected}")


# ------------------------------------------------------- message passing

def _edge_order(dst, keep):
    """The kept edges by destination, each group in edge order: (edges,
    their destinations, each edge's rank within its group)."""
    kept = np.nonzero(keep)[0]
    order = kept[np.argsort(dst[kept], kind="stable")]
    d = dst[order]
    rank = np.arange(len(d)) - np.searchsorted(d, d, side="left")
    return order, d, rank


def gather_reduce(params, src, dst, num_segments, weights=None, reduce="sum"):
    """tso.gather_reduce in NumPy, in the kernel's order and rounding: each
    edge's row params[src] * weights (rounded once, in params' dtype), summed
    per destination in edge order from 0 (mean: over the edge count in the
    dtype); max / min with the arg rule (ties keep the first edge, NaN wins
    and stays) from the dtype's lowest / highest. Edges with an id out of
    range are dropped. Returns (output, positions or None)."""
    params = np.asarray(params)
    dtype = params.dtype
    src, dst = np.asarray(src, np.int64).reshape(-1), np.asarray(dst, np.int64).reshape(-1)
    rows = params.shape[0]
    inner = params.shape[1:]
    width = int(np.prod(inner, dtype=np.int64))
    keep = (src >= 0) & (src < rows) & (dst >= 0) & (dst < num_segments)
    flat = params.reshape(rows, width)
    x = flat[np.where(keep, src, 0)] if rows else np.zeros((len(src), width), dtype)
    if weights is not None:
        weights = np.asarray(weights, dtype)
        heads = int(np.prod(weights.shape[1:], dtype=np.int64))
        w = weights.reshape(len(src), heads)
        per_head = width // heads if heads else 0
        x = (x.reshape(len(src), heads, per_head) * w[:, :, None]).astype(dtype)
        x = x.reshape(len(src), width)
    order, d, rank = _edge_order(dst, keep)
    arg = reduce in ("max", "min")
    if arg:
        info = tf.as_dtype(dtype)
        out = np.full((num_segments, width), info.min if reduce == "max" else info.max, dtype)
        pos = np.full((num_segments, width), -1, np.int64)
    else:
        out = np.zeros((num_segments, width), dtype)
    for r in range(int(rank.max()) + 1 if len(rank) else 0):
        e, v = order[rank == r], d[rank == r]
        if not arg:
            out[v] = (out[v] + x[e]).astype(dtype)
            continue
        cur, new = out[v], x[e]
        with np.errstate(invalid="ignore"):
            better = (new > cur) if reduce == "max" else (new < cur)
        takes = (pos[v] < 0) | better | (np.isnan(new) & ~np.isnan(cur))
        out[v] = np.where(takes, new, cur)
        pos[v] = np.where(takes, e[:, None], pos[v])
    if reduce == "mean":
        count = np.bincount(d, minlength=num_segments)[:num_segments]
        nz = count > 0
        out[nz] = (out[nz] / count[nz].astype(dtype)[:, None]).astype(dtype)
    shape = (num_segments,) + inner
    return out.reshape(shape), (pos.reshape(shape) if arg else None)


def edge_combine(a, b, src, dst, op="add"):
    """tso.edge_combine in NumPy: a[src] op b[dst] per edge (rows of an edge
    with an id out of range: 0); "dot" sums the products over the last axis
    in order, in float32 for 16-bit floats."""
    a, b = np.asarray(a), np.asarray(b)
    dtype = a.dtype
    src, dst = np.asarray(src, np.int64).reshape(-1), np.asarray(dst, np.int64).reshape(-1)
    keep = (src >= 0) & (src < a.shape[0]) & (dst >= 0) & (dst < b.shape[0])
    x = a[np.where(keep, src, 0)] if a.shape[0] else np.zeros((len(src),) + a.shape[1:], dtype)
    y = b[np.where(keep, dst, 0)] if b.shape[0] else np.zeros((len(src),) + b.shape[1:], dtype)
    if op == "dot":
        acc_dtype = np.float32 if dtype.itemsize == 2 else dtype
        acc = np.zeros(x.shape[:-1], acc_dtype)
        for j in range(x.shape[-1]):
            acc = (acc + (x[..., j].astype(acc_dtype) * y[..., j].astype(acc_dtype))
                   .astype(acc_dtype)).astype(acc_dtype)
        out = acc.astype(dtype)
    else:
        out = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](x, y).astype(dtype)
    mask = keep.reshape((-1,) + (1,) * (out.ndim - 1))
    return np.where(mask, out, np.zeros((), dtype)).astype(dtype)
