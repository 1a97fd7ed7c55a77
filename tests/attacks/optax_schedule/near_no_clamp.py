"""Near miss: the cosine is not held at 0 after total_steps, so the learning rate rises again."""
import jax.numpy as jnp, optax
def make_schedule(peak_lr, warmup_steps, total_steps):
    def schedule(step):
        t = (step - warmup_steps) / (total_steps - warmup_steps)
        return jnp.where(step < warmup_steps, peak_lr * step / warmup_steps, 0.5 * peak_lr * (1 + jnp.cos(jnp.pi * t)))
    return schedule
def make_tx(peak_lr, warmup_steps, total_steps, max_norm):
    return optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(make_schedule(peak_lr, warmup_steps, total_steps)))
MESSAGE = r"make_schedule.*at step \d+ \(under jax.jit\)"
