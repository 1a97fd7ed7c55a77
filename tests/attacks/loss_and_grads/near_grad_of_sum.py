"""Near miss: the gradient is taken of the summed loss while the mean is reported."""
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
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean(), jnp.mean((logits > 0) == (y > 0.5))
def loss_and_grads(model, x, y):
    def summed(m):
        logits = m(x).squeeze(-1)
        return optax.sigmoid_binary_cross_entropy(logits, y).sum()
    loss, acc = loss_fn(model, x, y)
    return loss, acc, nnx.grad(summed)(model)
MESSAGE = r"times too large, those of the loss summed"
