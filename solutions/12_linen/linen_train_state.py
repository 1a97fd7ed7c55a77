"""Exercise: a Linen TrainState and a jitted train step.

PyTorch keeps parameters and optimizer state inside objects and mutates them:
    optimizer.zero_grad(); loss = loss_fn(model(x).squeeze(-1), y)
    loss.backward(); optimizer.step()
Linen keeps them in an immutable `flax.training.train_state.TrainState`, and a
step returns a new state. The model is given (Linen, Dense(hidden) -> ReLU ->
Dense(1)). Write two functions.

1. `create_train_state(seed: int, d_in: int, learning_rate: float) -> TrainState`
   Initialise `MLP()` with `jax.random.key(seed)` on an example input of shape
   `(1, d_in)`, and return `TrainState.create(apply_fn=..., params=...,
   tx=optax.adam(learning_rate))`.

2. `train_step(state, x, y) -> (new_state, loss)`, compiled with `jax.jit`:
   - `x`: float32 `(batch, d_in)`; `y`: float32 `(batch,)` of 0/1.
   - Compute the logits with `state.apply_fn({"params": params}, x)` (use the
     state's `apply_fn`, not a global model), the mean binary cross-entropy with
     logits, its gradient with respect to the parameters, and return
     `state.apply_gradients(grads=grads)` and the loss (before the update).

What the checks do: create your state for a random input size, run your step
from parameters the check provides (one hidden unit never active, so its
weights must not move) and compare the new parameters and the loss with the
reference; run a few dozen steps and require the loss to fall; and
check that the step is compiled (traced once, then reused).
"""

from __future__ import annotations

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
    return TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(learning_rate))


@jax.jit
def train_step(state: TrainState, x, y):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, x).squeeze(-1)
        return optax.sigmoid_binary_cross_entropy(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss
