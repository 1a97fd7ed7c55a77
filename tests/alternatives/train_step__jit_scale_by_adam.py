"""Alternative: nnx.jit-compiled step, labels lifted to (batch, 1), softplus form of the loss, Adam built from scale_by_adam."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model, learning_rate):
    tx = optax.chain(optax.scale_by_adam(b1=0.9, b2=0.999, eps=1e-8), optax.scale(-learning_rate))
    return nnx.Optimizer(model, tx, wrt=nnx.Param)
@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(m):
        z = m(x)
        return jnp.mean(jax.nn.softplus(z) - z * y[:, None])
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss
