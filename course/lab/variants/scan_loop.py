"""The whole training loop compiled: `lax.scan` over the batches of an epoch and over epochs.

The data sits on the device, each epoch's shuffle is one `jax.random.permutation`
with that epoch's key, and Python only calls one compiled function. It is called
once per chunk of epochs (the largest divisor of the epoch count up to
`MAX_CHUNK`), not once for the whole run: XLA cannot be interrupted mid-call, so
chunks are what lets progress show and Stop work. The chunk is a static length,
so every call reuses the one compilation.

Two things keep the chunks from costing time (measured on a busy 2-core CPU,
`benchmarks/train_variants.py` compares with a single-call loop):

- the next chunk is dispatched before the last one's losses are read, so the
  device never waits for Python, nor Python's wake-up for the device;
- the epoch keys are split once for the whole run, outside the loop, instead of
  `fold_in` per epoch: on CPU each threefry hash is a small XLA while loop of its
  own, run once more per epoch.
"""

from __future__ import annotations

from functools import partial

import jax
import numpy as np
import optax
from flax import nnx

from course.lab.context import TrainContext
from course.lab.variants.nnx_mlp import MLP

MAX_CHUNK = 100


def chunk_size(epochs: int, limit: int = MAX_CHUNK) -> int:
    return next(c for c in range(min(epochs, limit), 0, -1) if epochs % c == 0)


def make_train_chunk(graphdef: nnx.GraphDef, tx: optax.GradientTransformation, steps: int, batch_size: int):
    def loss_fn(params, x, y):
        return optax.sigmoid_binary_cross_entropy(nnx.merge(graphdef, params)(x), y).mean()

    def one_epoch(carry, key, x_all, y_all):
        # The ragged remainder is dropped, as in every variant (same batches, same steps).
        order = jax.random.permutation(key, y_all.shape[0])[: steps * batch_size]
        # One gather per epoch, then the inner scan slices batches (cheaper than a gather per step).
        xs = x_all[order].reshape(steps, batch_size, -1)
        ys = y_all[order].reshape(steps, batch_size)

        def one_step(carry, batch):
            params, opt_state = carry
            loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
            updates, opt_state = tx.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), loss

        carry, losses = jax.lax.scan(one_step, carry, (xs, ys))
        return carry, losses.mean()

    @partial(jax.jit, donate_argnums=(0, 1))
    def train_chunk(params, opt_state, x_all, y_all, keys):
        body = partial(one_epoch, x_all=x_all, y_all=y_all)
        (params, opt_state), losses = jax.lax.scan(body, (params, opt_state), keys)
        return params, opt_state, losses

    return train_chunk


def train(ctx: TrainContext) -> np.ndarray:
    ctx.start()
    model = MLP(ctx.split.x_train.shape[1], ctx.hidden, rngs=nnx.Rngs(params=ctx.seed))
    graphdef, params = nnx.split(model)
    tx = optax.adam(ctx.learning_rate)
    opt_state = tx.init(params)
    x_all, y_all = jax.device_put(ctx.split.x_train), jax.device_put(ctx.split.y_train)
    # At most a round's epochs per chunk: a turn ends only between chunks (see below).
    chunk = chunk_size(ctx.epochs, min(MAX_CHUNK, ctx.round_epochs))
    # One key per epoch, shaped (chunks, chunk): chunk i is a view, not a new split.
    keys = jax.random.split(jax.random.key(ctx.seed), ctx.epochs).reshape(ctx.epochs // chunk, chunk)
    train_chunk = make_train_chunk(graphdef, tx, ctx.steps_per_epoch, ctx.batch_size)
    ctx.mark_ready()
    # Compile ahead of time so that compile time is measured apart from running.
    compiled = train_chunk.lower(params, opt_state, x_all, y_all, keys[0]).compile()
    ctx.mark_compiled()
    pending = None
    for i in range(len(keys)):
        ctx.check_cancel()
        params, opt_state, losses = compiled(params, opt_state, x_all, y_all, keys[i])
        ctx.count_steps(chunk * ctx.steps_per_epoch)
        if pending is not None:
            _report(ctx, *pending, can_pass=False)  # the chunk before, while this one runs
        pending = (i * chunk, losses)
        if i + 1 < len(keys) and ctx.turn_due(ahead=chunk):
            # Nothing may run on the device in another variant's turn: drain, then hand over.
            _report(ctx, *pending)
            pending = None
    if pending is not None:
        _report(ctx, *pending)
    ctx.mark_done(lambda: jax.block_until_ready(params))
    nnx.update(model, params)
    return np.asarray(jax.jit(lambda p, x: nnx.merge(graphdef, p)(x))(params, ctx.split.x_test))


def _report(ctx: TrainContext, first: int, losses: jax.Array, *, can_pass: bool = True) -> None:
    values = np.asarray(losses)
    for i, loss in enumerate(values):
        ctx.end_epoch(first + i, loss, can_pass=can_pass and i == len(values) - 1)
