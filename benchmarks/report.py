"""The benchmark's main table and chart."""

import os
import sys

import numpy as np
import tensorflow as tf


def render(results, info):
    bws = [r["bandwidth"] / 1e9 for r in results if r["bandwidth"]]
    bandwidth = f"{min(bws):.1f}-{max(bws):.1f}" if bws else "-"
    lines = [f"{info['cpu']} ({info['cpus']} CPUs), our loops: {info['isa']} (CPU: {info['cpu_isa']}), "
             f"TensorFlow {info['tf']}, CPU allocator: {info['allocator']}",
             f"copy bandwidth (memory floor), measured before each workload: {bandwidth} GB/s; "
             f"first touch of a fresh page: {info['first_touch_us']:.2f} us; "
             f"intra-op threads: {tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count()}",
             "",
             f"{'workload':<9} {'ours ms':>9} {'TF ms':>9} {'XLA ms':>9} {'vs TF':>7} {'vs XLA':>7} "
             f"{'x floor':>8} {'1st ms':>9} {'1st x fl':>8} {'faults':>7} {'ours@XLA':>9} {'vs XLA':>7}  title",
             "-" * 146]
    for r in results:
        unit = 1e6 if r["per_call"] else 1e3
        fmt = (lambda v: f"{v * unit:8.2f}{'us' if r['per_call'] else ''}") if r["per_call"] else \
            (lambda v: f"{v * unit:9.2f}")
        xla = fmt(r["xla"]) if r["xla"] else f"{'-':>9}"
        vs_xla = f"{r['xla'] / r['ours']:6.1f}x" if r["xla"] else f"{'-':>7}"
        floor = f"{r['ours'] / r['floor']:7.2f}x" if r["floor"] else f"{'-':>8}"
        first = r["first"]["ours"]
        first_floor = f"{first / r['floor']:7.2f}x" if r["floor"] else f"{'-':>8}"
        faults = f"{100 * r['faults'] / r['ours']:6.0f}%" if r.get("faults") else f"{'-':>7}"
        ours_xla = r.get("ours xla")
        at_xla = (f"{fmt(ours_xla)} {r['xla'] / ours_xla:6.1f}x" if ours_xla and r["xla"]
                  else f"{'-':>9} {'-':>7}")
        lines.append(f"{r['name']:<9} {fmt(r['ours'])} {fmt(r['tf'])} {xla} "
                     f"{r['tf'] / r['ours']:6.1f}x {vs_xla} {floor} {fmt(first)} {first_floor} {faults} "
                     f"{at_xla}  {r['title']}")
    lines += ["", "ms: median of all calls; 1st: median of the first call of each burst, which follows "
              "another implementation (TensorFlow's serial kernel leaves the pool's threads idle); "
              "faults: the share of our time that first-touching a fresh output would take "
              "(its pages x the first-touch cost; none with the BFC allocator, which reuses them); "
              "ours@XLA: our op under jit_compile=True, where XLA runs our kernel, vs XLA's own"]
    return "\n".join(lines)


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        return
    names = [r["name"] for r in results if not r["per_call"]]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    x = np.arange(len(names))
    for k, (key, label) in enumerate([("ours", "tf-scatter-ops"), ("tf", "TensorFlow kernel"),
                                      ("xla", "TensorFlow + XLA"), ("floor", "memory floor")]):
        vals = [(r[key] or 0) * 1e3 for r in results if not r["per_call"]]
        ax.bar(x + (k - 1.5) * 0.2, vals, 0.2, label=label)
    ax.set_xticks(x, names)
    ax.set_ylabel("ms (median, lower is better)")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title(f"scatter_nd family on {os.cpu_count()} CPU cores")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
