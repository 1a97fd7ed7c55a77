"""Near miss: the scan result is never written back into the model and optimizer (no nnx.update)."""

MESSAGE = r"parameters afterwards|optimizer.step"

import jax
import optax
from flax import nnx


def loss_fn(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


def scan_epoch(model: nnx.Module, optimizer: nnx.Optimizer, xb: jax.Array, yb: jax.Array) -> jax.Array:
    graphdef, state = nnx.split((model, optimizer))

    def step(state, batch):
        m, opt = nnx.merge(graphdef, state)
        x, y = batch
        loss, grads = nnx.value_and_grad(loss_fn)(m, x, y)
        opt.update(m, grads)
        return nnx.state((m, opt)), loss

    state, losses = jax.lax.scan(step, state, (xb, yb))
    return losses
