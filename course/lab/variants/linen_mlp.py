"""Flax Linen: the same MLP as a pure `init`/`apply` pair, a `TrainState`, a `jax.jit` step.

Linen has no object graph to walk at call time: the jitted step takes and returns
plain pytrees, which is why it is the fastest per-step variant on a tiny model.
"""

from __future__ import annotations

from functools import partial

import flax.linen as nn
import jax
import numpy as np
import optax
from flax.training.train_state import TrainState

from course.lab.context import TrainContext


class MLP(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x))).squeeze(-1)


@partial(jax.jit, donate_argnums=0)
def _step(state: TrainState, x, y) -> tuple[TrainState, jax.Array]:
    def loss_fn(params):
        return optax.sigmoid_binary_cross_entropy(state.apply_fn({"params": params}, x), y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def train(ctx: TrainContext) -> np.ndarray:
    ctx.start()
    model = MLP(ctx.hidden)
    params = model.init(jax.random.key(ctx.seed), ctx.split.x_train[:1])["params"]
    state = TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(ctx.learning_rate))
    rng = np.random.default_rng(ctx.seed)
    ctx.mark_ready()
    for epoch in range(ctx.epochs):
        losses = []
        for x, y in ctx.numpy_batches(rng):
            state, loss = _step(state, x, y)
            losses.append(loss)
            if ctx.timing.compiled is None:
                ctx.mark_compiled(lambda: jax.block_until_ready(losses))
        ctx.end_epoch(epoch, float(np.mean(jax.device_get(losses))))
    ctx.mark_done(lambda: jax.block_until_ready(state))
    return np.asarray(jax.jit(model.apply)({"params": state.params}, ctx.split.x_test))
