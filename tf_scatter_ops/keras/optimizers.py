"""Keras 3 optimizers that apply a sparse gradient to the touched rows only.

For an `IndexedSlices` gradient (an embedding lookup's) each of these sums
the gradient rows of duplicate ids (the plugin's unsorted_segment_sum: in
index order, the same bits on any thread count), reads the touched rows of
the variable and of every slot, and writes them back in place with the
plugin's scatters: a step costs the rows it touches, whatever the table's
size. For a dense gradient they are Keras's own optimizer.

- `LazyAdam`: Keras's Adam formulas on the touched rows; the moments of a row
  decay only in the steps that touch it (as TensorFlow Addons' LazyAdam),
  so over several steps the result differs from Adam's, which decays every
  row every step.
- `Adagrad`: the touched rows as TensorFlow's SparseApplyAdagradV2 updates
  them: accumulator += g^2, variable -= lr * g / (sqrt(accumulator) + epsilon).
- `SGD`: with momentum, the momentum of the touched rows only (Keras's
  formulas, nesterov too); without, variable -= lr * (summed g).
"""

import keras
import tensorflow as tf

from tf_scatter_ops import ops, segments, variables


def _rows(gradient, dtype):
    """(distinct row ids as [n, 1] indices, each one's summed gradient rows)."""
    ids, position = tf.unique(gradient.indices)
    values = tf.cast(gradient.values, dtype)
    summed = segments.unsorted_segment_sum(values, position, tf.size(ids))
    return tf.expand_dims(ids, -1), summed


def _read(slot, rows):
    return ops.gather_nd(slot, rows)


def _write(slot, rows, values):
    variables.scatter_nd_update(slot, rows, values)


class _TouchedRows:
    """update_step: the Keras optimizer's own for a dense gradient; for an
    IndexedSlices, the class's _sparse_step(variable, rows, g, lr) on the
    distinct rows and their summed gradient (lr in the variable's dtype)."""

    def update_step(self, gradient, variable, learning_rate):
        if not isinstance(gradient, tf.IndexedSlices):
            return super().update_step(gradient, variable, learning_rate)
        rows, g = _rows(gradient, variable.dtype)
        self._sparse_step(variable, rows, g, tf.cast(learning_rate, variable.dtype))


@keras.saving.register_keras_serializable(package="tf_scatter_ops")
class LazyAdam(_TouchedRows, keras.optimizers.Adam):
    """Adam whose sparse step updates only the touched rows and their moments."""

    def _sparse_step(self, variable, rows, g, lr):
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        beta_1_power = tf.pow(tf.cast(self.beta_1, dtype), step)
        beta_2_power = tf.pow(tf.cast(self.beta_2, dtype), step)
        alpha = lr * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power)
        index = self._get_variable_index(variable)
        m_slot, v_slot = self._momentums[index], self._velocities[index]
        m = _read(m_slot, rows)
        m = m + (g - m) * (1 - self.beta_1)
        v = _read(v_slot, rows)
        v = v + (tf.square(g) - v) * (1 - self.beta_2)
        _write(m_slot, rows, m)
        _write(v_slot, rows, v)
        if self.amsgrad:
            v_hat_slot = self._velocity_hats[index]
            v = tf.maximum(_read(v_hat_slot, rows), v)
            _write(v_hat_slot, rows, v)
        variables.scatter_nd_sub(variable, rows, (m * alpha) / (tf.sqrt(v) + self.epsilon))


@keras.saving.register_keras_serializable(package="tf_scatter_ops")
class Adagrad(_TouchedRows, keras.optimizers.Adagrad):
    """Adagrad whose sparse step is TensorFlow's SparseApplyAdagradV2 on the touched rows."""

    def _sparse_step(self, variable, rows, g, lr):
        slot = self._accumulators[self._get_variable_index(variable)]
        accumulator = _read(slot, rows) + tf.square(g)
        _write(slot, rows, accumulator)
        variables.scatter_nd_sub(variable, rows, lr * g / (tf.sqrt(accumulator) + self.epsilon))


@keras.saving.register_keras_serializable(package="tf_scatter_ops")
class SGD(_TouchedRows, keras.optimizers.SGD):
    """SGD (momentum, nesterov) whose sparse step updates only the touched rows."""

    def _sparse_step(self, variable, rows, g, lr):
        if self.momentum == 0:
            variables.scatter_nd_sub(variable, rows, g * lr)
            return
        momentum = tf.cast(self.momentum, variable.dtype)
        slot = self.momentums[self._get_variable_index(variable)]
        m = _read(slot, rows) * momentum - g * lr
        _write(slot, rows, m)
        variables.scatter_nd_add(variable, rows, m * momentum - g * lr if self.nesterov else m)
