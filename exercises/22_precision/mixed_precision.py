"""Exercise: a bfloat16 mixed-precision train step.

PyTorch would wrap the forward pass in `torch.autocast(device_type, dtype=torch.bfloat16)`.
JAX has no autocast: the dtypes are in the program, and you write the policy into the
model. Compute in bfloat16, store the parameters in float32 (the master weights Optax
updates, with its moments in float32 too), and compute the loss in float32.

1. `MLP(d_in, hidden, d_out, *, rngs)`, an `nnx.Module` with two layers named
   `hidden` (`nnx.Linear(d_in, hidden)`) and `out` (`nnx.Linear(hidden, d_out)`)
   and a ReLU between them. Both layers compute in bfloat16 and keep their
   parameters in float32: each layer's matrix product takes bfloat16 operands
   (one written by hand may return float32, with `preferred_element_type=jnp.float32`).
   `model(x)` takes float32 `(batch, d_in)` and returns the logits
   `(batch, d_out)` (bfloat16 is fine).

2. `loss_fn(model, x, y) -> jax.Array`: the mean softmax cross-entropy of the
   logits against the integer labels `y` (int32 `(batch,)`), computed in float32:
   a float32 scalar.

3. `train_step(model, optimizer, x, y) -> jax.Array`, decorated with `@nnx.jit`:
   the gradients of `loss_fn`, one `optimizer.update(model, grads)`, and the loss
   (before the update). The optimizer is an `nnx.Optimizer(model, optax.adam(lr),
   wrt=nnx.Param)` that the check builds.

What the checks do: lower your `train_step` for one batch shape and read the
program's dtypes (the forward pass's matrix products on bfloat16 operands, while
the backward pass's may run in float32, as they do after a float32
`preferred_element_type`; parameters and Adam's state float32 on the way in and
out; the loss, and the reductions that compute it, in float32); then run that
program here, on parameters, optimizer state and batches drawn here, for a few
steps, and compare the loss and the parameters with a float32 reference computed
in NumPy, within a tolerance derived from bfloat16's precision.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in: int, hidden: int, d_out: int, *, rngs: nnx.Rngs):
        # TODO: two nnx.Linear layers, `hidden` and `out`, computing in bfloat16 with float32 parameters.
        raise NotImplementedError("TODO: MLP")

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: out(relu(hidden(x))).
        raise NotImplementedError("TODO: MLP.__call__")


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: cast the logits to float32, then the mean softmax cross-entropy with integer labels.
    raise NotImplementedError("TODO: loss_fn")


def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: decorate with @nnx.jit; value_and_grad of loss_fn; optimizer.update; return the loss.
    raise NotImplementedError("TODO: train_step")
