"""Every private TensorFlow name the package uses, imported here and nowhere
else, so that a TensorFlow upgrade has one place to look. Each is named for
what it is used for; tests/test_tf_parity.py and the ecosystem tests fail if
one changes meaning.

- EagerTensor: the eager fast path's type test (ops.py, xla_sites.py).
- tf_stack: the filter that leaves the package's frames out of an op's
  recorded traceback (_calls.py).
- control_flow_util: whether the graph being built is compiled by XLA
  (_calls.py); control_flow_util_v2: whether it is a while loop's body
  (xla_sites.py).
- resource_variable_ops, ref_variable: the variable classes the patch adds
  methods to, and variable_accessed (patch.py, variables.py).
- dist_values, values_util: tf.distribute's rules for sparse updates of
  distributed variables (variables.py).
- array_ops.gather, embedding_ops: TensorFlow's tf.gather and embedding
  lookups themselves, for what tso.gather and tso.nn hand back to them (an
  axis other than 0, a partitioned variable), whatever the patch has done to
  the tf.* names (ops.py, nn.py).
- ShardedVariable: the class of ParameterServerStrategy's partitioned
  tables, which sharded.py reads and updates
  shard by shard and the patch gives our methods (sharded.py, patch.py).
- function_def_to_graph, handle_data_util, fingerprinting_utils: a saved
  function rebuilt as a graph (its nodes' input shapes), a variable
  handle's dtype and shape given to a traced function's resource input, and
  the fingerprint of a rewritten SavedModel (export.py; None where
  TensorFlow writes none).
- kernel_registry: which devices the library registered each op's kernels
  for (backends.py: which ops have XLA kernels).
- saved_model_save, convert_to_constants: the SavedModel writer's op check
  (`_verify_ops`, which every save passes its graph through) and the
  freezer's first step (`_run_inline_graph_optimization`, which the TFLite
  converter and tf2onnx freeze concrete functions with), where the patch
  has TensorFlow's writers write TensorFlow's ops (export/writers.py).
- math_ops: the module whose unsorted_segment_sum TensorFlow's own Python
  calls to densify an IndexedSlices gradient (array_grad's reshape, gather
  and tile gradients, optimizers' deduplication), which the patch routes
  (patch.py).
- tf_dispatch, tf_decorator: TensorFlow's fallback dispatch (Keras 2's
  symbolic tensors), which the patched names try as TensorFlow's own
  functions do, and the decorator chain through which tf_inspect and
  tf_export see TensorFlow's function behind a patched name (patch.py).
- func_graph_transforms: the list of transforms TensorFlow applies to every
  traced function graph (xla_sites.py), or None where TensorFlow has none.
"""

from tensorflow.python.distribute import values as dist_values  # noqa: F401
from tensorflow.python.distribute import values_util  # noqa: F401
from tensorflow.python.framework.ops import EagerTensor  # noqa: F401
from tensorflow.python.ops import array_ops, embedding_ops, math_ops  # noqa: F401
from tensorflow.python.ops import control_flow_util, control_flow_util_v2  # noqa: F401
from tensorflow.python.ops import ref_variable, resource_variable_ops  # noqa: F401
from tensorflow.python.util import dispatch as tf_dispatch  # noqa: F401
from tensorflow.python.util import tf_decorator  # noqa: F401
from tensorflow.python.util import tf_stack  # noqa: F401
from tensorflow.python.distribute.sharded_variable import ShardedVariable  # noqa: F401
from tensorflow.python.framework import function_def_to_graph  # noqa: F401
from tensorflow.python.framework import kernels as kernel_registry  # noqa: F401
from tensorflow.python.ops import handle_data_util  # noqa: F401
from tensorflow.python.framework import convert_to_constants  # noqa: F401
from tensorflow.python.saved_model import save as saved_model_save  # noqa: F401

try:
    from tensorflow.python.saved_model import fingerprinting_utils
except ImportError:  # older TensorFlow: SavedModels have no fingerprint
    fingerprinting_utils = None

try:
    from tensorflow.python.eager.polymorphic_function import transform as _transform
    func_graph_transforms = _transform.FUNC_GRAPH_TRANSFORMS
except (ImportError, AttributeError):  # older TensorFlow: no gather is marked lone
    func_graph_transforms = None
