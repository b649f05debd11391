"""SavedModels without the plugin's ops, for stock TensorFlow, TensorFlow
Serving, TFLite and ONNX converters:

    tso.export.export("model", "model_plain")   # {op type: how many replaced}
    tso.export.check("model", "model_plain")    # runs both, compares (ExportCheckError)

or from a shell: `python -m tf_scatter_ops.export SRC DST [--check] [--inputs S.npz]`.
"""

from tf_scatter_ops.export.compare import ExportCheckError, check
from tf_scatter_ops.export.rewrite import export

__all__ = ["ExportCheckError", "check", "export"]
