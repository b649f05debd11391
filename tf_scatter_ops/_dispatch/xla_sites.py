"""What the plugin's XLA kernels (cc/kernels/xla/xla_kernels.cc) learn about a
call site from the traced graph, as attrs on its op that they read when XLA
compiles the function:

* ``_tfso_fresh_output`` on a tensor_scatter whose input is an argument or a
  capture of the compiled function outside any loop: XLA must keep that
  input, so our kernel, if it runs, writes an output of its own in the same
  pass as the copy, instead of asking XLA to copy first.
* ``_tfso_lone_gather`` on a gather_nd that nothing XLA could fuse it into
  consumes (it is returned, or feeds a matmul, a reduction or another of our
  ops): there XLA's gather runs on its own, and our kernel is faster for
  large row gathers. The consumers are only known once the function is
  traced, so this is set by a transform TensorFlow applies to every traced
  function graph before it becomes a function.

Both use TensorFlow's private APIs (control_flow_util_v2, the function-graph
transform registry), imported from _base/tf_private.py.
"""

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from tf_scatter_ops._base.tf_private import EagerTensor as _EagerTensor
from tf_scatter_ops._base.tf_private import control_flow_util_v2, func_graph_transforms

FRESH_OUTPUT = "_tfso_fresh_output"
LONE_GATHER = "_tfso_lone_gather"

# Consumers XLA does not fuse a gather into (or that are ours): for these our
# kernel's gather costs no fusion. Ops that only pass the value on are looked
# through.
_NOT_FUSING = frozenset({"MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3",
                         "Sum", "Mean", "Max", "Min", "Prod", "ConcatV2"})
_PASS_ON = frozenset({"Identity", "Reshape", "ExpandDims", "Squeeze", "StopGradient"})


def _true():
    return attr_value_pb2.AttrValue(b=True)


def in_loop():
    """Whether the graph being built is, or is inside, a while loop's body."""
    graph = tf.compat.v1.get_default_graph()
    while graph is not None:
        if isinstance(graph, control_flow_util_v2.WhileBodyFuncGraph):
            return True
        graph = getattr(graph, "outer_graph", None)
    return False


def mark_scatter(out, tensor):
    """Marks the tensor_scatter op of `out` when `tensor`, its input, is an
    input of the function being compiled that outlives the op (an argument or
    a capture, outside any loop: a loop variable's buffer is passed on and
    can be updated in place)."""
    live = isinstance(tensor, _EagerTensor) or tensor.op.type == "Placeholder"
    if live and not in_loop():
        out.op._set_attr(FRESH_OUTPUT, _true())


def _lone(tensor, outputs):
    if tensor.ref() in outputs:
        return True
    for op in tensor.consumers():
        if op.type in _PASS_ON:
            if not all(_lone(t, outputs) for t in op.outputs):
                return False
        elif op.type not in _NOT_FUSING and not op.type.startswith("TfScatter>"):
            return False
    return True


def mark_lone_gathers(func_graph):
    """The transform: marks each of our gathers in `func_graph` whose result
    no consumer could fuse."""
    gathers = [op for op in func_graph.get_operations() if op.type == "TfScatter>GatherNd"]
    if not gathers:
        return
    outputs = {t.ref() for t in func_graph.outputs}
    for op in gathers:
        if _lone(op.outputs[0], outputs):
            op._set_attr(LONE_GATHER, _true())


def register():
    """Adds mark_lone_gathers to TensorFlow's function-graph transforms (once)."""
    if func_graph_transforms is None:  # then no gather is marked: all run XLA's
        return
    if mark_lone_gathers not in func_graph_transforms:
        func_graph_transforms.append(mark_lone_gathers)
