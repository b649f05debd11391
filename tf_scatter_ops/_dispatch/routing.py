"""Which backend runs a call of an op here: the decision that backends.py
acts on (and composed.py, for the steps of the ops it writes)."""

import functools

import tensorflow as tf

from tf_scatter_ops._base import table
from tf_scatter_ops._base.tf_private import kernel_registry
from tf_scatter_ops._dispatch import context

OURS, XLA, STOCK = "ours", "xla", "stock"


@functools.lru_cache(maxsize=None)
def _has_xla_kernel(op):
    """Whether the library registers an XLA kernel for the table's `op`."""
    op_type = "TfScatter>" + table.BY_PY[op].op
    return any(k.device_type.startswith("XLA_CPU")
               for k in kernel_registry.get_registered_kernels_for_op(op_type).kernel)


def route(op, inputs=None):
    """OURS, XLA or STOCK for the table's `op` (a Python name) called here on
    `inputs` (what the op would take)."""
    if context.emitting_stock():
        return STOCK
    if not context.in_xla_context():
        return OURS
    if (context.xla_uses_our_kernels() and _has_xla_kernel(op)
            and (op != "scatter_nd" or inputs is None
                 or tf.get_static_value(inputs["shape"]) is not None)):
        return OURS  # (XLA needs scatter_nd's shape when it compiles)
    context.warn_once_if_xla_on_gpu()
    return XLA
