"""loss_and_grads written the functional way: a hand-written, numerically stable
cross-entropy, and jax.value_and_grad over the parameters split from the model."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear2(jax.nn.relu(self.linear1(x)))


def loss_fn(model, x, y):
    logits = model(x)[:, 0]
    # -[y log s(z) + (1-y) log(1-s(z))] with log(1-s(z)) = log s(-z)
    per_row = -(y * jax.nn.log_sigmoid(logits) + (1.0 - y) * jax.nn.log_sigmoid(-logits))
    accuracy = jnp.mean(jnp.where(logits > 0, 1.0, 0.0) == y)
    return jnp.mean(per_row), accuracy


def loss_and_grads(model, x, y):
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)

    def of_params(p):
        return loss_fn(nnx.merge(graphdef, p, rest), x, y)

    (loss, accuracy), grads = jax.value_and_grad(of_params, has_aux=True)(params)
    return loss, accuracy, grads
