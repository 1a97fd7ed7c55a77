"""Alternative: params kept as a FrozenDict (flax.core.freeze), as older Flax examples do."""

from __future__ import annotations

import flax
import flax.core
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training.train_state import TrainState


class MLP(nn.Module):
    """The article's model in Linen. Given: no need to change it."""

    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x)))


def create_train_state(seed: int, d_in: int, learning_rate: float) -> TrainState:
    model = MLP()
    params = model.init(jax.random.key(seed), jnp.ones((1, d_in), jnp.float32))["params"]
    params = flax.core.freeze(params)
    return TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(learning_rate))


@jax.jit
def train_step(state: TrainState, x, y):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, x).squeeze(-1)
        return optax.sigmoid_binary_cross_entropy(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss
