"""Near miss: the loss comes back as a float64 NumPy value where a float32 array is asked."""

import jax
import jax.numpy as jnp
import numpy as np

MESSAGE = r"float32.*float64|float64.*float32"


def relu(x):
    return jnp.maximum(x, 0)


def softmax(x, axis=-1):
    return jax.nn.softmax(x, axis=axis)


def binary_cross_entropy_with_logits(logits, targets):
    per = jnp.maximum(logits, 0) - logits * targets + jnp.log1p(jnp.exp(-jnp.abs(logits)))
    return np.mean(np.asarray(per, dtype=np.float64))
