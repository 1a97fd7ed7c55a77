"""Alternative: optax.huber_loss, a norm from jnp.vdot and a min(1, max_norm/norm) scale with a safe divisor."""
import jax, jax.numpy as jnp, optax
def clip_by_norm(g, max_norm):
    norm = jnp.sqrt(jnp.vdot(g, g))
    return g * jnp.minimum(1.0, max_norm / jnp.where(norm == 0, 1.0, norm))
@jax.jit
def huber_loss(pred, target, delta):
    return optax.huber_loss(pred, target, delta=delta).mean()
