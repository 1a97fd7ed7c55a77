"""Near miss: the loss returned as a Python float (loss.item() habit) instead of a float32 array."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model, learning_rate):
    return nnx.Optimizer(model, optax.adam(learning_rate), wrt=nnx.Param)
def train_step(model, optimizer, x, y):
    def loss_fn(m):
        return optax.sigmoid_binary_cross_entropy(m(x).squeeze(-1), y).mean()
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss.item()
MESSAGE = r"returned loss.*expected dtype float32, got a Python float"
