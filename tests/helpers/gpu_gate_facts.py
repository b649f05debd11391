"""The GPU gate's decision for facts the test gives (not this machine's):
the library's own decision function (tf_scatter_ops_gpu_decide) on the
facts written as the library reads them, parsed as gpu_status() parses its
answer."""

from tf_scatter_ops import gpu
from tf_scatter_ops._base import library


def decide(facts):
    """The decision of the library's gate for the given facts (a dict in the
    form of gpu_status(): built_with_gpu, runtime, library_archs, driver,
    driver_source, devices with capability (and name, uuid),
    cuda_visible_devices, cuda_device_order, setting), in gpu_status()'s form.
    (The gate of this process decided from the real facts: gpu_status().)"""
    library.load()
    text = _facts_text(facts)
    return gpu._status(text + library.library_function("tf_scatter_ops_gpu_decide", text))


def _version_number(text):  # "12.2" -> 12020
    if not text:
        return 0
    major, _, minor = str(text).partition(".")
    return int(major) * 1000 + int(minor or 0) * 10


def _one_line(value):
    return str(value).replace("\n", " ")


def _facts_text(f):
    archs = list(f.get("library_archs", ()))
    sass = [a[3:] for a in archs if a.startswith("sm_")]
    ptx = [a[8:] for a in archs if a.startswith("compute_")]
    lines = [
        f"built_with_gpu={int(bool(f.get('built_with_gpu', True)))}",
        f"runtime={_version_number(f.get('runtime'))}",
        f"sass={','.join(sass)}",
        f"ptx={ptx[-1] if ptx else 0}",
        f"driver_source={f.get('driver_source') or ''}",
        f"driver={_version_number(f.get('driver'))}",
        f"devices_are_visible={int(bool(f.get('devices_are_visible', False)))}",
        f"order={_one_line(f.get('cuda_device_order') or '')}",
        f"setting={_one_line(f.get('setting') or '')}",
        f"probe_error={_one_line(f.get('probe_error') or '')}",
    ]
    if f.get("cuda_visible_devices") is not None:
        lines.append(f"visible={_one_line(f['cuda_visible_devices'])}")
    for i, d in enumerate(f.get("devices", ())):
        lines.append(f"device={d.get('index', i)}|{d['capability']}|"
                     f"{_one_line(d.get('uuid', ''))}|{_one_line(d.get('name', ''))}")
    return "\n".join(lines) + "\n"
