"""`python -m tf_scatter_ops.export SRC DST [--check] [--inputs SAMPLE.npz]`:
writes the SavedModel SRC as DST with every TfScatter> op replaced by
TensorFlow's ops (export.rewrite), and with --check runs both on sample
inputs and compares their outputs (export.compare)."""

import argparse
import json

from tf_scatter_ops.export.compare import check
from tf_scatter_ops.export.rewrite import export


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tf_scatter_ops.export",
        description="Rewrite a SavedModel so that it holds no TfScatter> op (TensorFlow's "
                    "built-in ops instead, with the same results for valid input).")
    parser.add_argument("src", help="the SavedModel folder to read")
    parser.add_argument("dst", help="the new SavedModel folder to write")
    parser.add_argument("--check", action="store_true",
                        help="run every signature of both on sample inputs, the export in a "
                             "process without the plugin, and compare")
    parser.add_argument("--inputs", help="sample inputs for --check: an .npz keyed by input "
                                         "name (or SIGNATURE/NAME)")
    args = parser.parse_args(argv)
    try:
        replaced = export(args.src, args.dst)
    except ValueError as e:
        parser.exit(2, f"{e}\n")
    print(f"wrote {args.dst}: " + (json.dumps(replaced) if replaced else "no TfScatter> op to "
                                   "replace"))
    if args.check:
        try:
            for line in check(args.src, args.dst, args.inputs):
                print("  " + line)
        except ValueError as e:  # (ExportCheckError too)
            parser.exit(1, f"{e}\n")
        print("check: the export gives the original's outputs without the plugin")


if __name__ == "__main__":
    main()
