"""The benchmark harness runs, checks results before timing, and writes its
JSON (timings are printed, never asserted)."""

import json

import numpy as np
import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from benchmarks import bench, gnn, harness, programs, sweep, workloads


def test_quick_bench_runs_and_writes_json(tmp_path, capsys):
    bench.main(["--quick", "--only", "W1,W7,W8,S3", "--rounds", "1", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "bench.json").read_text())
    assert [r["name"] for r in data["results"]] == ["W1", "W7", "W8", "S3"]
    ours_xla = {"ours xla"} if tso.xla_uses_our_kernels() else set()
    assert set(data["results"][0]["first"]) == {"ours", "tf", "xla"} | ours_xla
    assert (data["results"][0]["ours xla"] is not None) == bool(ours_xla)
    assert "vs XLA" in capsys.readouterr().out


def test_check_rejects_a_wrong_result():
    w = workloads.WORKLOADS[0]
    args = (tf.zeros([8]), tf.constant([[1]]), tf.ones([1]))
    impls = {"ours": lambda *a: tf.zeros([8]), "tf": tf.tensor_scatter_nd_add}
    try:
        harness.check(w, impls, args)
    except AssertionError as e:
        assert "differs" in str(e)
    else:
        raise AssertionError("check() accepted a wrong result")


def test_quick_sweep_covers_every_size_and_reports_the_call_floor(tmp_path, capsys):
    bench.main(["--sweep", "--quick", "--rounds", "1", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "sweep.json").read_text())
    sizes = sorted({r["out_bytes"] for r in data["rows"]})
    assert sizes == [16 << 10 << (2 * k) for k in range(6)]
    assert {r["workload"] for r in data["rows"]} == set(sweep.SWEEP)
    assert len(data["rows"]) == len(sizes) * len(sweep.SWEEP)
    for floors in data["empty_function_s"].values():
        assert floors["fn"] > 0 and floors["xla fn"] > 0
    impls = ("ours", "tf", "xla") + (("ours xla",) if tso.xla_uses_our_kernels() else ())
    for r in data["rows"]:
        for impl in impls:
            assert (r[f"{impl} per op"] is None) == (r["out_bytes"] > sweep.CHAIN_MAX_BYTES)
        assert (r["ours xla"] is not None) == ("ours xla" in impls)
    out = capsys.readouterr().out
    assert "an empty tf.function of 3 tensors" in out and "ours/op" in out and "@XLA/op" in out


def test_a_chain_runs_each_op_on_its_own_inputs():
    w = sweep.sized({w.name: w for w in workloads.WORKLOADS}["W5"], 16 << 10)
    args = workloads.make_inputs(w, np.random.default_rng(0))
    adapt, fixed, varying = sweep.chain_inputs(w, args)
    outs = tf.function(sweep.chained(adapt(tf.scatter_nd), sweep.CHAIN))(*fixed, *varying)
    assert len(outs) == sweep.CHAIN == len(varying)
    for j, out in enumerate(outs):
        expected = tf.scatter_nd(args[0], args[1] * (1 + j), args[2])
        assert out.numpy().tobytes() == expected.numpy().tobytes()


def test_ours_under_xla_runs_our_kernels():
    """The 'ours xla' column times our XLA kernels (our kernel or XLA's
    instruction with our index check), not the wrappers' lowering to
    TensorFlow's ops (scatter_nd gets its shape as a constant)."""
    if not tso.xla_uses_our_kernels():
        pytest.skip("XLA does not run our kernels here (no XLA kernels in the library, or a GPU "
                    "is visible): no 'ours xla' column to check")
    base = {w.name: w for w in workloads.WORKLOADS}
    for name in sweep.SWEEP:
        w = sweep.sized(base[name], 16 << 10)
        args = workloads.make_inputs(w, np.random.default_rng(0))
        f = workloads.implementations(w)["ours xla"]
        assert 'custom_call_target="tf_scatter_ops.' in f.experimental_get_compiler_ir(*args)(
            stage="hlo"), name


def test_programs_run_four_ways_after_their_check(tmp_path, capsys):
    bench.main(["--quick", "--only", "P5,P6", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["results"] == []
    assert [r["name"] for r in data["programs"]] == ["P5", "P6"]
    for r in data["programs"]:
        assert all(r[v] > 0 for v in programs.VARIANTS)
    out = capsys.readouterr().out
    assert "ours XLA" in out and "P6" in out


def test_program_check_rejects_a_wrong_result():
    p = programs.PROGRAMS[-1]
    inputs = p.inputs(np.random.default_rng(0), True)
    fns = programs._functions(p)
    fns["ours xla"] = lambda x: tf.zeros([100])
    with pytest.raises(AssertionError, match="ours xla differs"):
        programs._check(p, fns, inputs)


def test_gnn_steps_run_four_ways_with_stock_gradients(tmp_path, capsys):
    """Graph networks written with TensorFlow's functions: under the patch the
    plugin's ops run and the gradients are stock's bits (row gathers of layer
    outputs get their dense gradient from our segment sum)."""
    gnn.main(["--quick", "--rounds", "1", "--only", "gcn,gat4", "--out", str(tmp_path)])
    rows = json.loads((tmp_path / "gnn.json").read_text())["rows"]
    assert [r["program"].split()[0] for r in rows] == ["gcn", "gat4"]
    for r in rows:
        assert r["agreement"] == "bitwise", r
        # the GCN's sum of gathered rows is fused into gather_reduce, its
        # [edges, features] tensor gone; the GAT's gathered rows are read twice
        if r["program"].startswith("gcn"):
            assert r["ours"] == ["GatherReduce"], r
            assert r["largest"]["patched"] < r["largest"]["stock"], r
        else:
            assert {"GatherNd", "UnsortedSegmentSum"} <= set(r["ours"]), r
        assert r["fused"]["agreement"] == "bitwise" or r["program"].startswith("gat4"), r
        assert all(isinstance(r["ms"][w], float) for w in ("stock", "patched")), r
    assert "largest tensor" in capsys.readouterr().out


def test_gnn_aggregation_rows_say_where_pytorch_did_not_run(tmp_path, capsys):
    """The aggregation alone: ours, stock and XLA, forward and with the
    gradient; without an interpreter with PyTorch its rows say so."""
    gnn.main(["--quick", "--rounds", "1", "--only", "aggregation", "--torch-python",
              str(tmp_path / "no-python"), "--out", str(tmp_path)])
    (row,) = json.loads((tmp_path / "gnn.json").read_text())["rows"]
    for way in ("gather_reduce", "stock", "stock xla"):
        for step in ("forward", "forward+backward"):
            assert isinstance(row["ms"][f"{way} {step}"], float), row
    assert row["torch"].startswith("not run: no "), row
    out = capsys.readouterr().out
    assert "| graph, forward | gather_reduce |" in out and "not run: no " in out
