"""tf.distribute: a training step built on the plugin's ops (forward and
gradients) under MirroredStrategy over two logical CPUs, and under
MultiWorkerMirroredStrategy with two worker processes on 127.0.0.1, gives the
single-device result. Strategies run in child processes (logical devices must
be set before TensorFlow starts); every child has a time limit and is killed
afterwards, whatever happens."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import distribute_worker
from ecosystem_util import free_ports, kill, python_env

WORKER = os.path.abspath(distribute_worker.__file__)
TIMEOUT = 150


def _start(mode, out, **env):
    return subprocess.Popen([sys.executable, WORKER, mode, str(out)], env=python_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _finish(procs):
    """Waits for all children up to TIMEOUT seconds in total, then kills any
    left; returns their outputs."""
    deadline = time.monotonic() + TIMEOUT
    outputs = []
    try:
        for p in procs:
            try:
                outputs.append(p.communicate(timeout=max(1, deadline - time.monotonic()))[0])
            except subprocess.TimeoutExpired:
                outputs.append(None)
    finally:
        for p in procs:
            kill(p)
    return outputs


@pytest.fixture(scope="module")
def single():
    return distribute_worker.train(None)


def _assert_same_training(got, single, replicas):
    assert got["replicas"] == replicas
    np.testing.assert_allclose(got["losses"], single["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["table"], single["table"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got["bias"], single["bias"], rtol=1e-5, atol=1e-7)


def test_single_device_training_moves_the_weights(single):
    table0, bias0 = distribute_worker.initial()
    assert not np.allclose(single["table"], table0)
    assert not np.allclose(single["bias"], bias0)


def test_mirrored_strategy_two_logical_cpus(single, tmp_path):
    out = tmp_path / "mirrored.json"
    proc = _start("mirrored", out)
    (log,) = _finish([proc])
    assert proc.returncode == 0 and out.exists(), f"rc={proc.returncode}\n{(log or '')[-3000:]}"
    _assert_same_training(json.loads(out.read_text()), single, replicas=2)


def test_multi_worker_mirrored_strategy_two_processes(single, tmp_path):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    outs = [tmp_path / f"worker{i}.json" for i in range(2)]
    procs = []
    try:
        for i in range(2):
            tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
            procs.append(_start("multiworker", outs[i], TF_CONFIG=tf_config))
    finally:
        logs = _finish(procs)
    for i, (proc, log) in enumerate(zip(procs, logs)):
        assert outs[i].exists(), f"worker {i}: rc={proc.returncode}\n{(log or 'timed out')[-3000:]}"
    results = [json.loads(o.read_text()) for o in outs]
    for got in results:
        _assert_same_training(got, single, replicas=2)
    assert results[0] == results[1]
