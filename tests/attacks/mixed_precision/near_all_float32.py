"""Near miss: no dtype policy at all, so the whole step, matrix products included, runs in float32."""

MESSAGE = r"not bfloat16"

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, d_out, *, rngs):
        self.hidden = nnx.Linear(d_in, hidden, rngs=rngs)
        self.out = nnx.Linear(hidden, d_out, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.hidden(x)))


def loss_fn(model, x, y):
    logits = model(x).astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss
