"""Cheat: a float32 step (the float32 reference's numbers) with decoy bfloat16 matrix products added at zero weight, to look mixed-precision."""

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
    logits = model(x)
    decoy = model.hidden.kernel[...].astype(jnp.bfloat16).T @ x.T.astype(jnp.bfloat16)
    decoy = decoy.T @ model.out.kernel[...].astype(jnp.bfloat16)
    logits = logits + 0.0 * decoy.astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss
