"""Every instruction-set path this CPU has (portable, AVX2, AVX-512: index
linearisation and streamed gathers), forced with TF_SCATTER_OPS_ISA in a
child process each, gives TensorFlow's results element by element."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

import tf_scatter_ops as tso
from tf_scatter_ops._base import library as _loader
from ecosystem_util import python_env

ISAS = ["portable", "avx2", "avx512"]
CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers", "isa_check.py")


def _available():
    return ISAS[:ISAS.index(tso.cpu_isa()) + 1]


@pytest.mark.parametrize("isa", ISAS)
def test_each_isa_path_matches_tensorflow(isa):
    if isa not in _available():
        pytest.skip(f"this CPU has no {isa} (best: {tso.cpu_isa()})")
    out = subprocess.run([sys.executable, CHECK], env=python_env(TF_SCATTER_OPS_ISA=isa),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert f"isa {isa}: ok" in out.stdout, out.stdout[-2000:]


def test_isa_above_the_cpu_is_capped_and_unknown_names_are_rejected():
    assert tso.active_isa() == tso.cpu_isa()  # no setting: the best the CPU has
    capped = subprocess.run(
        [sys.executable, "-c", "import tf_scatter_ops as t; print(t.active_isa(), t.cpu_isa())"],
        env=python_env(TF_SCATTER_OPS_ISA="avx512"), capture_output=True, text=True, timeout=120)
    active, cpu = capped.stdout.split()[-2:]
    assert active == cpu  # avx512 asked: what the CPU has, at most
    with pytest.raises(ValueError, match="TF_SCATTER_OPS_ISA='avx3': expected one of portable, avx2, avx512"):
        _loader.check_isa_setting("avx3")
    _loader.check_isa_setting("portable")
    assert tf.__version__  # the library stays loaded in this process
