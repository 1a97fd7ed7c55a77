"""Exercise: a compiled train step that compiles once per epoch, ragged batch included.

891 rows in batches of 32 are 27 full batches and one of 27 rows. A jitted step
traces and compiles once per input shape, so the short batch costs a second
compilation (PyTorch's eager loop does not care; `torch.compile` would
recompile too). Fix it by padding the last batch to full size and masking the
padded rows out of the loss: one compiled program, and the same result as the
ragged loop. Write four functions.

1. `masked_loss(model, x, y, mask) -> jax.Array`
   `x`: float32 `(batch, d_in)`; `y`, `mask`: float32 `(batch,)`, `mask` is 1 for
   real rows and 0 for padding. The mean binary cross-entropy with logits over
   the real rows only: `sum(bce * mask) / sum(mask)`. With an all-ones mask it is
   the usual mean.

2. `train_step(model, optimizer, x, y, mask) -> jax.Array`, decorated with
   `@nnx.jit` (the check lowers it with `train_step.lower(...)` for one batch
   shape): gradients of `masked_loss`, one `optimizer.update(model, grads)`,
   return the loss (before the update).

3. `make_batches(x, y, batch_size) -> list[tuple[x, y, mask]]`
   `x`: `(n, d_in)`, `y`: `(n,)`, NumPy float32. Cut the rows IN ORDER (no
   shuffling) into `ceil(n / batch_size)` batches. Every batch is
   `batch_size` rows long: pad a short last batch with zero rows (`x` and `y`)
   and give each batch its float32 `mask` (1.0 for real rows, 0.0 for padding).

4. `train_epoch(model, optimizer, x, y, batch_size) -> list[float]`
   Run `train_step` on each batch of `make_batches(x, y, batch_size)`; return
   the losses as a list of Python floats, one per batch.

The model is any NNX module mapping `(batch, d_in)` to logits `(batch, 1)`, and
the optimizer is an `nnx.Optimizer` the check builds (Adam).

What the checks do: check `make_batches` on random data whose size is not a
multiple of the batch size (every batch the same shape, rows in order, zero
padding, the right mask); lower your `train_step` for one batch shape and read
the compiled program's inputs; run four epochs of your `train_epoch` with a
model that records every time it is traced, and require one traced input shape
in the first epoch and no new trace or compilation after it (the CPU time your
process spends on epochs 2 to 4 is measured from outside it: a step compiled
again costs far more than one reused); compare the losses and final parameters
with a ragged, uncompiled reference loop (padding + mask must change nothing);
and compare `masked_loss` with the reference on random masks.
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


def make_batches(x, y, batch_size: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    # TODO: batches in order; pad the short last one with zero rows and build each mask.
    raise NotImplementedError("TODO: make_batches")


def train_epoch(model: nnx.Module, optimizer: nnx.Optimizer, x, y, batch_size: int) -> list[float]:
    # TODO: train_step on every batch of make_batches; the losses as Python floats.
    raise NotImplementedError("TODO: train_epoch")
