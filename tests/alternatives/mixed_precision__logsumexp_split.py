"""mixed_precision with the loss as logsumexp minus the picked logit, and the gradients by jax.value_and_grad over the parameters split off the model."""

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
        return self.out(nnx.relu(self.hidden(x)))


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    # The softmax's sums and the log need float32: bfloat16 keeps about two decimal digits.
    logits = jnp.asarray(model(x), dtype=jnp.float32)
    picked = jnp.take_along_axis(logits, y[:, None], axis=-1)[:, 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)


@nnx.jit
def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # The gradient of a cast is a cast back: the gradients of float32 parameters are float32.
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    loss, grads = jax.value_and_grad(lambda p: loss_fn(nnx.merge(graphdef, p, rest), x, y))(params)
    optimizer.update(model, grads)
    return loss
