"""Exercise: an Adam optimizer and one training step, the NNX way.

PyTorch:
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        loss = nn.BCEWithLogitsLoss()(model(x).squeeze(-1), y)
        loss.backward()
        optimizer.step()
        return loss

Write the same two things for Flax NNX and Optax.

1. `make_optimizer(model, learning_rate: float) -> nnx.Optimizer`
   Adam with the given learning rate (Optax defaults for b1, b2, eps), training
   the model's `nnx.Param` variables.

2. `train_step(model, optimizer, x, y) -> jax.Array`
   - `model`: any NNX module that maps `x` of shape `(batch, d_in)` to logits of
     shape `(batch, 1)` (the checks use the course's MLP, of varied sizes).
   - `x`: float32 `(batch, d_in)`; `y`: float32 `(batch,)` of 0/1.
   - Compute the mean binary cross-entropy with logits, its gradients, and
     apply ONE optimizer update to the model (in place). Return the loss as a
     float32 scalar: the loss BEFORE the update, like PyTorch's `loss`.

What the checks do: build an MLP of random size and seed, call your
`make_optimizer`, run several of your `train_step`s on random batches, and
compare every returned loss and the final parameters with the reference,
step for step (so the optimizer must be Adam with that learning rate, and
each step must apply exactly one update).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model: nnx.Module, learning_rate: float) -> nnx.Optimizer:
    # TODO: nnx.Optimizer over optax.adam; remember `wrt`.
    raise NotImplementedError("TODO: make_optimizer")


def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: loss and grads with nnx.value_and_grad, then optimizer.update(model, grads).
    raise NotImplementedError("TODO: train_step")
