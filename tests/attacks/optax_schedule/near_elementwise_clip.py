"""Near miss: optax.clip (each element clipped to [-max_norm, max_norm]) instead of clipping by the global norm."""
import optax
def make_schedule(peak_lr, warmup_steps, total_steps):
    return optax.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps, total_steps, 0.0)
def make_tx(peak_lr, warmup_steps, total_steps, max_norm):
    return optax.chain(optax.clip(max_norm), optax.adam(make_schedule(peak_lr, warmup_steps, total_steps)))
MESSAGE = r"the updates at step"
