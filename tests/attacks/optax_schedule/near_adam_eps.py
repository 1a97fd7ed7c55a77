"""Near miss: Adam with eps=1e-6 (a Keras-style setting) instead of Optax's default 1e-8."""
import optax
def make_schedule(peak_lr, warmup_steps, total_steps):
    return optax.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps, total_steps, 0.0)
def make_tx(peak_lr, warmup_steps, total_steps, max_norm):
    return optax.chain(optax.clip_by_global_norm(max_norm), optax.adam(make_schedule(peak_lr, warmup_steps, total_steps), eps=1e-6))
MESSAGE = r"updates at step \d+\['tiny'\]"
