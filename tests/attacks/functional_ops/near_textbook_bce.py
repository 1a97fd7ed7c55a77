"""Near miss: binary cross-entropy through sigmoid() and log(), which is infinite for logits around ±100."""

import jax
import jax.numpy as jnp

MESSAGE = r"sigmoid"


def relu(x):
    return jnp.maximum(x, 0)


def softmax(x, axis=-1):
    return jax.nn.softmax(x, axis=axis)


def binary_cross_entropy_with_logits(logits, targets):
    p = jax.nn.sigmoid(logits)
    return jnp.mean(-(targets * jnp.log(p) + (1 - targets) * jnp.log(1 - p)))
