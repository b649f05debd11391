"""Keras 3 pieces whose training step costs the rows it touches.

    model = keras.Sequential([keras.Input((8,), dtype="int32"),
                              tso.keras.Embedding(4_000_000, 64), ...])
    model.compile(optimizer=tso.keras.optimizers.LazyAdam(1e-3), loss=...)

`Embedding` is keras.layers.Embedding (same arguments and config) whose
lookup reads the rows from the table's variable (no read of the whole
table); the optimizers apply an `IndexedSlices` gradient to the touched
rows and their slots only, in place, through the plugin's ops, and equal
Keras's own for dense gradients. Both are registered for
`keras.models.load_model` under the package "tf_scatter_ops".
"""

from tf_scatter_ops.keras import optimizers
from tf_scatter_ops.keras.layers import Embedding

__all__ = ["Embedding", "optimizers"]
