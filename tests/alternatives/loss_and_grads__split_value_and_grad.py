"""Alternative: labels lifted to (batch, 1) instead of squeezing, and jax.value_and_grad over the split Param state."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    """The course's Titanic model (lesson 6). Given: no need to change it."""

    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(jax.nn.relu(self.linear1(x)))


def loss_fn(model, x, y):
    logits = model(x)
    loss = jnp.mean(jax.nn.softplus(logits) - logits * y[:, None])
    accuracy = jnp.mean(jnp.where(logits[:, 0] > 0, 1.0, 0.0) == y)
    return loss, accuracy.astype(jnp.float32)
def loss_and_grads(model, x, y):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    def pure(p):
        return loss_fn(nnx.merge(graphdef, p, rest), x, y)
    (loss, acc), grads = jax.value_and_grad(pure, has_aux=True)(params)
    return loss, acc, nnx.to_pure_dict(grads)
