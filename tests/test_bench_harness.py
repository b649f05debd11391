"""The benchmark harness runs, checks results before timing, and writes its
JSON (timings are printed, never asserted)."""

import json

import tensorflow as tf

from tf_scatter_ops import bench


def test_quick_bench_runs_and_writes_json(tmp_path, capsys):
    bench.main(["--quick", "--only", "W1,W7,W8", "--rounds", "1", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "bench.json").read_text())
    assert [r["name"] for r in data["results"]] == ["W1", "W7", "W8"]
    assert set(data["results"][0]["first"]) == {"ours", "tf", "xla"}
    assert "vs XLA" in capsys.readouterr().out


def test_check_rejects_a_wrong_result():
    w = bench.WORKLOADS[0]
    args = (tf.zeros([8]), tf.constant([[1]]), tf.ones([1]))
    impls = {"ours": lambda *a: tf.zeros([8]), "tf": tf.tensor_scatter_nd_add}
    try:
        bench.check(w, impls, args)
    except AssertionError as e:
        assert "differs" in str(e)
    else:
        raise AssertionError("check() accepted a wrong result")
