"""PyTorch's CPU aggregation of a graph, for benchmarks/gnn.py's table.

    python torch_aggregation.py DIR ROUNDS

Runs in an interpreter with PyTorch and numpy (no TensorFlow: gnn.py starts
it in build/torch-venv, tools/torch_venv.sh). DIR holds the graph as gnn.py
wrote it: src.npy, dst.npy (edges src -> dst), x.npy [nodes, features],
w.npy (a weight per edge). The aggregation is out[v] = sum over the edges
e into v of w[e] * x[src[e]], computed two ways:

* index_add: out.index_add_(0, dst, x[src] * w[:, None]), the gather and
  scatter-add that PyG's and most hand-written PyTorch GNN code make (an
  [edges, features] tensor);
* sparse.mm: torch.sparse.mm(A, x) with A the [nodes, nodes] weighted
  adjacency in CSR, built once outside the timing (as a model keeps it).

Each is timed forward, and forward plus the gradient with respect to x for
an output gradient of ones. Writes DIR/torch.json (median ms per call, the
thread count, torch's version) and DIR/<way>.npy (the forward results, which
gnn.py compares with its own).
"""

import json
import os
import statistics
import sys
import time

import numpy as np
import torch


def median_ms(fn, rounds, calls=3):
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e3)
    return statistics.median(times)


def main(folder, rounds):
    src = torch.from_numpy(np.load(os.path.join(folder, "src.npy")).astype(np.int64))
    dst = torch.from_numpy(np.load(os.path.join(folder, "dst.npy")).astype(np.int64))
    x = torch.from_numpy(np.load(os.path.join(folder, "x.npy")))
    w = torch.from_numpy(np.load(os.path.join(folder, "w.npy")))
    nodes = x.shape[0]
    adjacency = torch.sparse_coo_tensor(torch.stack([dst, src]), w, (nodes, nodes)).coalesce()
    adjacency = adjacency.to_sparse_csr()

    def index_add(v):
        return torch.zeros_like(v).index_add_(0, dst, v[src] * w[:, None])

    def sparse_mm(v):
        return torch.sparse.mm(adjacency, v)

    ways = {"index_add": index_add, "sparse.mm": sparse_mm}
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(), "ms": {}}
    for name, way in ways.items():
        with torch.no_grad():
            np.save(os.path.join(folder, f"{name}.npy"), way(x).numpy())
            result["ms"][f"{name} forward"] = median_ms(lambda: way(x), rounds)
        xg = x.clone().requires_grad_(True)

        def step():
            out = way(xg)
            (grad,) = torch.autograd.grad(out, xg, torch.ones_like(out))
            return grad
        try:
            result["ms"][f"{name} forward+backward"] = median_ms(step, rounds)
        except RuntimeError as e:  # an op without a CPU gradient in this version
            result["ms"][f"{name} forward+backward"] = None
            result.setdefault("errors", {})[name] = str(e).splitlines()[0]
    with open(os.path.join(folder, "torch.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
