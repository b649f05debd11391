"""Whether the GPU kernels run in this process, and why.

When the library loads, it asks the NVIDIA driver (NVML, else the driver API;
no CUDA context is created) which CUDA version it supports and which GPUs
are visible, and registers its GPU kernels only if the driver supports the
CUDA runtime they were linked with and every visible GPU has code for it in
the library (cc/kernels/library/gpu_gate.h). Otherwise it registers none: TensorFlow
places the ops on the CPU, where they work, and the import warns once when
GPUs are visible.

`TF_SCATTER_OPS_GPU=0` never registers the GPU kernels; `=1` registers them
without asking the driver.
"""

import warnings

from tf_scatter_ops._base import library as _loader

SETTING_ENV = "TF_SCATTER_OPS_GPU"
HOW_TO_BUILD = (
    "To run them on this machine's GPUs, build the library with a CUDA toolkit that "
    "the driver supports and that targets these GPUs: `NVCC=/path/to/cuda/bin/nvcc make` "
    "in a clone, or `NVCC=/path/to/cuda/bin/nvcc pip install --no-cache-dir .` "
    "(TFSO_CUDA_ARCHS chooses the architectures; docs/gpu.md)."
)


def gpu_status():
    """What the library found about GPUs when it loaded, and what it decided.

    Returns:
        A dict. registered: whether the GPU kernels are registered; why: the
        reason, in words; built_with_gpu; runtime: the CUDA runtime linked
        ("13.0"); library_archs: the code in the library (["sm_75", ...,
        "compute_120"]); driver: the CUDA version the driver supports
        ("12.2"), driver_source ("nvml" or "cuda"), both None without a
        driver; devices: one dict per GPU found (index, name, uuid,
        capability, visible, code: what it runs, "sm_90", "compute_120" or
        None); cuda_visible_devices; setting: $TF_SCATTER_OPS_GPU as read;
        warn.

    Example:
        >>> status = tso.gpu_status()
        >>> status["registered"] in (True, False), isinstance(status["why"], str)
        (True, True)
    """
    _loader.load()
    return _status(_loader.library_function("tf_scatter_ops_gpu_status"))


def _version_text(number):
    return f"{number // 1000}.{number % 1000 // 10}" if number else None


def _status(text):
    """gpu_status()'s dict from the library's facts and decision lines."""
    values, devices, codes = {}, [], {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "device":
            index, capability, uuid, name = value.split("|", 3)
            devices.append({"index": int(index), "name": name, "uuid": uuid,
                            "capability": capability})
        elif key == "code":
            index, code = value.split("|", 1)
            codes[int(index)] = code or None
        else:
            values[key] = value
    for position, d in enumerate(devices):
        d["visible"] = position in codes
        d["code"] = codes.get(position)
    sass = [f"sm_{a}" for a in values.get("sass", "").split(",") if a]
    ptx = int(values.get("ptx") or 0)
    return {
        "registered": values.get("registered") == "1",
        "why": values.get("why", ""),
        "warn": values.get("warn") == "1",
        "built_with_gpu": values.get("built_with_gpu") == "1",
        "runtime": _version_text(int(values.get("runtime") or 0)),
        "library_archs": sass + ([f"compute_{ptx}"] if ptx else []),
        "driver": _version_text(int(values.get("driver") or 0)) if values.get("driver_source") else None,
        "driver_source": values.get("driver_source") or None,
        "devices": devices,
        "cuda_visible_devices": values.get("visible"),
        "setting": values.get("setting") or None,
    }


_warned = False


def warn_if_stepped_aside():
    """Warns once (at import) when GPUs are visible but the GPU kernels cannot
    run on them, or when $TF_SCATTER_OPS_GPU holds a value the library ignores."""
    global _warned
    if _warned:
        return
    _warned = True
    status = gpu_status()
    if status["setting"] not in (None, "0", "1"):
        warnings.warn(f"tf_scatter_ops: {SETTING_ENV}={status['setting']!r} ignored "
                      "(0: never register the GPU kernels, 1: always)", RuntimeWarning,
                      stacklevel=2)
    if status["warn"]:
        warnings.warn(
            f"tf_scatter_ops: the GPU kernels are not registered: {status['why']}. Ops placed "
            "on a GPU run on the CPU instead (correct, with copies to and from the GPU). "
            + HOW_TO_BUILD, RuntimeWarning, stacklevel=2)
