"""The GPU gate: whether the library registers its GPU kernels. The decision
is the library's own (cc/kernels/library/gpu_gate.cc), fed injected facts here: old
drivers, GPUs without code in the library, mixed machines, no GPU,
CUDA_VISIBLE_DEVICES subsets. Then this process's facts, the registry they
lead to, and the code the library really carries (its fatbin)."""

import json
import os
import re
import shutil
import subprocess

import pytest
import tensorflow as tf
from tensorflow.python.framework import kernels

import fatbin
import library_link
import tf_scatter_ops as tso
from tf_scatter_ops import gpu
from tf_scatter_ops._base import library as _loader
from tf_scatter_ops._base import stamp as _stamp
from table_rows import OP_TYPES as OP_NAMES
import gpu_gate_facts
from tf_scatter_ops.ops import DTYPES
from ecosystem_util import python_env, run_python

FULL = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "compute_120"]
BUILD = {"built_with_gpu": True, "runtime": "13.0", "library_archs": FULL}
NVML = {"driver_source": "nvml", "driver": "13.0"}


def device(capability, name="", uuid=""):
    return {"capability": capability, "name": name, "uuid": uuid}


def decide(devices=(), **facts):
    return gpu_gate_facts.decide({**BUILD, **NVML, "devices": list(devices), **facts})


def test_a_supported_gpu_runs_its_own_sass():
    d = decide([device("9.0", "H200")])
    assert d["registered"] and not d["warn"]
    assert d["devices"][0]["code"] == "sm_90"
    assert "GPU 0 (H200, compute capability 9.0) runs sm_90" in d["why"]


@pytest.mark.parametrize("capability,code", [
    ("7.5", "sm_75"), ("8.0", "sm_80"), ("8.6", "sm_86"), ("8.7", "sm_86"), ("8.9", "sm_89"),
    ("9.0", "sm_90"), ("10.0", "sm_100"), ("10.3", "sm_100"), ("12.0", "sm_120"),
    ("12.1", "sm_120")])
def test_every_gpu_from_turing_on_has_sass(capability, code):
    """SASS runs on its major version at a minor at least its own."""
    d = decide([device(capability)])
    assert d["registered"], d["why"]
    assert d["devices"][0]["code"] == code


def test_the_default_list_is_the_architectures_here():
    assert gpu_gate_facts.decide({**BUILD, **NVML, "devices": []})["library_archs"] == FULL


@pytest.mark.parametrize("capability", ["7.0", "6.1", "11.0"])
def test_a_gpu_without_code_steps_aside_and_warns(capability):
    """sm_70 (V100) and sm_61 are older than any code; 11.0 has no SASS of its
    major and the PTX (12.0) is newer than it."""
    d = decide([device(capability, "Old")])
    assert not d["registered"] and d["warn"]
    assert f"no code for GPU 0 (Old, compute capability {capability})" in d["why"]
    assert "sm_75, sm_80" in d["why"]  # says what the library has


def test_sm_75_without_its_sass_steps_aside():
    """A T4 and a build for Ampere and Hopper only (TFSO_CUDA_ARCHS=80,90)."""
    d = decide([device("7.5", "Tesla T4")], library_archs=["sm_80", "sm_90", "compute_90"])
    assert not d["registered"] and d["warn"]
    assert "Tesla T4, compute capability 7.5" in d["why"]


def test_newer_gpus_run_the_ptx_when_the_driver_can_compile_it():
    narrow = ["sm_80", "sm_90", "compute_90"]
    d = decide([device("10.0")], library_archs=narrow)
    assert d["registered"] and d["devices"][0]["code"] == "compute_90"
    # PTX needs a driver at least as new as the toolkit that wrote it.
    d = decide([device("10.0")], library_archs=narrow, runtime="12.5", driver="12.2")
    assert not d["registered"] and d["warn"]
    assert "its PTX needs a driver for CUDA 12.5" in d["why"]


@pytest.mark.parametrize("driver", ["12.2", "11.8"])
def test_a_driver_older_than_the_runtime_steps_aside_and_warns(driver):
    d = decide([device("9.0")], driver=driver)
    assert not d["registered"] and d["warn"]
    assert (f"the NVIDIA driver supports CUDA {driver}, but the GPU kernels were built with "
            "CUDA 13.0, which needs a driver for CUDA 13.0 or newer") in d["why"]


def test_a_cuda_12_build_runs_on_any_cuda_12_driver():
    """CUDA's minor version compatibility: a 12.5 runtime on a 12.2 driver."""
    d = decide([device("8.6")], runtime="12.5", driver="12.2")
    assert d["registered"] and d["devices"][0]["code"] == "sm_86"


def test_one_gpu_without_code_on_a_mixed_machine_steps_aside_for_all():
    """Kernels are registered per device type, not per GPU."""
    d = decide([device("9.0", "H100"), device("7.0", "V100")])
    assert not d["registered"] and d["warn"]
    assert "GPU 1 (V100, compute capability 7.0)" in d["why"] and "H100" not in d["why"]
    assert [x["code"] for x in d["devices"]] == ["sm_90", None]


@pytest.mark.parametrize("visible,order,registered", [
    ("1", "PCI_BUS_ID", True),        # the H100 alone
    ("0", "PCI_BUS_ID", False),       # the V100 alone
    ("1,0", "PCI_BUS_ID", False),
    ("GPU-bbbb", "", True),           # UUID prefixes name a GPU in any order
    ("GPU-aaaa", "", False),
    ("1,x,0", "PCI_BUS_ID", True),    # an invalid entry ends the list
    ("1,1,0", "PCI_BUS_ID", True),    # so does a repeated one
    ("1,7,0", "PCI_BUS_ID", True),    # and one past the last GPU
    ("GPU-", "", True),               # a prefix of both names none: nothing visible
])
def test_cuda_visible_devices_picks_the_gpus_that_count(visible, order, registered):
    gpus = [device("7.0", "V100", "GPU-aaaa-1"), device("9.0", "H100", "GPU-bbbb-2")]
    d = decide(gpus, cuda_visible_devices=visible, cuda_device_order=order)
    if visible == "GPU-":
        assert not d["registered"] and not d["warn"]
        assert d["why"] == "no visible GPU (CUDA_VISIBLE_DEVICES=GPU-)"
        return
    assert d["registered"] == registered, d["why"]
    assert d["warn"] == (not registered)


def test_indices_in_cudas_default_order_count_every_gpu_of_a_mixed_machine():
    """CUDA's default order (fastest first) is not NVML's: on a mixed machine
    an index could name either GPU, so both count, and the reason says so."""
    gpus = [device("7.0", "V100"), device("9.0", "H100")]
    d = decide(gpus, cuda_visible_devices="1")
    assert not d["registered"] and "every GPU counted" in d["why"]
    # Alike GPUs: the order does not matter.
    d = decide([device("9.0"), device("9.0")], cuda_visible_devices="1")
    assert d["registered"] and [x["visible"] for x in d["devices"]] == [False, True]


def test_no_visible_gpu_steps_aside_quietly():
    d = decide([device("9.0")], cuda_visible_devices="")
    assert not d["registered"] and not d["warn"]
    assert d["why"] == "no visible GPU (CUDA_VISIBLE_DEVICES=)"


def test_no_gpu_steps_aside_quietly():
    d = decide([])
    assert not d["registered"] and not d["warn"] and d["why"] == "no GPU found"


def test_no_driver_steps_aside_quietly():
    d = gpu_gate_facts.decide({**BUILD, "driver_source": None, "devices": []})
    assert not d["registered"] and not d["warn"] and d["driver"] is None
    assert d["why"].startswith("no NVIDIA driver")


def test_the_driver_api_applies_cuda_visible_devices_itself():
    """Without NVML the driver API lists the visible GPUs only, in CUDA's order."""
    d = decide([device("9.0")], driver_source="cuda", devices_are_visible=True,
               cuda_visible_devices="3")
    assert d["registered"] and d["devices"][0]["visible"]


def test_a_build_without_gpu_kernels_registers_none():
    d = gpu_gate_facts.decide({"built_with_gpu": False, "devices": [device("9.0")], **NVML})
    assert not d["registered"] and not d["warn"]
    assert "no GPU kernels" in d["why"]


def test_the_setting_overrides_the_facts():
    d = decide([device("7.0")], setting="1")
    assert d["registered"] and not d["warn"]
    d = decide([device("9.0")], setting="0")
    assert not d["registered"] and not d["warn"] and d["why"] == "TF_SCATTER_OPS_GPU=0"


# ---- this process ---------------------------------------------------------

def gpu_kernels_registered():
    return any(k.device_type == "GPU" for op in OP_NAMES.values()
               for k in kernels.get_registered_kernels_for_op("TfScatter>" + op).kernel)


def test_this_process_registered_what_its_gate_decided():
    status = tso.gpu_status()
    assert status["built_with_gpu"] == _stamp.built_with(_loader.loaded_path(), "GPU")
    assert gpu_kernels_registered() == status["registered"]
    if not tf.config.list_physical_devices("GPU") and status["driver_source"] is None:
        assert not status["registered"] and not status["warn"]


built_with_nvcc = pytest.mark.skipif(
    not shutil.which("nvcc") or os.environ.get("TFSO_GPU") == "0",
    reason="built without nvcc: CPU-only library")


@built_with_nvcc
def test_the_library_runs_the_cuda_runtime_it_was_built_with():
    """Its CUDA calls reach the static runtime linked inside it, none is
    exported, and gpu_status() names that runtime: nvcc's release."""
    assert library_link.problems(_loader.loaded_path()) == []
    release = re.search(r"release (\d+\.\d+)",
                        subprocess.run(["nvcc", "--version"], capture_output=True,
                                       text=True).stdout).group(1)
    assert tso.gpu_status()["runtime"] == release


@built_with_nvcc
def test_the_library_reports_the_code_its_fatbin_holds():
    with open(_loader.loaded_path(), "rb") as f:
        held = fatbin.archs(f.read())
    assert tso.gpu_status()["library_archs"] == held
    if not os.environ.get("TFSO_CUDA_ARCHS"):  # a default build
        assert held == fatbin.default_archs()


def _gpu_dtypes(op, dtypes):
    """Every op has GPU kernels for its dtypes but string (as TensorFlow)."""
    return sorted(d.name for d in dtypes if d != tf.string)


GPU_DTYPES = {op: _gpu_dtypes(op, ds) for op, ds in DTYPES.items()}

REGISTERED = """
import json
import tensorflow as tf
from tensorflow.python.framework import kernels
import tf_scatter_ops as tso
from tf_scatter_ops._base.table import OPS
OP_TYPES = {row.py: row.op for row in OPS}
found = {}
for op, raw in OP_TYPES.items():
    attr = "Tparams" if op == "gather_nd" else "T"
    found[op] = sorted(tf.dtypes.as_dtype(t).name
                       for k in kernels.get_registered_kernels_for_op("TfScatter>" + raw).kernel
                       if k.device_type == "GPU"
                       for c in k.constraint if c.name == attr
                       for t in c.allowed_values.list.type)
print(json.dumps({"status": tso.gpu_status(), "found": found}))
"""


def registered_with(setting):
    rc, out, err = run_python(REGISTERED, env=python_env(TF_SCATTER_OPS_GPU=setting))
    assert rc == 0, err[-3000:]
    return json.loads(out.splitlines()[-1])


@built_with_nvcc
def test_gpu_kernels_for_every_gpu_dtype_when_registered():
    """TF_SCATTER_OPS_GPU=1 registers them on any machine: one GPU kernel per
    op and dtype TensorFlow's GPU kernels have (no string)."""
    got = registered_with("1")
    assert got["status"]["registered"] and got["status"]["setting"] == "1"
    assert got["found"] == GPU_DTYPES


@built_with_nvcc
def test_no_gpu_kernel_when_the_setting_says_so():
    got = registered_with("0")
    assert not got["status"]["registered"]
    assert got["found"] == {op: [] for op in GPU_DTYPES}


def test_the_import_warns_once_with_the_reason_and_the_way_out(monkeypatch):
    status = decide([device("7.0", "V100")])
    monkeypatch.setattr(gpu, "gpu_status", lambda: status)
    monkeypatch.setattr(gpu, "_warned", False)
    with pytest.warns(RuntimeWarning) as caught:
        gpu.warn_if_stepped_aside()
        gpu.warn_if_stepped_aside()
    assert len(caught) == 1
    text = str(caught[0].message)
    assert status["why"] in text and "run on the CPU instead" in text
    assert "NVCC=/path/to/cuda/bin/nvcc make" in text


def test_no_warning_where_no_gpu_is_visible(monkeypatch, recwarn):
    monkeypatch.setattr(gpu, "gpu_status", lambda: decide([]))
    monkeypatch.setattr(gpu, "_warned", False)
    gpu.warn_if_stepped_aside()
    assert not [w for w in recwarn if "tf_scatter_ops" in str(w.message)]
