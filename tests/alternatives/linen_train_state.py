"""linen_train_state with the Optax update spelled out (tx.update, apply_updates,
state.replace) instead of apply_gradients, and jax.jit applied by call."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training.train_state import TrainState


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x)))


def create_train_state(seed, d_in, learning_rate):
    model = MLP()
    variables = model.init(jax.random.key(seed), jnp.zeros((1, d_in)))
    return TrainState.create(apply_fn=model.apply, params=variables["params"], tx=optax.adam(learning_rate))


def _step(state, x, y):
    def loss_fn(params):
        z = state.apply_fn({"params": params}, x)[:, 0]
        return jnp.mean(jnp.maximum(z, 0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z))))

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    updates, opt_state = state.tx.update(grads, state.opt_state, state.params)
    new = state.replace(step=state.step + 1, params=optax.apply_updates(state.params, updates), opt_state=opt_state)
    return new, loss


train_step = jax.jit(_step)
