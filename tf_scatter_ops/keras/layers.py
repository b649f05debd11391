"""tso.keras.Embedding: keras.layers.Embedding on the plugin's row read."""

import keras
import tensorflow as tf

from tf_scatter_ops import ops


@keras.saving.register_keras_serializable(package="tf_scatter_ops")
class Embedding(keras.layers.Embedding):
    """keras.layers.Embedding (the same arguments, config, `mask_zero`,
    LoRA and quantization) whose lookup is tso.gather of the table's
    variable: the rows are read from the variable's buffer, where Keras's
    `ops.take` first reads the whole table (a copy of it once the table has
    had a sparse update), and the gradient is an `IndexedSlices` of the
    looked-up rows. Negative ids count from the end, as Keras's `take`
    does; ids past the end raise InvalidArgumentError naming the first."""

    def call(self, inputs):
        if getattr(self, "lora_enabled", False) or getattr(self, "quantization_mode", None):
            return super().call(inputs)  # another table: Keras's own lookup
        if inputs.dtype not in ("int32", "int64"):
            inputs = tf.cast(inputs, "int32")
        ids = tf.where(inputs < 0, inputs + tf.cast(self.input_dim, inputs.dtype), inputs)
        outputs = ops.gather(self.embeddings, ids)
        return tf.cast(outputs, self.compute_dtype)
