"""A whole training epoch fused into one lax.scan.

PyTorch equivalent (a Python loop; each step is launched from Python):
    for xb_i, yb_i in zip(xb, yb):
        loss = loss_fn(model, xb_i, yb_i)
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        losses.append(loss.item())

Your task: write

    scan_epoch(model, optimizer, xb, yb) -> losses

- `model`: an NNX model; `optimizer`: an `nnx.Optimizer(model, tx, wrt=nnx.Param)`.
- `xb`: float32 (n_batches, B, d); `yb`: float32 (n_batches, B): the epoch's
  batches, already stacked.
- For each i in order: compute `loss_fn(model, xb[i], yb[i])` and its
  gradient, then `optimizer.update(model, grads)`. Return the n_batches
  losses (float32, shape (n_batches,)), each taken before its own update.
- Afterwards `model` and `optimizer` hold the trained state, exactly as
  after the step-by-step loop (update them in place, e.g. with `nnx.update`).

The loop over batches must be a `jax.lax.scan` (or `nnx.scan`), so that the
compiled program does not grow with the number of batches: write one step
as `step(carry, batch) -> (carry, loss)` with the carry = the state of
(model, optimizer) from `nnx.split`, and merge it back inside the step.

What is checked: losses, parameters and the optimizer's step count against
the step-by-step loop, for several epoch lengths and batch sizes; and that
the program traced for 8 batches is no bigger than the one for 2.
"""

import jax
import optax
from flax import nnx


def loss_fn(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


def scan_epoch(model: nnx.Module, optimizer: nnx.Optimizer, xb: jax.Array, yb: jax.Array) -> jax.Array:
    # TODO: graphdef, state = nnx.split((model, optimizer)); a step function
    # that merges, takes one gradient step and returns (new state, loss);
    # jax.lax.scan it over (xb, yb); nnx.update the originals; return losses.
    raise NotImplementedError("TODO: scan_epoch with jax.lax.scan")
