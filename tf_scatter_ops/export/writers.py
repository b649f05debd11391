"""While patched, what TensorFlow writes out holds TensorFlow's ops.

A function traced under patch_tensorflow() holds the plugin's ops. A user of
the patch writes TensorFlow code and hands it to TensorFlow's writers, which
must not need the plugin to read what they wrote:

- every SavedModel save (`tf.saved_model.save`, Keras's `model.export()` and
  tf-keras's `model.save(..., save_format="tf")`, and the saves the TFLite
  converter makes of a Keras model or of concrete functions) passes its
  graph through `_verify_ops`, the check of the ops' namespaces against
  `SaveOptions.namespace_whitelist`. There the graph is rewritten as
  `python -m tf_scatter_ops.export` rewrites a file, before TensorFlow checks
  it: the SavedModel holds TensorFlow's ops, and a whitelist that does not
  name our namespace passes. A whitelist that names it
  (`SaveOptions(namespace_whitelist=["TfScatter"])`) keeps our ops, for
  processes that load the plugin.
- freezing (`convert_variables_to_constants_v2` and its `_as_graph` twin:
  the TFLite converter's route for a concrete function it cannot save, and
  tf2onnx's for every function) starts from the function's GraphDef; that
  GraphDef is rewritten first, so the variables the replacements read are
  frozen as TensorFlow freezes its own reads.

install() and uninstall() are called by patch_tensorflow() and unpatch().
"""

import tensorflow as tf

from tf_scatter_ops._base.tf_private import convert_to_constants, saved_model_save
from tf_scatter_ops.export import rewrite

NAMESPACE = rewrite.PREFIX[:-1]  # "TfScatter"

# TensorFlow's functions, taken when the package is imported
_VERIFY_OPS = saved_model_save._verify_ops
_INLINE = convert_to_constants._run_inline_graph_optimization


def _keeps_ours(namespace_whitelist):
    return namespace_whitelist is not None and NAMESPACE in namespace_whitelist


def _verify_ops(graph_def, namespace_whitelist, *args, **kwargs):
    if not _keeps_ours(namespace_whitelist) and rewrite.graph_def_op_types(graph_def):
        rewrite.rewrite_graph_def(graph_def)  # in place: the graph the save writes
    return _VERIFY_OPS(graph_def, namespace_whitelist, *args, **kwargs)


def _run_inline_graph_optimization(func, *args, **kwargs):
    graph_def = func.graph.as_graph_def()
    if not rewrite.graph_def_op_types(graph_def):
        return _INLINE(func, *args, **kwargs)
    rewrite.rewrite_graph_def(graph_def)
    return _INLINE(_WithGraphDef(func, graph_def), *args, **kwargs)


class _WithGraphDef:
    """`func` whose graph is `graph_def` imported into a graph of its own
    (the freezer's first step reads the graph's GraphDef and collections;
    everything else it reads is the function's own)."""

    def __init__(self, func, graph_def):
        self._func = func
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")

    def __getattr__(self, name):
        return getattr(self._func, name)


# (module, name, TensorFlow's function, ours)
_HOOKS = ((saved_model_save, "_verify_ops", _VERIFY_OPS, _verify_ops),
          (convert_to_constants, "_run_inline_graph_optimization", _INLINE,
           _run_inline_graph_optimization))


def install():
    for module, name, _, ours in _HOOKS:
        setattr(module, name, ours)


def uninstall():
    for module, name, tensorflows, _ in _HOOKS:
        setattr(module, name, tensorflows)
