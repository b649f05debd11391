"""tf-scatter-ops: TensorFlow's scatter_nd family and gather_nd as a custom-op
plugin: deterministic, one out-of-bound policy everywhere, correct gradients.

The compiled library loads on first use; importing this package also
registers the gradients.
"""

from tf_scatter_ops import gradients as _gradients  # noqa: F401  (registers)
from tf_scatter_ops._loader import TensorFlowVersionMismatchError, load
from tf_scatter_ops.ops import (
    gather_nd,
    scatter_nd,
    tensor_scatter_add,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
    tensor_scatter_sub,
    tensor_scatter_update,
)

__all__ = [
    "TensorFlowVersionMismatchError",
    "gather_nd",
    "load",
    "scatter_nd",
    "tensor_scatter_add",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "tensor_scatter_sub",
    "tensor_scatter_update",
]
