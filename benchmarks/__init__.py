"""Benchmarks of tf-scatter-ops against TensorFlow's kernels and XLA, run from
the repository's root: `python -m benchmarks.bench` (docs/performance.md)."""
