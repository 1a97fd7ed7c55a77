"""mixed_precision with the casts in the model: x cast to bfloat16 on the way in, the logits cast to float32 on the way out, and the loss from jax.nn.log_softmax against one-hot labels."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx

# The policy: what each layer computes in, and what it stores.
COMPUTE = jnp.bfloat16
STORE = jnp.float32


class MLP(nnx.Module):
    def __init__(self, d_in: int, hidden: int, d_out: int, *, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(d_in, hidden, dtype=COMPUTE, param_dtype=STORE, rngs=rngs)
        self.out = nnx.Linear(hidden, d_out, dtype=COMPUTE, param_dtype=STORE, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.out(jax.nn.relu(self.hidden(x.astype(jnp.bfloat16)))).astype(jnp.float32)


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    # The softmax's sums and the log need float32: bfloat16 keeps about two decimal digits.
    logits = model(x)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.sum(jax.nn.one_hot(y, logits.shape[-1], dtype=jnp.float32) * logp, axis=-1))


@nnx.jit
def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # The gradient of a cast is a cast back: the gradients of float32 parameters are float32.
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss
