"""mixed_precision with the policy given to each layer through functools.partial, the loss returned with the float32 logits as aux, and the update through nnx.grad."""

import functools

import jax
import jax.numpy as jnp
import optax
from flax import nnx


Linear = functools.partial(nnx.Linear, dtype=jnp.bfloat16, param_dtype=jnp.float32)


class MLP(nnx.Module):
    def __init__(self, d_in, hidden, d_out, *, rngs):
        self.hidden = Linear(d_in, hidden, rngs=rngs)
        self.out = Linear(hidden, d_out, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


def loss_fn(model, x, y):
    logits = jnp.float32(model(x))
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, y[:, None], axis=-1)[:, 0]
    return jnp.mean(lse - picked)


@nnx.jit
def train_step(model, optimizer, x, y):
    def with_aux(model):
        loss = loss_fn(model, x, y)
        return loss, loss
    grads, loss = nnx.grad(with_aux, has_aux=True)(model)
    optimizer.update(model, grads)
    return loss
