"""Exercise: the whole training loop, on the Titanic data.

This is the article's experiment: the MLP 9 -> 64 -> 1 (given below), binary
cross-entropy on one logit, Adam, mini-batches of 32, shuffled every epoch.
Write two functions.

1. `evaluate(model, x, y) -> dict`
   - `x`: float32 `(n, 9)`; `y`: float32 `(n,)` of 0/1.
   - Return `{"loss": float, "accuracy": float}`: the mean binary cross-entropy
     with logits over all `n` rows, and the fraction of rows where `logit > 0`
     agrees with `y == 1`. Plain Python floats.
   PyTorch equivalent: a `torch.no_grad()` forward pass in `model.eval()` mode.

2. `train_titanic(x_train, y_train, *, epochs, batch_size=32,
                  learning_rate=1e-3, seed=0) -> (model, history, orders)`
   - Build `MLP(rngs=nnx.Rngs(seed))` and an Adam optimizer
     (`optax.adam(learning_rate)`: not SGD, not AdamW).
   - For each epoch: shuffle the rows (seeded from `seed`, a NEW permutation
     every epoch), cut the permutation into batches of `batch_size`
     (`order[start:start + batch_size]`; the last one may be shorter, or
     dropped), and run one training step per batch.
   - `history`: a list of `epochs` Python floats, the mean training loss of each
     epoch (the mean over that epoch's batches; not their sum).
   - `orders`: a list of `epochs` integer arrays, the permutation of row
     indices each epoch used.
   - Return the trained model, `history` and `orders`.
   PyTorch equivalent: the classic `for epoch ...: for xb, yb in loader: ...`.

Speed: an uncompiled NNX step takes tens of milliseconds; `nnx.jit` on the
train step (lesson 10's last loop) makes it many times faster (lesson 11's table has
the measured figures). Both pass.

What the checks do: call `train_titanic` on the training rows of a Titanic
split for 20 epochs (the held-out rows never reach your code); check that
`orders` are permutations, a new one every epoch; replay your training from
`MLP(rngs=nnx.Rngs(seed))` with Adam on the batches your orders give, and
require your returned parameters and `history` to agree with the replay;
measure the returned model's accuracy on the held-out rows, which must reach a
floor well above the 62% you get by always answering "did not survive"; run
two short trainings with one seed and one with the next, whose orders must
repeat, then change; and compare `evaluate` with the reference on a model of
the checks' own.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    """The article's Titanic model. Given: no need to change it."""

    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(jax.nn.relu(self.linear1(x)))


def evaluate(model: nnx.Module, x, y) -> dict:
    # TODO: one forward pass over all rows; loss and accuracy as Python floats.
    raise NotImplementedError("TODO: evaluate")


def train_titanic(x_train, y_train, *, epochs: int, batch_size: int = 32,
                  learning_rate: float = 1e-3, seed: int = 0):
    # TODO: model, optimizer, a (jitted) train step, and the epoch/batch loops.
    raise NotImplementedError("TODO: train_titanic")
