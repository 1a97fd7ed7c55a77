"""Near miss: clip_by_norm takes the norm of each row (axis=-1), not of all of g."""
import jax.numpy as jnp
def clip_by_norm(g, max_norm):
    norm = jnp.linalg.norm(g, axis=-1, keepdims=True)
    return jnp.where(norm > max_norm, g * (max_norm / jnp.maximum(norm, 1e-12)), g)
def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta)))
MESSAGE = r"clip_by_norm.*shape \(\d+, \d+\).*values differ"
