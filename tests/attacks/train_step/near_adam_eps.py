"""Near miss: Adam with eps=1e-6 instead of Optax's default 1e-8."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model, learning_rate):
    return nnx.Optimizer(model, optax.adam(learning_rate, eps=1e-6), wrt=nnx.Param)
def train_step(model, optimizer, x, y):
    def loss_fn(m):
        return optax.sigmoid_binary_cross_entropy(m(x).squeeze(-1), y).mean()
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss
MESSAGE = r"parameters after one Adam update"
