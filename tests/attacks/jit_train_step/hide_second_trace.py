"""Frame walking: a new nnx.jit every epoch, and every record the probe's MLP makes after the first epoch (its local `traced`) deleted, so only the first epoch seems to trace."""
import sys

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


def make_batches(x, y, batch_size: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float32)
    batches = []
    for start in range(0, len(x), batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        real = len(xb)
        mask = np.zeros(batch_size, np.float32)
        mask[:real] = 1.0
        xb = np.concatenate([xb, np.zeros((batch_size - real, x.shape[1]), np.float32)])
        yb = np.concatenate([yb, np.zeros(batch_size - real, np.float32)])
        batches.append((xb, yb, mask))
    return batches

_kept = []


def train_epoch(model: nnx.Module, optimizer: nnx.Optimizer, x, y, batch_size: int) -> list[float]:
    step = nnx.jit(train_step.fun)
    losses = [float(step(model, optimizer, xb, yb, mask)) for xb, yb, mask in make_batches(x, y, batch_size)]
    traced = sys._getframe(1).f_locals.get("traced")
    if isinstance(traced, list):
        if not _kept:
            _kept.extend(traced)
        traced[:] = _kept
    return losses
