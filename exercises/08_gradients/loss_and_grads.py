"""Exercise: the loss of the Titanic MLP and its gradients.

PyTorch computes gradients as a side effect (`loss.backward()` fills `p.grad`).
In JAX you transform the loss *function* and get the gradients back as a value.

The model is given: `MLP(d_in, hidden, rngs=...)`, Linear -> ReLU -> Linear,
returning one logit per row, shape `(batch, 1)`. Write two functions.

1. `loss_fn(model, x, y) -> (loss, accuracy)`
   - `x`: float32 array `(batch, d_in)`; `y`: float32 array `(batch,)` of 0/1.
   - `loss`: the mean binary cross-entropy of the logits against `y`, a float32
     scalar (PyTorch: `nn.BCEWithLogitsLoss()(model(x).squeeze(-1), y)`).
   - `accuracy`: the fraction of rows where `logit > 0` agrees with `y == 1`,
     a float32 scalar.
   Mind the shapes: the model returns `(batch, 1)`, the labels are `(batch,)`.

2. `loss_and_grads(model, x, y) -> (loss, accuracy, grads)`
   - the same `loss` and `accuracy`, plus the gradient of `loss` with respect to
     the model's parameters (`nnx.Param`), structured like the model, e.g.
     `grads["linear1"]["kernel"]` has the shape of `model.linear1.kernel`.
   - Compute loss, accuracy and gradients in one forward pass (accuracy rides
     along as an auxiliary output). Do not change the model's parameters.
   PyTorch equivalent:
       model.zero_grad(); loss = ...; loss.backward()
       grads = {name: p.grad for name, p in model.named_parameters()}

What the checks do: build an MLP with parameters drawn at check time, call your
functions on random data, and compare loss, accuracy (both float32 scalars) and
every gradient with values the check computes itself in float64, on a tiny model
too; and check that the model is unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    """The course's Titanic model (lesson 6). Given: no need to change it."""

    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(jax.nn.relu(self.linear1(x)))


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    # TODO: logits of shape (batch,), mean binary cross-entropy with logits
    # (optax has it), and the accuracy of `logits > 0` against the labels.
    raise NotImplementedError("TODO: loss_fn")


def loss_and_grads(model: MLP, x: jax.Array, y: jax.Array):
    # TODO: one call of nnx.value_and_grad(loss_fn, has_aux=True).
    raise NotImplementedError("TODO: loss_and_grads")
