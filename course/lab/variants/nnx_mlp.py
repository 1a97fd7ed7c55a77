"""Flax NNX: one model, four ways to run its training step.

- `train_eager`: the article's first loop, no jit; every operation is dispatched
  from Python one at a time. Fed by the DataLoader with a NumPy `collate_fn`.
- `train_nnx_jit`: the same step under `@nnx.jit`. NNX walks the model and
  optimizer graph in Python on every call to split and merge their state: on a
  model this small that traversal is most of the time per step.
- `train_tree`: the same step in NNX's tree mode, `nnx.jit_partial(step, model,
  optimizer, graph=False)`: the model and optimizer are flattened into a list of
  Variables once, when the step is built; each call passes that list as a plain
  pytree (no graph walk) and writes the new values back into the same Variables.
  Their buffers are donated, as `train_split_merge` donates its state.
- `train_split_merge`: split the graph once, `jax.jit` a pure function of
  `(graphdef, state)`, merge inside the trace. No per-step graph walk.

The jitted steps add their loss to a running sum they are handed back, so an
epoch's mean loss is one device-to-host read, not 27 (see `linen_mlp`).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from course.lab.context import TrainContext
from course.lab.torch_data import make_loader


class MLP(nnx.Module):
    def __init__(self, n_in: int, hidden: int, *, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(n_in, hidden, rngs=rngs)
        self.out = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.out(nnx.relu(self.hidden(x))).squeeze(-1)


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    return optax.sigmoid_binary_cross_entropy(model(x), y).mean()


def _setup(ctx: TrainContext) -> tuple[MLP, nnx.Optimizer]:
    model = MLP(ctx.split.x_train.shape[1], ctx.hidden, rngs=nnx.Rngs(params=ctx.seed))
    # One Optax transform per run: a new one per step would be a new static part
    # of the optimizer's graph and retrace every jitted step.
    optimizer = nnx.Optimizer(model, optax.adam(ctx.learning_rate), wrt=nnx.Param)
    return model, optimizer


def _eager_step(model: MLP, optimizer: nnx.Optimizer, x, y) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


@nnx.jit
def _jit_step(model: MLP, optimizer: nnx.Optimizer, loss_sum: jax.Array, x, y) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss_sum + loss


def _tree_step(model: MLP, optimizer: nnx.Optimizer, loss_sum: jax.Array, x, y) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss_sum + loss


@partial(jax.jit, donate_argnums=1)
def _pure_step(graphdef: nnx.GraphDef, state: nnx.State, loss_sum: jax.Array, x, y) -> tuple[nnx.State, jax.Array]:
    model, optimizer = nnx.merge(graphdef, state)
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return nnx.state((model, optimizer)), loss_sum + loss


def _predict(model: MLP, x: np.ndarray) -> np.ndarray:
    return np.asarray(nnx.jit(lambda m, x: m(x))(model, x))


def _epoch_loss(losses: list[jax.Array]) -> float:
    # Eager only: its step costs ~30 ms, so reading 27 losses at the end of an epoch is noise there.
    return float(np.mean(jax.device_get(losses)))


def train_eager(ctx: TrainContext) -> np.ndarray:
    ctx.start()
    model, optimizer = _setup(ctx)
    loader = make_loader(ctx.split, ctx.batch_size, shuffle=True, seed=ctx.seed)
    ctx.mark_ready()
    for epoch in range(ctx.epochs):
        losses = []
        for x, y in ctx.loader_batches(loader):
            losses.append(_eager_step(model, optimizer, x, y))
            if ctx.timing.compiled is None:
                ctx.mark_compiled(lambda: jax.block_until_ready(losses))
        ctx.end_epoch(epoch, _epoch_loss(losses))
    ctx.mark_done(lambda: jax.block_until_ready(nnx.state(model)))
    return _predict(model, ctx.split.x_test)


def train_nnx_jit(ctx: TrainContext) -> np.ndarray:
    ctx.start()
    model, optimizer = _setup(ctx)
    rng = np.random.default_rng(ctx.seed)
    zero = jnp.zeros((), jnp.float32)
    ctx.mark_ready()
    for epoch in range(ctx.epochs):
        loss_sum = zero
        for x, y in ctx.numpy_batches(rng):
            loss_sum = _jit_step(model, optimizer, loss_sum, x, y)
            if ctx.timing.compiled is None:
                ctx.mark_compiled(lambda: jax.block_until_ready(loss_sum))
        ctx.end_epoch(epoch, float(loss_sum) / ctx.steps_per_epoch)
    ctx.mark_done(lambda: jax.block_until_ready(nnx.state(model)))
    return _predict(model, ctx.split.x_test)


def train_tree(ctx: TrainContext) -> np.ndarray:
    ctx.start()
    model, optimizer = _setup(ctx)
    # Argument 0 of the compiled function is the flat list of bound Variables' values.
    step = nnx.jit_partial(_tree_step, model, optimizer, graph=False, donate_argnums=0)
    rng = np.random.default_rng(ctx.seed)
    zero = jnp.zeros((), jnp.float32)
    ctx.mark_ready()
    for epoch in range(ctx.epochs):
        loss_sum = zero
        for x, y in ctx.numpy_batches(rng):
            loss_sum = step(loss_sum, x, y)
            if ctx.timing.compiled is None:
                ctx.mark_compiled(lambda: jax.block_until_ready(loss_sum))
        ctx.end_epoch(epoch, float(loss_sum) / ctx.steps_per_epoch)
    ctx.mark_done(lambda: jax.block_until_ready(nnx.state(model)))
    return _predict(model, ctx.split.x_test)


def train_split_merge(ctx: TrainContext) -> np.ndarray:
    ctx.start()
    model, optimizer = _setup(ctx)
    graphdef, state = nnx.split((model, optimizer))
    rng = np.random.default_rng(ctx.seed)
    zero = jnp.zeros((), jnp.float32)
    ctx.mark_ready()
    for epoch in range(ctx.epochs):
        loss_sum = zero
        for x, y in ctx.numpy_batches(rng):
            state, loss_sum = _pure_step(graphdef, state, loss_sum, x, y)
            if ctx.timing.compiled is None:
                ctx.mark_compiled(lambda: jax.block_until_ready(loss_sum))
        ctx.end_epoch(epoch, float(loss_sum) / ctx.steps_per_epoch)
    ctx.mark_done(lambda: jax.block_until_ready(state))
    nnx.update((model, optimizer), state)
    return _predict(model, ctx.split.x_test)
