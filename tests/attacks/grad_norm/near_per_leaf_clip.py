"""Near miss: each leaf clipped to max_norm on its own instead of scaling the whole tree by one factor."""

import jax
import jax.numpy as jnp

MESSAGE = r"clip_by_global_norm"


def global_norm(tree):
    return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree.leaves(tree)))


def clip_by_global_norm(tree, max_norm):
    def clip(x):
        n = jnp.linalg.norm(x)
        return jnp.where(n > max_norm, x * max_norm / n, x)

    return jax.tree.map(clip, tree)
