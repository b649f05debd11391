import os
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf_scatter_ops  # noqa: E402,F401


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: large or long tests (run in CI)")
    config.addinivalue_line("markers", "gpu: needs a GPU; skipped without one")


def pytest_collection_modifyitems(config, items):
    if tf.config.list_physical_devices("GPU"):
        return
    skip = pytest.mark.skip(reason="needs a GPU: TensorFlow sees none here")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng(request):
    seed = zlib.crc32(request.node.nodeid.encode())  # stable across runs
    return np.random.default_rng(seed)
