"""Times torch's scatter/gather on the data tests/cc/gpu_harness.cu dumped and
cross-checks the harness's results against torch's. Run by tools/gpu_check.sh.

    python3 benchmarks/gpu_torch_bench.py OUT_DIR

Needs only PyTorch with CUDA. Prints the final table and writes
OUT_DIR/gpu_results.json.
"""
import json
import os
import sys

import torch


def load(path, dtype, count):
    return torch.from_file(path, size=count, dtype=dtype).cuda()


def median_ms(fn, reps=11):
    fn()
    fn()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def torch_op(op, depth, n, shape, idx, upd, tensor):
    """The torch call for one workload (indices converted to int64 outside)."""
    nslots = 1
    for d in shape[:depth]:
        nslots *= d
    slice_ = tensor.numel() // nslots
    if op == "gather":
        params = tensor.view(nslots, slice_)
        return lambda: params.index_select(0, idx[:, 0])
    if op == "scatter_nd":
        cols = [idx[:, d] for d in range(depth)]
        values = upd.view(n, slice_).squeeze(-1) if slice_ == 1 else upd.view(n, slice_)

        def scatter_nd():
            out = torch.zeros(shape, dtype=torch.float32, device="cuda")
            return out.index_put_(tuple(cols), values, accumulate=True)
        return scatter_nd
    rows = idx[:, 0]
    values = upd.view(n, slice_)
    if op == "add":
        return lambda: tensor.view(nslots, slice_).clone().index_add_(0, rows, values)
    if op == "update":
        def update():
            out = tensor.view(nslots, slice_).clone()
            out[rows] = values
            return out
        return update
    if op == "max":
        return lambda: tensor.clone().scatter_reduce_(0, rows, upd, "amax", include_self=True)
    raise ValueError(op)


def main(out_dir):
    rows = []
    ok = True
    with open(os.path.join(out_dir, "workloads.txt")) as f:
        lines = [l.split() for l in f if l.strip()]
    for name, op, depth, n, ours_ms, ignore_ms, floor_ms, *shape in lines:
        depth, n = int(depth), int(n)
        shape = [int(s) for s in shape]
        ours_ms, ignore_ms, floor_ms = float(ours_ms), float(ignore_ms), float(floor_ms)
        base = os.path.join(out_dir, name)
        total = 1
        for s in shape:
            total *= s
        slice_ = total
        for s in shape[:depth]:
            slice_ //= s
        idx = load(base + ".idx", torch.int32, n * depth).view(n, depth).long()
        upd = load(base + ".upd", torch.float32, 0 if op == "gather" else n * slice_)
        tensor = load(base + ".tensor", torch.float32, total)
        fn = torch_op(op, depth, n, shape, idx, upd, tensor)
        expect = fn().reshape(-1)
        ours = load(base + ".out", torch.float32, expect.numel())
        if op == "add" or op == "scatter_nd":  # float sums: order differs
            same = torch.allclose(ours, expect, rtol=1e-5, atol=1e-3)
        else:
            same = torch.equal(ours, expect)
        ok &= same
        t = median_ms(fn)
        rows.append(dict(workload=name, op=op, ours_ms=ours_ms, ours_ignore_ms=ignore_ms, torch_ms=t,
                         floor_ms=floor_ms, matches_torch=bool(same)))
    with open(os.path.join(out_dir, "gpu_results.json"), "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                       rows=rows), f, indent=1)
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("ours: ERROR policy (waits for the index check); IGNORE: no host round trip")
    print(f"{'':4} {'op':10} {'ours ms':>9} {'IGNORE ms':>9} {'torch ms':>9} {'torch/ours':>10} "
          f"{'floor ms':>9} {'ours/floor':>10}  same as torch")
    for r in rows:
        print(f"{r['workload']:4} {r['op']:10} {r['ours_ms']:9.3f} {r['ours_ignore_ms']:9.3f} "
              f"{r['torch_ms']:9.3f} "
              f"{r['torch_ms'] / r['ours_ms']:10.2f} {r['floor_ms']:9.3f} "
              f"{r['ours_ms'] / r['floor_ms']:10.2f}  {'yes' if r['matches_torch'] else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
