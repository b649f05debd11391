"""tf-scatter-ops: TensorFlow's scatter_nd family and gather_nd as a custom-op
plugin: deterministic, one out-of-bound policy everywhere, correct gradients.

Importing this package loads the compiled library (so that SavedModels and
Keras models that use the `TfScatter>` ops load after `import tf_scatter_ops`),
checks that it was built for the running TensorFlow (else
TensorFlowVersionMismatchError), registers the gradients and the Keras
pieces (`tso.keras`). `scatter_nd_update/add/sub/min/max` update variables in place.
`patch_tensorflow()` routes `tf.scatter_nd`, `tf.tensor_scatter_nd_*`,
`tf.gather_nd`, `tf.gather`, `tf.nn.embedding_lookup(_sparse)`,
`tf.compat.v1.scatter_nd_update/add/sub`, the variables' `scatter_nd_*`,
`scatter_*` and `sparse_read` methods and the segment family (`tf.math.unsorted_segment_*`,
`tf.math.segment_*`, `tf.sparse.segment_*`, under `tf.compat.v1` too) to the
plugin. `segment_softmax`, `_log_softmax`, `_logsumexp`, `_var` and `_std`
are functions of each segment's rows that TensorFlow does not have; nor
has it `tensor_scatter_nd_mul`, `_div` and `_mean`, `include_self=False`
(PyTorch's scatter_reduce's, for add, mul, min, max and mean), the
`segment_*_csr` reductions of CSR rows (offsets, or a RaggedTensor's rows)
or the positions of the rows that hold a max or min
(`unsorted_segment_max_with_argmax`, `tensor_scatter_nd_argmin`, ...), or
the fused message passing of graph networks (`gather_reduce`: each node's
in-edges' source rows reduced without the edge tensor; `edge_combine`).
`gpu_status()` says whether the GPU kernels run here and why.
"""

import importlib.util as _importlib_util

from tf_scatter_ops import export
from tf_scatter_ops import gpu as _gpu
from tf_scatter_ops import gradients as _gradients  # noqa: F401  (registers)
from tf_scatter_ops._base.library import (
    TensorFlowVersionMismatchError,
    active_isa,
    built_with_gpu,
    built_with_xla,
    cpu_isa,
    load as _load,
)
from tf_scatter_ops._dispatch.context import stock_ops
from tf_scatter_ops.gpu import gpu_status
from tf_scatter_ops import nn
from tf_scatter_ops.ops import (
    gather,
    gather_nd,
    scatter_nd,
    tensor_scatter_add,
    tensor_scatter_nd_add,
    tensor_scatter_nd_div,
    tensor_scatter_nd_max,
    tensor_scatter_nd_mean,
    tensor_scatter_nd_min,
    tensor_scatter_nd_mul,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
    tensor_scatter_sub,
    tensor_scatter_update,
    xla_uses_our_kernels,
)
from tf_scatter_ops.argminmax import (
    tensor_scatter_nd_argmax,
    tensor_scatter_nd_argmin,
    tensor_scatter_nd_max_with_argmax,
    tensor_scatter_nd_min_with_argmin,
    unsorted_segment_argmax,
    unsorted_segment_argmin,
    unsorted_segment_max_with_argmax,
    unsorted_segment_min_with_argmin,
)
from tf_scatter_ops.csr import (
    segment_max_csr,
    segment_mean_csr,
    segment_min_csr,
    segment_prod_csr,
    segment_sum_csr,
)
from tf_scatter_ops.groupwise import (
    segment_log_softmax,
    segment_logsumexp,
    segment_softmax,
    segment_std,
    segment_var,
)
from tf_scatter_ops.message import edge_combine, gather_reduce
from tf_scatter_ops.patch import is_patched, patch_tensorflow, patched, unpatch
from tf_scatter_ops.segments import (
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
    unsorted_segment_sum,
)
from tf_scatter_ops.variables import (
    scatter_nd_add,
    scatter_nd_max,
    scatter_nd_min,
    scatter_nd_sub,
    scatter_nd_update,
)

_load()  # registers the TfScatter> ops at import, not on first use
_gpu.warn_if_stepped_aside()

# The modules that define the functions are not names of the API (their
# functions above are); `from tf_scatter_ops import ops` still imports one.
del argminmax, csr, gpu, gradients, groupwise, message, ops, patch, segments, variables  # noqa: F821

if _importlib_util.find_spec("keras") is not None:  # Keras is optional
    # the Keras layers and optimizers, registered for keras.models.load_model
    from tf_scatter_ops import keras
else:
    keras = None

__all__ = [
    "TensorFlowVersionMismatchError",
    "active_isa",
    "built_with_gpu",
    "built_with_xla",
    "cpu_isa",
    "edge_combine",
    "export",
    "gather",
    "gather_nd",
    "gather_reduce",
    "gpu_status",
    "is_patched",
    "keras",
    "nn",
    "patch_tensorflow",
    "patched",
    "scatter_nd",
    "scatter_nd_add",
    "scatter_nd_max",
    "scatter_nd_min",
    "scatter_nd_sub",
    "scatter_nd_update",
    "segment_log_softmax",
    "segment_logsumexp",
    "segment_max",
    "segment_max_csr",
    "segment_mean",
    "segment_mean_csr",
    "segment_min",
    "segment_min_csr",
    "segment_prod",
    "segment_prod_csr",
    "segment_softmax",
    "segment_std",
    "segment_sum",
    "segment_sum_csr",
    "segment_var",
    "sparse_segment_mean",
    "sparse_segment_sqrt_n",
    "sparse_segment_sum",
    "stock_ops",
    "tensor_scatter_add",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_argmax",
    "tensor_scatter_nd_argmin",
    "tensor_scatter_nd_div",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_max_with_argmax",
    "tensor_scatter_nd_mean",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_min_with_argmin",
    "tensor_scatter_nd_mul",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "tensor_scatter_sub",
    "tensor_scatter_update",
    "unpatch",
    "unsorted_segment_argmax",
    "unsorted_segment_argmin",
    "unsorted_segment_max",
    "unsorted_segment_max_with_argmax",
    "unsorted_segment_mean",
    "unsorted_segment_min",
    "unsorted_segment_min_with_argmin",
    "unsorted_segment_prod",
    "unsorted_segment_sqrt_n",
    "unsorted_segment_sum",
    "xla_uses_our_kernels",
]
