"""Checks built wheels: the ops library inside, libtensorflow_framework never,
and the metadata pins the TensorFlow version given.

    python wheel_check.py TF_VERSION WHEEL...
"""

import sys
import zipfile


def check(wheel, tf_version):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert "tf_scatter_ops/_tf_scatter_ops.so" in names, f"{wheel}: no ops library"
        assert not any("libtensorflow_framework" in n for n in names), f"{wheel}: vendors TF"
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]
    assert f"tensorflow=={tf_version}" in requires, f"{wheel}: requires {requires}"
    print(f"wheel ok: {wheel} (requires {', '.join(requires)})")


if __name__ == "__main__":
    for w in sys.argv[2:]:
        check(w, sys.argv[1])
