"""Alternative: ravel_pytree to one vector, jnp.linalg.norm, and unravel of the scaled vector; jitted norm."""
import jax, jax.numpy as jnp
from jax.flatten_util import ravel_pytree
@jax.jit
def global_norm(tree):
    flat, _ = ravel_pytree(tree)
    return jnp.linalg.norm(flat)
def clip_by_global_norm(tree, max_norm):
    flat, unravel = ravel_pytree(tree)
    n = jnp.linalg.norm(flat)
    return unravel(flat * jnp.where(n > max_norm, max_norm / n, 1.0))
