"""How a call runs. Every public function, after converting and checking
its inputs, calls run() (or, for variables, scatter_variable(),
scatter_ref(), read_rows()); so does the SavedModel rewriter. Each builds
the backend that route() (routing.py, the one decision) picks from where
the call is made (context.py) and which kernels the library has for the op:

- OURS: our TfScatter> op (its CPU, GPU or XLA kernel). Eagerly, in graphs,
  and under XLA where our XLA kernels apply (the tensor ops on the CPU; a
  scatter_nd only with a shape known when it is compiled).
- XLA: under XLA elsewhere, TensorFlow's XLA-compilable ops of the same
  meaning (forms.py, flavour "xla"), or, for the ops made of many steps, the
  same steps of those ops (composed.py). With a GPU present this warns once.
- STOCK: inside stock_ops(), TensorFlow's built-in ops in the forms that
  TFLite and ONNX take too (forms.py, flavour "stock").
"""

import tensorflow as tf

from tf_scatter_ops._base import table
from tf_scatter_ops._base.tf_private import EagerTensor
from tf_scatter_ops._dispatch import composed, context, forms, ours
from tf_scatter_ops._dispatch.routing import OURS, STOCK, route


def eager_ours(tensor, indices, updates):
    """True where the eager fast path may call our op at once: executing
    eagerly, outside stock_ops(), on eager tensors (a function being traced
    can capture eager tensors, and there the op needs library_op's node name
    and traceback, or XLA's form)."""
    return (type(tensor) is EagerTensor and type(indices) is EagerTensor
            and type(updates) is EagerTensor and tf.executing_eagerly()
            and not context.emitting_stock())


eager_op = ours.eager_op
hint_attrs = ours.hint_attrs


def run(op, policy="", hints=None, ddof=None, **inputs):
    """The table's `op` on `inputs` (its inputs by name: tensors in the
    canonical form, `policy` one the kernels implement; `hints` the
    promises' attrs, hint_attrs(); `ddof` the group-wise functions')."""
    if tf.executing_eagerly() and not context.emitting_stock():  # ours (what route() says)
        if ddof is not None:
            inputs["ddof"] = ddof
        return ours.eager_op(op)(bad_indices_policy=policy, **inputs, **(hints or {}))
    how = route(op, inputs)
    kind = table.BY_PY[op].kind
    if how == OURS:
        if ddof is not None:
            inputs["ddof"] = ddof
        return ours.call(op, policy, inputs, hints)
    if kind == "Groupwise":
        return composed.groupwise(op, inputs["data"], inputs["segment_ids"],
                                  inputs["num_segments"], ddof or 0, policy, how == STOCK)
    if kind == "ArgSegment":
        return composed.arg_segments(op, inputs["data"], inputs["segment_ids"],
                                     inputs["num_segments"], policy, how == STOCK)
    if kind == "ArgScatter":
        return composed.arg_scatter(op, inputs["tensor"], inputs["indices"], inputs["updates"],
                                    policy, how == STOCK)
    return forms.lowered(op, policy, inputs, how == STOCK)


def run_groupwise_grad(op, data, output, grad, segment_ids, num_segments, ddof, policy):
    """The fused gradient op of the group-wise `op` (TfScatter><Op>Grad)."""
    how = route(op)
    if how == OURS:
        return ours.library_op(table.BY_PY[op].op + "Grad")(
            data=data, y=output, grad=grad, segment_ids=segment_ids,
            num_segments=num_segments, ddof=ddof, bad_indices_policy=policy)
    return composed.groupwise_grad(op, data, grad, segment_ids, num_segments, ddof, policy,
                                   how == STOCK)


def scatter_variable(op, variable, indices, updates, use_locking, policy):
    """scatter_nd_* (`op`) into a resource variable in place; returns the
    update op (no value). Under XLA TensorFlow's resource ops, inside
    stock_ops() TensorFlow's resource op with the policy."""
    how = route(table.VARIABLE_SCATTERS[op].py)
    if how == STOCK:
        return forms.variable_scatter_stock(op, variable.handle, indices, updates, use_locking,
                                            policy)
    if context.in_xla_context():  # (our XLA kernels are the tensor ops')
        context.warn_once_if_xla_on_gpu()
        return forms.variable_scatter_xla(op, variable, indices, updates, use_locking)
    return ours.library_op("Resource" + table.VARIABLE_SCATTERS[op].variable)(
        variable.handle, indices, updates, use_locking=bool(use_locking),
        bad_indices_policy=policy)


def scatter_ref(op, ref, indices, updates, use_locking, policy):
    """scatter_nd_* (`op`) into a TensorFlow 1.x reference variable (our op
    always: TensorFlow 1.x graphs are neither compiled nor exported)."""
    return ours.library_op(table.VARIABLE_SCATTERS[op].variable)(
        ref, indices, updates, use_locking=bool(use_locking), bad_indices_policy=policy)


def read_rows(handle, dtype, indices, policy, value=None):
    """The rows of a resource variable (its `handle`) at `indices`, read from
    its buffer (TfScatter>ResourceGatherNd); under XLA, which compiles no
    ResourceGatherNd, a gather of its value (`value()`, read in place by
    XLA); inside stock_ops() a read and a GatherNd."""
    if context.emitting_stock():
        return forms.gather_rows(handle, dtype, indices, policy)
    if context.in_xla_context():
        return run("gather_nd", policy, params=value(), indices=indices)
    return ours.library_op("ResourceGatherNd")(handle, indices, dtype=dtype,
                                               bad_indices_policy=policy)
