"""Alternative: pads the short batch with np.zeros (float64), so the last x/y batch is float64; JAX (x64 off) runs it as float32 in the same program."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


def masked_loss(model: nnx.Module, x, y, mask) -> jax.Array:
    per_row = optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y)
    return jnp.sum(per_row * mask) / jnp.sum(mask)


@nnx.jit
def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x, y, mask) -> jax.Array:
    loss, grads = nnx.value_and_grad(masked_loss)(model, x, y, mask)
    optimizer.update(model, grads)
    return loss


def make_batches(x, y, batch_size: int):
    batches = []
    for start in range(0, len(x), batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        real = len(xb)
        pad = batch_size - real
        mask = np.concatenate([np.ones(real, np.float32), np.zeros(pad, np.float32)])
        if pad:
            xb = np.concatenate([xb, np.zeros((pad, x.shape[1]))])
            yb = np.concatenate([yb, np.zeros(pad)])
        batches.append((xb, yb, mask))
    return batches


def train_epoch(model: nnx.Module, optimizer: nnx.Optimizer, x, y, batch_size: int) -> list[float]:
    losses = [train_step(model, optimizer, xb, yb, mask) for xb, yb, mask in make_batches(x, y, batch_size)]
    return [float(loss) for loss in losses]
