"""Exercise: a warm-up + cosine learning-rate schedule and an Optax chain.

PyTorch needs two extra objects and two extra calls per step:
    clip_grad_norm_(model.parameters(), max_norm)     # between backward and step
    scheduler = LambdaLR(optimizer, warmup_cosine)    # and scheduler.step()

In Optax both are part of the optimizer: a schedule is a function
`step -> learning rate`, and clipping is a gradient transformation you chain
before Adam. Write two functions.

1. `make_schedule(peak_lr: float, warmup_steps: int, total_steps: int)`
   returns a function `schedule(step) -> learning rate` with
   - for `0 <= step < warmup_steps`: `peak_lr * step / warmup_steps`
     (a linear warm-up from 0);
   - for `warmup_steps <= step <= total_steps`:
     `0.5 * peak_lr * (1 + cos(pi * (step - warmup_steps) / (total_steps - warmup_steps)))`
     (half a cosine from `peak_lr` down to 0);
   - for `step > total_steps`: 0.
   `step` may be a Python int or a JAX integer array (also a traced one, inside
   `jax.jit`): no Python `if` on it. `0 < warmup_steps < total_steps`.

2. `make_tx(peak_lr, warmup_steps, total_steps, max_norm) -> optax.GradientTransformation`
   Gradients are first clipped by global norm to `max_norm`, then given to
   Adam (Optax defaults for b1, b2, eps) whose learning rate follows your
   schedule, step 0 being the first update.

What the checks do: evaluate your schedule (inside `jax.jit`) at every step
from 0 to past `total_steps` for random settings and compare it with the
reference; then run your transformation for a few dozen steps on random
gradient trees, some with a norm far above `max_norm`, and compare every update
with the reference's.
"""

from __future__ import annotations

import jax.numpy as jnp
import optax


def make_schedule(peak_lr: float, warmup_steps: int, total_steps: int):
    # TODO: optax has this schedule ready-made; mind what its `decay_steps` means.
    raise NotImplementedError("TODO: make_schedule")


def make_tx(peak_lr: float, warmup_steps: int, total_steps: int, max_norm: float) -> optax.GradientTransformation:
    # TODO: optax.chain(first this, then that); the order matters.
    raise NotImplementedError("TODO: make_tx")
