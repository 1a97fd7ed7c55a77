"""Near miss: softmax shifted by the maximum of the whole array, not along the axis."""
import jax.numpy as jnp
def relu(x): return jnp.maximum(x, 0)
def softmax(x, axis=-1):
    e = jnp.exp(x - jnp.max(x))
    return e / jnp.sum(e, axis=axis, keepdims=True)
def binary_cross_entropy_with_logits(z, y):
    return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))
MESSAGE = r"inf or nan.*along the axis"
