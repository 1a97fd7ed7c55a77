"""Near miss: accuracy from logits < 0 compared with y == 1, the comparison turned around."""

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


MESSAGE = r"what `logit < 0` scores"


def loss_fn(model, x, y):
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean(), jnp.mean((logits < 0) == (y == 1))

def loss_and_grads(model, x, y):
    (loss, accuracy), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model, x, y)
    return loss, accuracy, grads
