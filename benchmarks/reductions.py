"""tensor_scatter_nd_mul and _mean, argmax pooling
(unsorted_segment_max_with_argmax), the out-of-bound modes CLIP and FILL, and
scatters of sorted rows with and without indices_are_sorted, against the same
written with
TensorFlow's ops (what code without them writes today: the updates' product
per row by unsorted_segment_prod and one multiply; a tensor_scatter_nd_add, a
scatter_nd of the counts and a divide; a segment max, a gather, a compare, a
select of row numbers and a segment min) in a plain tf.function, and that
composition under XLA (jit_compile=True), in one run; forward alone and
forward + backward (gradients with respect to the tensor and the updates, or
the pooled points).

    python -m benchmarks.reductions [--quick] [--only reductions|modes|hints]

A table of [200k, 16] float32 rows, 100k update rows into random rows
(duplicates); 500k points of 32 float32 features pooled into 20k cells; for
the hints, sorted rows of the sizes each line names.
Times are medians of interleaved rounds, ms per call; each call waits for
its result on the CPU without copying it out.
"""

import argparse

import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import forward_backward, interleaved_ms, machine


def _tensorflow(op, table, rows, updates):
    """`op` with TensorFlow's own ops, depth-1 rows."""
    n = tf.shape(table)[0]
    if op == "tensor_scatter_nd_mul":
        return table * tf.math.unsorted_segment_prod(updates, rows[:, 0], n)
    sums = tf.tensor_scatter_nd_add(table, rows, updates)
    count = tf.scatter_nd(rows, tf.ones(tf.shape(rows)[:1], table.dtype), [n]) + 1
    return sums / count[:, None]


def _tensorflow_argmax(points, cells, n):
    """Max pooling with the position of the point that holds each maximum."""
    best = tf.math.unsorted_segment_max(points, cells, n)
    rows = tf.broadcast_to(tf.range(tf.shape(points, tf.int64)[0])[:, None], tf.shape(points))
    none = tf.constant(np.iinfo(np.int64).max)
    first = tf.math.unsorted_segment_min(
        tf.where(tf.equal(points, tf.gather(best, cells)), rows, none), cells, n)
    return best, tf.where(tf.equal(first, none), tf.constant(-1, tf.int64), first)


def _modes(table, rows, updates, n):
    """The out-of-bound modes: a row scatter-add under CLIP and a row gather
    under FILL (1% of the rows out of range), against the same call under
    ERROR / IGNORE and what code without the modes writes with TensorFlow's
    ops (a clip_by_value first; a gather of clamped rows and a select)."""
    top = tf.constant(n - 1, rows.dtype)

    def clip_theirs(t, i, u):
        return tf.tensor_scatter_nd_add(t, tf.clip_by_value(i, 0, top), u)

    def fill_theirs(t, i):
        bad = (i[:, 0] < 0) | (i[:, 0] > top)
        got = tf.gather_nd(t, tf.clip_by_value(i, 0, top))
        return tf.where(bad[:, None], tf.constant(-1.0), got)

    return [("scatter_add CLIP", lambda t, i, u: tso.tensor_scatter_nd_add(
                 t, i, u, bad_indices_policy="CLIP"),
             lambda t, i, u: tso.tensor_scatter_nd_add(t, i, u, bad_indices_policy="IGNORE"),
             clip_theirs, (table, rows, updates)),
            ("gather_nd FILL", lambda t, i: tso.gather_nd(
                 t, i, bad_indices_policy="FILL", fill_value=-1.0),
             lambda t, i: tso.gather_nd(t, i, bad_indices_policy="IGNORE"),
             fill_theirs, (table, rows))]


def _hints(s):
    """Sorted rows (duplicates) added into a table with and without
    indices_are_sorted (unique_indices too where the rows are distinct),
    against TensorFlow's op (which takes no such promise) and XLA's."""
    rng = np.random.default_rng(1)
    cases = []
    for label, n, nslots, width, unique in (
            ("800k into [200k,16]", 800_000, 200_000, 16, False),
            ("2M into [1M] (scalars)", 2_000_000, 1_000_000, 1, False),
            ("100k distinct into [200k,16]", 100_000, 200_000, 16, True),
            ("200k into [100k,64]", 200_000, 100_000, 64, False),
            ("10k into [1M,16]", 10_000, 1_000_000, 16, False)):
        n, nslots = n // s, nslots // s
        flat = rng.permutation(nslots)[:n] if unique else rng.integers(0, nslots, n)
        idx = tf.constant(np.sort(flat)[:, None].astype(np.int32))
        shape = [nslots, width] if width > 1 else [nslots]
        table = tf.constant(rng.uniform(0.5, 2.0, shape).astype(np.float32))
        upd = tf.constant(rng.uniform(0.5, 2.0, [n] + shape[1:]).astype(np.float32))
        hint = {"indices_are_sorted": True, "unique_indices": unique}
        cases.append((label, {
            "hinted": lambda t, i, u, hint=hint: tso.tensor_scatter_nd_add(t, i, u, **hint),
            "plain": lambda t, i, u: tso.tensor_scatter_nd_add(t, i, u),
            "TF op": tf.tensor_scatter_nd_add,
            "scatter_nd hinted": lambda t, i, u, hint=hint: tso.scatter_nd(
                i, u, tf.shape(t), **hint),
            "scatter_nd plain": lambda t, i, u: tso.scatter_nd(i, u, tf.shape(t)),
        }, (table, idx, upd)))
    # a GNN's aggregation: messages on edges sorted by receiver, summed per node
    # (TensorFlow's segment_sum takes sorted ids too, but no num_segments)
    n, nodes = 800_000 // s, 200_000 // s
    receivers = tf.constant(np.sort(rng.integers(0, nodes, n)).astype(np.int32))
    messages = tf.constant(rng.uniform(0.5, 2.0, (n, 16)).astype(np.float32))
    cases.append(("unsorted_segment_sum 800k->200k", {
        "hinted": lambda m, r: tso.unsorted_segment_sum(m, r, nodes, indices_are_sorted=True),
        "plain": lambda m, r: tso.unsorted_segment_sum(m, r, nodes),
        "TF op": lambda m, r: tf.math.unsorted_segment_sum(m, r, nodes),
        "TF segment_sum": tf.math.segment_sum,
    }, (messages, receivers)))
    return cases


def _value(out):
    """The value of a (value, positions) pair, which the gradient is of."""
    return out[0] if isinstance(out, tuple) else out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes / 8, few rounds")
    parser.add_argument("--only", choices=("reductions", "modes", "hints"),
                        help="one part of the table")
    args = parser.parse_args()
    rounds, calls = (3, 3) if args.quick else (7, 10)
    s = 8 if args.quick else 1
    rng = np.random.default_rng(0)
    table = tf.constant(rng.uniform(0.5, 2.0, (200_000 // s, 16)).astype(np.float32))
    rows = tf.constant(rng.integers(0, 200_000 // s, (100_000 // s, 1)).astype(np.int32))
    updates = tf.constant(rng.uniform(0.9, 1.1, (100_000 // s, 16)).astype(np.float32))
    info = machine()
    print(f"{info['cpu']}, {info['cpus']} CPUs, {info['isa']}, TensorFlow {info['tf']}; "
          f"ms per call")
    print(f"  {'op':<24} {'pass':<8} {'plugin':>8} {'TF ops':>8} {'XLA':>8}  "
          f"TF/plugin  XLA/plugin")
    points = tf.constant(rng.standard_normal((500_000 // s, 32)).astype(np.float32))
    cells = tf.constant(rng.integers(0, 20_000 // s, 500_000 // s).astype(np.int32))
    cases = [(op, lambda t, i, u, op=op: getattr(tso, op)(t, i, u),
              lambda t, i, u, op=op: _tensorflow(op, t, i, u), (table, rows, updates), (0, 2))
             for op in ("tensor_scatter_nd_mul", "tensor_scatter_nd_mean")]
    cases.append(("argmax pooling",
                  lambda p, c, n: tuple(tso.unsorted_segment_max_with_argmax(p, c, n)),
                  _tensorflow_argmax, (points, cells, 20_000 // s), (0,)))
    for name, ours, theirs, inputs, wrt in cases if args.only in (None, "reductions") else ():
        for label, wrap in (("forward", lambda f: f),
                            ("+ grad", lambda f, wrt=wrt: forward_backward(
                                lambda *a: _value(f(*a)), wrt=wrt))):
            fns = {"plugin": tf.function(wrap(ours)), "TF ops": tf.function(wrap(theirs)),
                   "XLA": tf.function(wrap(theirs), jit_compile=True)}
            for got, want in zip(tf.nest.flatten(fns["plugin"](*inputs)),
                                 tf.nest.flatten(fns["TF ops"](*inputs))):
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4)
            t = interleaved_ms(fns, inputs, rounds, calls)
            print(f"  {name:<24} {label:<8} {t['plugin']:8.2f} {t['TF ops']:8.2f} {t['XLA']:8.2f}  "
                  f"{t['TF ops'] / t['plugin']:8.2f}x  {t['XLA'] / t['plugin']:8.2f}x")
            name = ""
    n = 200_000 // s
    bad_rows = rows.numpy()
    bad_rows[::100, 0] = np.where(np.arange(len(bad_rows[::100])) % 2, -3, n + 5)
    print(f"  {'mode (1% rows bad)':<24} {'':<8} {'plugin':>8} {'TF ops':>8} {'XLA':>8}  "
          f"TF/plugin  XLA/plugin  plugin: IGNORE, with the mode under XLA")
    modes = _modes(table, tf.constant(bad_rows), updates, n) if args.only in (None, "modes") else ()
    for name, ours, plain, theirs, inputs in modes:
        fns = {"plugin": tf.function(ours), "plain": tf.function(plain),
               "TF ops": tf.function(theirs), "XLA": tf.function(theirs, jit_compile=True),
               "plugin XLA": tf.function(ours, jit_compile=True)}
        np.testing.assert_allclose(fns["plugin"](*inputs).numpy(), fns["TF ops"](*inputs).numpy(),
                                   rtol=1e-5)
        t = interleaved_ms(fns, inputs, rounds, calls)
        print(f"  {name:<24} {'forward':<8} {t['plugin']:8.2f} {t['TF ops']:8.2f} {t['XLA']:8.2f}  "
              f"{t['TF ops'] / t['plugin']:8.2f}x  {t['XLA'] / t['plugin']:8.2f}x  "
              f"{t['plain']:8.2f}  {t['plugin XLA']:8.2f}")
    print(f"  {'sorted rows':<32} {'hinted':>8} {'plain':>8} {'TF op':>8} {'XLA':>8}  "
          f"plain/hinted  TF/hinted  XLA/hinted  (tensor_scatter_nd_add; scatter_nd: "
          f"hinted, plain; TensorFlow's segment_sum)")
    for name, ours, inputs in _hints(s) if args.only in (None, "hints") else ():
        fns = {k: tf.function(f) for k, f in ours.items()}
        fns["XLA"] = tf.function(ours["TF op"], jit_compile=True)
        for k in ("hinted", "scatter_nd hinted"):
            if k in fns:
                np.testing.assert_array_equal(fns[k](*inputs).numpy(),
                                              fns[k.replace("hinted", "plain")](*inputs).numpy())
        t = interleaved_ms(fns, inputs, rounds, calls)
        extra = "  ".join(f"{t[k]:8.2f}" for k in ("scatter_nd hinted", "scatter_nd plain",
                                                   "TF segment_sum") if k in t)
        print(f"  {name:<32} {t['hinted']:8.2f} {t['plain']:8.2f} {t['TF op']:8.2f} "
              f"{t['XLA']:8.2f}  {t['plain'] / t['hinted']:11.2f}x {t['TF op'] / t['hinted']:9.2f}x "
              f"{t['XLA'] / t['hinted']:10.2f}x  {extra}")


if __name__ == "__main__":
    main()
