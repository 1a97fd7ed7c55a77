"""Near miss: the chain uses the peak learning rate as a constant instead of the schedule."""

MESSAGE = r"the updates at step"

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
    return optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(peak_lr))
