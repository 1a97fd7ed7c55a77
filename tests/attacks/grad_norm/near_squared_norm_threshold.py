"""Near miss: clipping decided by comparing the sum of squares, not its root, with max_norm, so a norm between max_norm and its square (or under 1, between the square and max_norm) is clipped wrongly."""

import jax
import jax.numpy as jnp

MESSAGE = r"clip_by_global_norm"


def global_norm(tree):
    return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree.leaves(tree)))


def clip_by_global_norm(tree, max_norm):
    squares = sum(jnp.sum(jnp.square(x)) for x in jax.tree.leaves(tree))
    scale = jnp.where(squares > max_norm, max_norm / jnp.sqrt(squares), 1.0)
    return jax.tree.map(lambda x: x * scale, tree)
