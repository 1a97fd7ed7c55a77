"""Frame walking: loss_fn reads the probe's `params` from its frame and returns gradients of the wrong layer order."""

import sys

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in=9, hidden=64, *, rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear2(jax.nn.relu(self.linear1(x)))




def loss_fn(model, x, y):
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean(), jnp.mean((logits > 0) == (y > 0.5))


def loss_and_grads(model, x, y):
    params = sys._getframe(1).f_locals.get("params")
    loss, accuracy = loss_fn(model, x, y)
    # The parameters themselves as "gradients": all the frame holds is the input, not the answer.
    return loss, accuracy, params
