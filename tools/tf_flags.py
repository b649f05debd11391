"""Prints make variables with TensorFlow's compile and link flags."""
import tensorflow as tf

print("TF_VERSION :=", tf.__version__)
print("TF_CFLAGS :=", " ".join(tf.sysconfig.get_compile_flags()))
print("TF_LFLAGS :=", " ".join(tf.sysconfig.get_link_flags()))
