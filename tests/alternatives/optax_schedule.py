"""optax_schedule written by hand: the schedule as jnp.where over the two
phases, and Adam spelled out as scale_by_adam followed by a scale-by-schedule."""

from __future__ import annotations

import jax.numpy as jnp
import optax


def make_schedule(peak_lr, warmup_steps, total_steps):
    def schedule(step):
        step = jnp.asarray(step, dtype=jnp.float32)
        warm = peak_lr * step / warmup_steps
        progress = jnp.clip((step - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
        cosine = 0.5 * peak_lr * (1.0 + jnp.cos(jnp.pi * progress))
        return jnp.where(step < warmup_steps, warm, cosine)

    return schedule


def make_tx(peak_lr, warmup_steps, total_steps, max_norm):
    schedule = make_schedule(peak_lr, warmup_steps, total_steps)
    return optax.chain(
        optax.clip_by_global_norm(max_norm),
        optax.scale_by_adam(),
        optax.scale_by_schedule(lambda count: -schedule(count)),
    )
