"""Alternative: the schedule written with jnp.where and jnp.clip, the optimizer from scale_by_adam, scale_by_schedule and scale(-1)."""
import jax.numpy as jnp, optax
def make_schedule(peak_lr, warmup_steps, total_steps):
    def schedule(step):
        step = jnp.asarray(step, jnp.float32)
        warm = peak_lr * step / warmup_steps
        frac = jnp.clip((step - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
        cos = 0.5 * peak_lr * (1 + jnp.cos(jnp.pi * frac))
        return jnp.where(step < warmup_steps, warm, jnp.where(step > total_steps, 0.0, cos))
    return schedule
def make_tx(peak_lr, warmup_steps, total_steps, max_norm):
    return optax.chain(
        optax.clip_by_global_norm(max_norm),
        optax.scale_by_adam(),
        optax.scale_by_schedule(make_schedule(peak_lr, warmup_steps, total_steps)),
        optax.scale(-1.0),
    )
