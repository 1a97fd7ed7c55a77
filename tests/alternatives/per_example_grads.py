"""Another correct per_example_grads: nnx.vmap over nnx.value_and_grad, model shared (in_axes None)."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def example_loss(model, x, y):
    return optax.sigmoid_binary_cross_entropy(model(x[None, :])[0, 0], y)


def per_example_grads(model, x, y):
    per_example = nnx.vmap(nnx.value_and_grad(example_loss), in_axes=(None, 0, 0))
    losses, grads = per_example(model, jnp.asarray(x), jnp.asarray(y))
    return losses, grads
