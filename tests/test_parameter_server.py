"""tf.distribute.experimental.ParameterServerStrategy: an embedding table on a
parameter server, trained through the plugin's ops (gather_nd reading rows
from the variable, scatter_nd_sub / scatter_nd_add writing them in place), on
an in-process cluster on 127.0.0.1 (chief, 2 workers, 2 PS; free ports), gives
exactly the single-process result, and the TfScatter ops run on the PS. Tables
split by FixedShardsPartitioner(2) (ShardedVariables, one shard per PS) are
read and updated shard by shard, each on its own PS, with the single
process's results; a bad row raises before either shard is written.

Both runs are child processes (tests/helpers/ps_worker.py), each with a time limit and
killed with its process group afterwards, whatever happens; the cluster's
servers live in the PS child, so they go with it.
"""

import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import ps_worker
from ecosystem_util import free_ports, kill, python_env

WORKER = os.path.abspath(ps_worker.__file__)
TIMEOUT = 150
PS_DEVICES = {f"/job:ps/replica:0/task:{i}/device:CPU:0" for i in range(2)}
# What the placer prints for each node when log_device_placement is on.
PLACEMENT = re.compile(r"^(\S+): \((\S+)\): (/job:\S+)$", re.M)


def _run(args, timeout=TIMEOUT):
    """Runs ps_worker.py with `args`; returns (returncode, stdout, stderr).
    Killed (process group) after `timeout` seconds, and in any case at the end."""
    proc = subprocess.Popen([sys.executable, WORKER, *args], env=python_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        out, err = proc.communicate()
        err += f"\n[killed after the {timeout} s time limit]"
    finally:
        kill(proc)
    return proc.returncode, out, err


def _log(rc, out, err):
    return f"rc={rc}\n--- stdout (tail)\n{out[-3000:]}\n--- stderr (tail)\n{err[-5000:]}"


def _result(path, rc, out, err):
    assert rc == 0 and path.exists(), _log(rc, out, err)
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    path = tmp_path_factory.mktemp("ps") / "single.json"
    return _result(path, *_run(["single", str(path)]))


@pytest.fixture(scope="module")
def ps(tmp_path_factory):
    """The PS run's result and its stdout (the placement log). A cluster whose
    port was taken between choosing and binding it is retried once."""
    path = tmp_path_factory.mktemp("ps") / "ps.json"
    start = time.monotonic()
    for attempt in range(2):
        ports = free_ports(5)  # chief, worker 0, worker 1, ps 0, ps 1
        rc, out, err = _run(["ps", str(path), *map(str, ports)])
        if rc != ps_worker.PORT_IN_USE:
            break
    result = _result(path, rc, out, err)
    print(f"ParameterServerStrategy run: {time.monotonic() - start:.1f} s, "
          f"attempts {attempt + 1}")
    return result, out


def _placements(log):
    """{(node, op type, device)} from the placer's lines."""
    return set(PLACEMENT.findall(log))


def test_table_lives_on_the_parameter_servers(ps):
    result, _ = ps
    assert result["workers"] == 2
    for variant, devices in result["variable_devices"].items():
        assert set(devices) <= PS_DEVICES, (variant, devices)
        if variant in ps_worker.SHARDED:  # one shard per PS
            assert result["variable_types"][variant] == "ShardedVariable"
            assert set(devices) == PS_DEVICES, (variant, devices)
            assert result["shard_shapes"][variant] == [[501, ps_worker.DIM], [500, ps_worker.DIM]]
        else:
            assert result["variable_types"][variant] != "ShardedVariable"
    for variant, graph in result["graphs"].items():
        # the step captures the table's handles, which live on the PS
        assert set(result["variable_devices"][variant]) <= set(
            graph["captured_resource_devices"]), (variant, graph)


def test_traced_steps_hold_our_variable_ops(ps):
    graphs = ps[0]["graphs"]
    assert {"TfScatter>ResourceGatherNd", "TfScatter>ResourceScatterNdSub"} <= set(
        graphs["scatter"]["op_types"])
    assert {"TfScatter>ResourceGatherNd", "TfScatter>ResourceScatterNdAdd"} <= set(
        graphs["commuting"]["op_types"])
    assert "TfScatter>ResourceGatherNd" in graphs["optimizer"]["op_types"]
    for graph in graphs.values():  # the table is never read whole or copied for the lookup
        assert "ResourceGather" not in graph["op_types"]
        assert "GatherNd" not in graph["op_types"]


def test_our_ops_were_placed_on_the_parameter_server(ps):
    """The workers run the steps; the placer put every TfScatter op (the
    reads, the in-place updates) on the PS, next to the table."""
    placements = _placements(ps[1])
    ours = {(node, op, device) for node, op, device in placements if op.startswith("TfScatter>")}
    assert {op for _, op, _ in ours} >= {
        "TfScatter>ResourceGatherNd", "TfScatter>ResourceScatterNdSub",
        "TfScatter>ResourceScatterNdAdd"}, sorted(placements)[:50]
    assert {device for _, _, device in ours} == PS_DEVICES, sorted(ours)
    # and the gradient's arithmetic ran on the workers (the shape of the table,
    # VariableShape, is read next to it on the PS)
    backward = {device for node, op, device in placements
                if node.startswith("gradient_tape/") and op in ("Mul", "Pow", "Sub", "RealDiv")}
    assert backward and all(d.startswith("/job:worker/") for d in backward), sorted(backward)


def test_in_place_updates_equal_the_single_process_run(single, ps):
    """join() after every step: the steps run in the single run's order, so
    the tables and losses are bitwise equal."""
    got = ps[0]
    assert got["losses"]["scatter"] == single["losses"]["scatter"]
    np.testing.assert_array_equal(got["tables"]["scatter"], single["tables"]["scatter"])
    assert not np.array_equal(single["tables"]["scatter"], ps_worker.initial())


def test_concurrent_commuting_updates_equal_the_single_process_run(single, ps):
    """All steps scheduled at once on both workers, in any order: the updates
    are sums of multiples of 1/16 below 2^10, exact in float32, so any order
    gives the single run's table bitwise. The gradients do not depend on the
    table (a linear loss); the losses do (each is read from the table as the
    steps before it left it), so only the tables are compared."""
    got = ps[0]
    np.testing.assert_array_equal(got["tables"]["commuting"], single["tables"]["commuting"])
    assert not np.array_equal(single["tables"]["commuting"], ps_worker.initial())


def test_optimizer_on_our_gradient_equals_the_single_process_run(single, ps):
    """keras.optimizers.SGD.apply_gradients on the IndexedSlices of our
    gather_nd (its own scatter does the update), one step at a time."""
    got = ps[0]
    assert got["losses"]["optimizer"] == single["losses"]["optimizer"]
    np.testing.assert_array_equal(got["tables"]["optimizer"], single["tables"]["optimizer"])
    # plain SGD is the same update as the scatter variant's
    np.testing.assert_array_equal(single["tables"]["optimizer"], single["tables"]["scatter"])


@pytest.mark.parametrize("variant", ps_worker.SHARDED)
def test_sharded_tables_equal_the_single_process_run(single, ps, variant):
    """tso.gather / tso.nn.embedding_lookup and tso.scatter_nd_sub on a
    ShardedVariable (or on its shards, with the per-shard IndexedSlices
    gradients): bitwise the single process's run on one variable, which
    is itself the unsharded scatter variant's update."""
    got = ps[0]
    assert got["losses"][variant] == single["losses"][variant]
    np.testing.assert_array_equal(got["tables"][variant], single["tables"][variant])
    np.testing.assert_array_equal(np.array(single["tables"][variant])[:ps_worker.ROWS],
                                  single["tables"]["scatter"])


def test_sharded_steps_read_and_write_only_touched_rows(ps):
    """Each shard's reads and updates are our ops, placed on that shard's
    PS; no op of a traced step outputs a shard's or the table's shape."""
    result, log = ps
    placed = _placements(log)
    for variant in ps_worker.SHARDED:
        graph = result["graphs"][variant]
        assert {"TfScatter>ResourceGatherNd", "TfScatter>ResourceScatterNdSub"} <= set(
            graph["op_types"]), graph["op_types"]
        assert "ReadVariableOp" not in graph["op_types"] and "ResourceGather" not in graph["op_types"]
        whole = {(ps_worker.SHARDED_ROWS, ps_worker.DIM), (501, ps_worker.DIM), (500, ps_worker.DIM)}
        assert not whole & {tuple(s) for s in graph["output_shapes"]}, graph["output_shapes"]
    reads = {device for node, op, device in placed if op == "TfScatter>ResourceGatherNd"}
    assert reads == PS_DEVICES, reads


def test_a_bad_row_raises_before_either_shard_is_written(single, ps):
    for run in (single, ps[0]):
        error = run["bad_step"]["error"]
        assert error and "indices[2] = [1001] does not index into shape [1001,8]" in error, error
        assert run["bad_step"]["unchanged"]
