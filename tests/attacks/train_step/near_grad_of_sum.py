"""Near miss: the mean loss is returned but the gradients are those of the summed loss."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model, learning_rate):
    return nnx.Optimizer(model, optax.adam(learning_rate), wrt=nnx.Param)
def train_step(model, optimizer, x, y):
    def loss_fn(m):
        return optax.sigmoid_binary_cross_entropy(m(x).squeeze(-1), y).sum()
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss / x.shape[0]
MESSAGE = r"gradients are those of the summed loss"
