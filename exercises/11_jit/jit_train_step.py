"""Exercise: a compiled train step that compiles once per epoch, ragged batch included.

891 rows in batches of 32 are 27 full batches and one of 27 rows. A jitted step
traces and compiles once per input shape, so the short batch costs a second
compilation (PyTorch's eager loop does not care; `torch.compile` would
recompile too). Fix it by padding the last batch to full size and masking the
padded rows out of the loss: one compiled program, and the same result as the
ragged loop. Write three functions.

1. `masked_loss(model, x, y, mask) -> jax.Array`
   `x`: float32 `(batch, d_in)`; `y`, `mask`: float32 `(batch,)`, `mask` is 1 for
   real rows and 0 for padding. The mean binary cross-entropy with logits over
   the real rows only: `sum(bce * mask) / sum(mask)`. With an all-ones mask it is
   the usual mean.

2. `train_step(model, optimizer, x, y, mask) -> jax.Array`, compiled with
   `nnx.jit` (or any other compiled form): gradients of `masked_loss`, one
   `optimizer.update(model, grads)`, return the loss (before the update).

3. `train_epoch(model, optimizer, x, y, batch_size) -> list[float]`
   `x`: `(n, d_in)`, `y`: `(n,)`, NumPy float32. Cut the rows IN ORDER (no
   shuffling) into batches of `batch_size`; if the last batch is short, pad it
   with zero rows to `batch_size` and mask the padding. Run `train_step` on each
   batch; return the losses as a list of Python floats, one per batch
   (`ceil(n / batch_size)` of them).

The model is any NNX module mapping `(batch, d_in)` to logits `(batch, 1)`, and
the optimizer is an `nnx.Optimizer` the check builds (Adam).

What the checks do: run two epochs of your `train_epoch` on random data whose
size is not a multiple of the batch size, with a model that records every time
it is traced, and require exactly one traced input shape and no new trace in
the second epoch; compare the losses and final parameters with a ragged,
uncompiled reference loop (padding + mask must change nothing); and compare
`masked_loss` with the reference on random masks.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


def masked_loss(model: nnx.Module, x, y, mask) -> jax.Array:
    # TODO: per-row binary cross-entropy, weighted by mask, divided by sum(mask).
    raise NotImplementedError("TODO: masked_loss")


def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x, y, mask) -> jax.Array:
    # TODO: decorate with @nnx.jit; value_and_grad of masked_loss; optimizer.update.
    raise NotImplementedError("TODO: train_step")


def train_epoch(model: nnx.Module, optimizer: nnx.Optimizer, x, y, batch_size: int) -> list[float]:
    # TODO: batches in order; pad the short last one and build its mask.
    raise NotImplementedError("TODO: train_epoch")
