"""Three `torch.nn.functional` operations written with `jax.numpy`."""

import jax
import jax.numpy as jnp


def relu(x: jax.Array) -> jax.Array:
    return jnp.maximum(x, 0)


def softmax(x: jax.Array, axis: int = -1) -> jax.Array:
    # Subtracting the maximum cancels out in the ratio and keeps exp() from overflowing.
    shifted = x - jnp.max(x, axis=axis, keepdims=True)
    e = jnp.exp(shifted)
    return e / jnp.sum(e, axis=axis, keepdims=True)


def binary_cross_entropy_with_logits(logits: jax.Array, targets: jax.Array) -> jax.Array:
    # max(z, 0) - z*y + log(1 + exp(-|z|)) never evaluates sigmoid(z), which
    # rounds to exactly 0 or 1 for large |z| and would make log() infinite.
    per_element = jnp.maximum(logits, 0) - logits * targets + jnp.log1p(jnp.exp(-jnp.abs(logits)))
    return jnp.mean(per_element)
