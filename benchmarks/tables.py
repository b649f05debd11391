"""Embedding tables end to end: a Keras model's training step (`fit`) at
several table sizes, stock Keras against tso.keras, in one run.

    python -m benchmarks.tables [--quick] [--rows 250000,1000000,4000000]

The model: bags of 8 ids per example (batch 1024) looked up in a [rows, 64]
table, averaged, scored by a Dense layer, mean squared error. Variants:

  stock Adam       keras.layers.Embedding + keras.optimizers.Adam
  patched Adam     the same model under tso.patch_tensorflow() (the lookup and
                   the scatters are ours; Keras's Adam still updates densely)
  tso LazyAdam     tso.keras.Embedding + tso.keras.optimizers.LazyAdam
  stock SGD        keras.layers.Embedding + keras.optimizers.SGD
  tso bag SGD      the bags read with tso.gather_nd(table, ids[..., None]) +
                   keras.optimizers.SGD (an IndexedSlices gradient)

Each step time is the median over rounds of a fit of `steps` batches, divided
by the steps (Keras's per-step overhead is in every variant alike).
"""

import argparse
import contextlib
import statistics
import time

import keras
import numpy as np
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks.harness import machine

DIM, BAG, BATCH = 64, 8, 1024


class BagLookup(keras.layers.Layer):
    """The bag lookup written with tso.gather_nd on [B, L, 1] indices."""

    def __init__(self, rows, **kw):
        super().__init__(**kw)
        self.rows = rows

    def build(self, shape):
        self.table = self.add_weight(shape=(self.rows, DIM), initializer="uniform")

    def call(self, ids):
        return tso.gather_nd(self.table, ids[..., None])


def _model(rows, variant):
    keras.utils.set_random_seed(0)
    if variant == "tso bag SGD":
        lookup = BagLookup(rows)
    elif variant == "tso LazyAdam":
        lookup = tso.keras.Embedding(rows, DIM)
    else:
        lookup = keras.layers.Embedding(rows, DIM)
    model = keras.Sequential([keras.Input((BAG,), dtype="int32"), lookup,
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    optimizer = {"stock Adam": lambda: keras.optimizers.Adam(1e-3),
                 "patched Adam": lambda: keras.optimizers.Adam(1e-3),
                 "tso LazyAdam": lambda: tso.keras.optimizers.LazyAdam(1e-3),
                 "stock SGD": lambda: keras.optimizers.SGD(0.1),
                 "tso bag SGD": lambda: keras.optimizers.SGD(0.1)}[variant]()
    model.compile(optimizer=optimizer, loss="mse")
    return model


VARIANTS = ("stock Adam", "patched Adam", "tso LazyAdam", "stock SGD", "tso bag SGD")


def step_times(rows, steps, rounds):
    rng = np.random.default_rng(1)
    x = rng.integers(0, rows, (BATCH * steps, BAG)).astype(np.int32)
    y = rng.standard_normal((BATCH * steps, 1)).astype(np.float32)
    out = {}
    for variant in VARIANTS:
        with tso.patched() if variant == "patched Adam" else contextlib.nullcontext():
            model = _model(rows, variant)
            model.fit(x[:2 * BATCH], y[:2 * BATCH], batch_size=BATCH, verbose=0)  # traced
            times = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                model.fit(x, y, batch_size=BATCH, verbose=0, shuffle=False)
                times.append((time.perf_counter() - t0) / steps)
            out[variant] = statistics.median(times)
        del model
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small tables, few steps")
    parser.add_argument("--rows", default=None)
    args = parser.parse_args()
    sizes = ([int(r) for r in args.rows.split(",")] if args.rows
             else [16_000, 64_000] if args.quick else [250_000, 1_000_000, 4_000_000])
    steps, rounds = (4, 2) if args.quick else (10, 5)
    info = machine()
    print(f"{info['cpu']}, {info['cpus']} CPUs, TensorFlow {info['tf']}, Keras {keras.__version__}; "
          f"ms per training step (batch {BATCH} bags of {BAG} ids, [rows, {DIM}] table)")
    print(f"{'rows':>9} " + " ".join(f"{v:>13}" for v in VARIANTS)
          + f" {'LazyAdam vs Adam':>17} {'bag SGD vs SGD':>15}")
    for rows in sizes:
        t = step_times(rows, steps, rounds)
        print(f"{rows:9d} " + " ".join(f"{t[v] * 1e3:13.2f}" for v in VARIANTS)
              + f" {t['stock Adam'] / t['tso LazyAdam']:16.1f}x"
              f" {t['stock SGD'] / t['tso bag SGD']:14.1f}x", flush=True)


if __name__ == "__main__":
    main()
