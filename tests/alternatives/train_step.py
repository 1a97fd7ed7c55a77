"""train_step with Adam assembled from its Optax parts (scale_by_adam, then a
negative learning-rate scale), a hand-written stable cross-entropy, and
gradients from nnx.grad with the loss computed alongside as an aux output."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model, learning_rate):
    tx = optax.chain(optax.scale_by_adam(), optax.scale(-learning_rate))
    return nnx.Optimizer(model, tx, wrt=nnx.Param)


def _loss(model, x, y):
    z = model(x)[:, 0]
    # log(1 + e^z) - z*y, written to stay finite for large |z|
    loss = jnp.mean(jnp.maximum(z, 0.0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))
    return loss, loss


def train_step(model, optimizer, x, y):
    grads, loss = nnx.grad(_loss, has_aux=True)(model, x, y)
    optimizer.update(model, grads)
    return loss
