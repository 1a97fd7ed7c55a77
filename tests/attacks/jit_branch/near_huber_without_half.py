"""Near miss: huber_loss's quadratic branch is r**2 without the 0.5 (the linear branch is right), which only shows where |r| < delta."""
import jax.numpy as jnp
def clip_by_norm(g, max_norm):
    norm = jnp.linalg.norm(g)
    return jnp.where(norm > max_norm, g * (max_norm / jnp.maximum(norm, 1e-12)), g)
def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r < delta, r**2, delta * (r - 0.5 * delta)))
MESSAGE = r"huber_loss.*F\.huber_loss.*values differ"
