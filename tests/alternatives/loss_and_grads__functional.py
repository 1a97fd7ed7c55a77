"""Another correct loss_and_grads: the loss written with jax.nn.log_sigmoid,
and the gradients taken with plain jax.value_and_grad over the parameters
split out of the model (nnx.split / nnx.merge), returned as a pure dict."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    """The course's Titanic model (lesson 6). Given: no need to change it."""

    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(jax.nn.relu(self.linear1(x)))


def loss_fn(model, x, y):
    z = model(x)[:, 0]
    # -[y log s(z) + (1 - y) log s(-z)], with log s computed stably.
    loss = -jnp.mean(y * jax.nn.log_sigmoid(z) + (1.0 - y) * jax.nn.log_sigmoid(-z))
    accuracy = jnp.mean(jnp.where(z > 0, 1.0, 0.0) == y)
    return loss, accuracy


def loss_and_grads(model, x, y):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)

    def pure_loss(p):
        return loss_fn(nnx.merge(graphdef, p, rest), x, y)

    (loss, accuracy), grads = jax.value_and_grad(pure_loss, has_aux=True)(params)
    return loss, accuracy, nnx.to_pure_dict(grads)
