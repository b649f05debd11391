"""Runs an export against its original: every signature of both on the same
sample inputs (given in an .npz keyed by input name, or generated: small
non-negative integers, normal floats), the original here with the plugin,
the export in a child process that never imports it, and compares the
outputs. `python -m tf_scatter_ops.export SRC DST --check` runs it."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf


class ExportCheckError(ValueError):
    """The export does not give the original's outputs without the plugin."""


def _sample_inputs(key, signature, given, rng):
    inputs = {}
    for name, spec in signature.structured_input_signature[1].items():
        for k in (f"{key}/{name}", name):
            if k in given:
                inputs[name] = given[k]
                break
        if name in inputs:
            continue
        shape = [2 if d is None else d for d in spec.shape.as_list()]
        if spec.dtype.is_integer:
            inputs[name] = rng.integers(0, 2, shape).astype(spec.dtype.as_numpy_dtype)
        elif spec.dtype.is_floating:
            inputs[name] = rng.normal(size=shape).astype(spec.dtype.as_numpy_dtype)
        elif spec.dtype == tf.bool:
            inputs[name] = rng.integers(0, 2, shape).astype(bool)
        else:
            raise ValueError(f"--check: no sample for input {name!r} ({spec.dtype.name}); "
                             f"give one with --inputs")
    return inputs


_CHILD = """
import sys
import numpy as np
import tensorflow as tf
dst, inputs_file, out_file = sys.argv[1:]
model = tf.saved_model.load(dst)
samples = np.load(inputs_file, allow_pickle=False)
out = {}
for key in model.signatures:
    prefix = key + "/"
    inputs = {k[len(prefix):]: tf.constant(samples[k]) for k in samples.files if k.startswith(prefix)}
    for name, value in model.signatures[key](**inputs).items():
        out[prefix + name] = value.numpy()
if "tf_scatter_ops" in sys.modules:
    sys.exit("the plugin was imported")
np.savez(out_file, **out)
"""


def check(src, dst, inputs_file=None, seed=0):
    """Runs every signature of `src` here and of `dst` in a child process
    without the plugin on the same sample inputs; returns one line per
    output, raises ExportCheckError when one differs."""
    given = dict(np.load(inputs_file, allow_pickle=False)) if inputs_file else {}
    rng = np.random.default_rng(seed)
    original = tf.saved_model.load(src)
    if not original.signatures:
        raise ValueError(f"--check: {src} has no signatures to run")
    samples, want = {}, {}
    for key, signature in original.signatures.items():
        inputs = _sample_inputs(key, signature, given, rng)
        samples.update({f"{key}/{k}": v for k, v in inputs.items()})
        for name, value in signature(**{k: tf.constant(v) for k, v in inputs.items()}).items():
            want[f"{key}/{name}"] = value.numpy()
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(os.path.join(tmp, "in.npz"), **samples)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, os.path.abspath(dst), os.path.join(tmp, "in.npz"),
             os.path.join(tmp, "out.npz")], env=env, cwd=tmp, capture_output=True, text=True)
        if proc.returncode:
            raise ExportCheckError(f"--check: the export failed to load or run without the "
                                   f"plugin:\n{proc.stderr[-4000:]}")
        got = dict(np.load(os.path.join(tmp, "out.npz"), allow_pickle=False))
    lines, bad = [], []
    for name in sorted(want):
        line, same = _compare(name, want[name], got.get(name))
        lines.append(line)
        if not same:
            bad.append(line)
    if bad:
        raise ExportCheckError("--check: outputs differ:\n" + "\n".join(bad))
    return lines


def _compare(name, want, got):
    if got is None:
        return f"{name}: missing from the export's outputs", False
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{name}: {got.dtype}{list(got.shape)} against {want.dtype}{list(want.shape)}", False
    if np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"):
        return f"{name}: {want.dtype}{list(want.shape)} equal", True
    if want.dtype.kind in "fc":
        diff = float(np.nanmax(np.abs(got.astype(np.float64) - want.astype(np.float64))))
        close = np.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
        return f"{name}: {want.dtype}{list(want.shape)} max difference {diff:.3g}", close
    return f"{name}: {want.dtype}{list(want.shape)} differs", False
